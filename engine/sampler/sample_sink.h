#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace emberline::engine {

// One stack sample as the kernel delivered it, before unwinding. Spans point into the sampler's buffer and
// are valid only during the callback.
struct RawSample {
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint64_t timeNs = 0;               // CLOCK_MONOTONIC
    uint64_t period = 0;               // cpu-clock: nanoseconds of CPU this sample stands for
    uint64_t ip = 0;
    bool inKernel = false;             // the thread was in the kernel; regs/stack are its user state
    std::span<const uint64_t> regs;    // user registers in kPerfRegsMask order, empty if unavailable
    std::span<const uint8_t> stack;    // copy of the user stack from regs[SP]
};

// What a sampler reports, on the thread that drains it. The sampler stage talks to the rest of the pipeline
// only through this interface, so a test can feed a recorder without a kernel.
class SampleSink {
public:
    virtual ~SampleSink() = default;
    virtual void onSample(const RawSample &sample) = 0;
    virtual void onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable,
                        std::string_view path) = 0;
    virtual void onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec) = 0;
    virtual void onFork(uint32_t pid, uint32_t ppid, uint32_t tid) = 0;
    virtual void onExit(uint32_t pid, uint32_t tid) = 0;
    virtual void onLost(uint64_t count) = 0;
};

} // namespace emberline::engine
