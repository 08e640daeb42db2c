#pragma once

#include "engine/sampler/sample_sink.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace emberline::engine {

// What the session loop needs of a sampling backend (perf events or ptrace): wait for data, hand it to the
// pipeline, pause, and say what it is. A test can drive the pipeline with a fake one.
//
// Thread: the session thread only (a ptrace tracer must be one thread).
class Sampler {
public:
    virtual ~Sampler() = default;
    // Blocks until there may be data, at most `timeoutMs`.
    virtual void wait(int timeoutMs) = 0;
    // Hands everything available to the sink; returns how many records or samples.
    virtual size_t drain(SampleSink &sink) = 0;
    virtual void disable() = 0;
    virtual void enable() = 0;
    virtual std::string description() const = 0;
    virtual bool wallTime() const = 0;
    // Why wall time was asked for and cannot be measured; empty otherwise.
    virtual std::string wallTimeProblem() const { return {}; }
    // Why kernel time is one unnamed [kernel] frame although the kernel is sampled; empty otherwise.
    virtual std::string kernelFramesProblem() const { return {}; }
    // What kept this sampler from sampling all it should (said in the summary); empty when nothing did.
    virtual std::vector<std::string> problems() const { return {}; }
    // Samples of processes outside the followed tree that the kernel delivered and the sampler dropped.
    virtual uint64_t foreignSamplesDropped() const { return 0; }
    // Whether it tells the pipeline every mapping of the target's processes as it happens (perf's mmap records); a
    // sampler that does not leaves the maps to /proc and to the agents' module records.
    virtual bool reportsMappings() const { return false; }
    // A tracer sees the launched target's exit itself (the status would otherwise be reaped twice).
    virtual bool observesTargetExit() const { return false; }
    virtual bool targetExited(int &exitStatus)
    {
        (void)exitStatus;
        return false;
    }
    // The user stack each sample copies from now on, in bytes; false when this sampler cannot change it (it
    // then copies what it did before).
    virtual bool setStackCopyBytes(uint32_t bytes)
    {
        (void)bytes;
        return false;
    }
    // The user stack each sample asks for now (0: not known).
    virtual uint32_t stackCopyBytes() const { return 0; }
    // Why the last setStackCopyBytes failed; empty when the target has no thread left to sample.
    virtual std::string stackCopyProblem() const { return "this sampler copies a fixed stack"; }
    // A sampler with a finite source (a replayed log) says when it has delivered everything: the session ends.
    virtual bool finished() const { return false; }
    // Leaves the target running and untouched: called before the session ends the target or returns.
    virtual void release() {}
    // CPU time (ns, growing) that the session's other threads spend on what this sampler collects, for a
    // sampler that budgets its overhead. Called on the session thread until release().
    // By value: the samplers that budget their overhead keep it. NOLINTNEXTLINE(performance-unnecessary-value-param)
    virtual void countHelperCpu(std::function<int64_t()> /*cpuNs*/) {}
};

} // namespace emberline::engine
