#pragma once

#include "engine/model/thread_state.h"
#include "engine/unwind/walked_stack.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace emberline::engine {

// One stack sample as a sampler delivered it, before unwinding. Spans point into the sampler's buffer and
// are valid only during the callback.
struct RawSample {
    enum class Kind : uint8_t {
        Cpu,       // perf cpu-clock: the thread was on a CPU; `period` ns of CPU
        SwitchOut, // perf context switch: the thread is leaving the CPU; its off-CPU time is known at switch-in
        Periodic,  // ptrace: every thread, every interval; cpu and wall deltas given
        Wait,      // in-process: time a thread spent off a CPU (wallNs), waiting or runnable; not a CPU sample
    };
    Kind kind = Kind::Cpu;
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint64_t timeNs = 0; // CLOCK_MONOTONIC
    uint64_t period = 0; // nanoseconds of CPU this sample stands for
    uint64_t wallNs = 0; // Periodic: nanoseconds of wall time since the thread's previous sample
    ThreadState state = ThreadState::Running;
    uint64_t ip = 0;
    bool inKernel = false;          // the thread was in the kernel; regs/stack are its user state
    bool sameStack = false;         // Periodic, Wait: the thread has not run since its previous sample,
                                    // whose stack this one repeats (regs and stack are empty)
    std::span<const uint64_t> regs; // user registers in kPerfRegsMask order, empty if unavailable
    std::span<const uint8_t> stack; // copy of the user stack from regs[SP]
    uint32_t stackLimit = 0;        // the copy asked for this sample: a shorter `stack` reached the end of
                                    // the thread's stack (0: not known)
    WalkedStack walked;      // the agent's walk: the stack itself when `regs` is empty, a check of its unwind when not
    PythonFramesView python; // the agent's: the Python frames the thread ran
    std::span<const uint64_t> kernelStack; // Cpu in the kernel: the kernel's own callchain, leaf first (empty
                                           // when kernel frames are not named)
};

// What a sampler reports, on the thread that drains it. The sampler stage talks to the rest of the pipeline
// only through this interface, so a test can feed a recorder without a kernel.
class SampleSink {
public:
    virtual ~SampleSink() = default;
    virtual void onSample(const RawSample &sample) = 0;
    // `inode` as the kernel reports the mapped file (0 when not known): a file replaced on disk since is told
    // from the one the process mapped.
    virtual void onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable, uint64_t inode,
                        std::string_view path) = 0;
    virtual void onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec) = 0;
    // When process `pid` took a new program image (CLOCK_MONOTONIC), where the sampler knows it (perf's COMM
    // record): said just before its onComm(exec).
    virtual void onExecTime(uint32_t pid, uint64_t timeNs) { (void)pid, (void)timeNs; }
    virtual void onFork(uint32_t pid, uint32_t ppid, uint32_t tid) = 0;
    virtual void onExit(uint32_t pid, uint32_t tid) = 0;
    virtual void onLost(uint64_t count) = 0;
    // A thread left (out) or came back to (in) a CPU; `preempted` when it left while still runnable.
    virtual void onSwitch(uint32_t pid, uint32_t tid, uint64_t timeNs, bool out, bool preempted)
    {
        (void)pid, (void)tid, (void)timeNs, (void)out, (void)preempted;
    }
};

} // namespace emberline::engine
