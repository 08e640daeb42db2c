#pragma once

// Samples of the test process itself, made without perf events or ptrace: the calling thread's registers
// (getcontext) and a copy of its stack, in the form the perf sampler delivers them (RawSample, registers in
// kPerfRegsMask order). Fed to the real pipeline, they are unwound with the test binary's own unwind tables and
// symbolized from its own debug information, so the frames they must produce are known.

#include "engine/sampler/sample_sink.h"
#include "engine/sampler/sampler.h"
#include "engine/unwind/unwinder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace emberline::test {

// A captured sample with its own storage (RawSample's spans point into it).
struct OwnSample {
    std::vector<uint64_t> regs;
    std::vector<uint8_t> stack;
    engine::RawSample raw;

    engine::RawSample view() const
    {
        engine::RawSample s = raw;
        s.regs = regs;
        s.stack = stack;
        return s;
    }
};

// Copies `bytes` of the thread's own stack from `from` whole, as the kernel copies a sampled thread's stack. Under
// AddressSanitizer the stack holds poisoned redzones between variables, which such a copy reads by design: it is
// made without the sanitizer's checks, byte by byte through a volatile pointer so that the compiler does not
// turn it into a (checked) memcpy call.
__attribute__((no_sanitize_address)) inline void copyOwnStack(uint8_t *to, uint64_t from, size_t bytes)
{
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the stack pointer comes as a register value.
    const volatile uint8_t *source = reinterpret_cast<const volatile uint8_t *>(from);
    for (size_t i = 0; i < bytes; ++i)
        to[i] = source[i];
}

// Captures the calling thread as the perf sampler would see it, at this call's return address.
__attribute__((noinline)) inline OwnSample captureOwnStack(uint64_t periodNs = 1'000'000)
{
    ucontext_t uc;
    getcontext(&uc);
    const greg_t *g = uc.uc_mcontext.gregs;
    OwnSample out;
    out.regs.assign(engine::RegCount, 0);
    const std::pair<int, int> map[] = {{engine::RegAX, REG_RAX},  {engine::RegBX, REG_RBX},  {engine::RegCX, REG_RCX},
                                       {engine::RegDX, REG_RDX},  {engine::RegSI, REG_RSI},  {engine::RegDI, REG_RDI},
                                       {engine::RegBP, REG_RBP},  {engine::RegSP, REG_RSP},  {engine::RegIP, REG_RIP},
                                       {engine::RegR8, REG_R8},   {engine::RegR9, REG_R9},   {engine::RegR10, REG_R10},
                                       {engine::RegR11, REG_R11}, {engine::RegR12, REG_R12}, {engine::RegR13, REG_R13},
                                       {engine::RegR14, REG_R14}, {engine::RegR15, REG_R15}};
    for (auto [perf, greg] : map)
        out.regs[perf] = static_cast<uint64_t>(g[greg]);
    // The stack from SP up to the thread's stack end (at most 32 KiB, as the perf sampler copies by default).
    pthread_attr_t attr;
    pthread_getattr_np(pthread_self(), &attr);
    void *base = nullptr;
    size_t size = 0;
    pthread_attr_getstack(&attr, &base, &size);
    pthread_attr_destroy(&attr);
    const uint64_t sp = out.regs[engine::RegSP];
    const uint64_t top = reinterpret_cast<uint64_t>(base) + size;
    const size_t bytes = std::min<uint64_t>(32768, top - sp);
    out.stack.resize(bytes);
    copyOwnStack(out.stack.data(), sp, bytes);
    out.raw.kind = engine::RawSample::Kind::Cpu;
    out.raw.pid = static_cast<uint32_t>(getpid());
    out.raw.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    out.raw.period = periodNs;
    out.raw.ip = out.regs[engine::RegIP];
    return out;
}

// A sampler that runs a script: each drain hands the next step the sink, until the script is done.
class ScriptedSampler final : public engine::Sampler {
public:
    using Step = std::function<size_t(engine::SampleSink &)>;
    explicit ScriptedSampler(std::vector<Step> steps) : m_steps(std::move(steps)) {}

    void wait(int) override {}
    size_t drain(engine::SampleSink &sink) override
    {
        if (!m_enabled || m_next >= m_steps.size())
            return 0;
        return m_steps[m_next++](sink);
    }
    void disable() override { m_enabled = false; }
    void enable() override { m_enabled = true; }
    std::string description() const override { return "scripted sampler"; }
    bool wallTime() const override { return false; }
    bool finished() const override { return m_next >= m_steps.size(); }

private:
    std::vector<Step> m_steps;
    size_t m_next = 0;
    bool m_enabled = true;
};

} // namespace emberline::test
