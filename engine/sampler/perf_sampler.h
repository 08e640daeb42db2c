#pragma once

#include "engine/common/result.h"
#include "engine/sampler/follow_tree.h"
#include "engine/sampler/perf_event_sets.h"
#include "engine/sampler/sampler.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace emberline::engine {

// perf_event `cpu-clock` sampling of one target: one event per CPU for the target (launch; inherit follows
// every thread and child created later) or per CPU and thread (attach), each CPU's events sharing one mmap
// ring buffer. Samples carry TID, time, period, user registers and a copy of the user stack (and the kernel's
// own callchain, kernel part only, where /proc/kallsyms can name it); MMAP2/COMM/FORK/EXIT records keep the
// memory maps and thread names current.
//
// Only the followed tree (the target and the children its fork records report) reaches the sink: every drain
// first reads the fork and exit records of all buffers, in time order, then hands over the records of followed
// processes and counts the samples of others as dropped.
//
// Thread: opened on any thread, then drained by the session thread only.
class PerfSampler final : public Sampler {
public:
    ~PerfSampler() override;
    PerfSampler(const PerfSampler &) = delete;
    PerfSampler &operator=(const PerfSampler &) = delete;

    // The child must not have exec'd yet: events start counting at its exec.
    static Result<std::unique_ptr<PerfSampler>> openForLaunch(int childPid, const PerfSamplerOptions &options);
    // Every current thread of `pid`; threads they create later are followed through inherit.
    static Result<std::unique_ptr<PerfSampler>> openForAttach(int pid, const PerfSamplerOptions &options);

    // Waits until a buffer passes its watermark or the timeout ends.
    void wait(int timeoutMs) override;
    // Hands every complete record of every buffer to the sink. Returns how many records were read.
    size_t drain(SampleSink &sink) override;
    void disable() override;
    void enable() override;

    bool kernelExcluded() const { return m_events.kernelExcluded(); }
    bool wallTime() const override { return m_events.options().wallTime && m_events.wallTimeProblem().empty(); }
    // Why wall time was asked for and cannot be measured with perf events here; empty otherwise.
    std::string wallTimeProblem() const override { return m_events.wallTimeProblem(); }
    std::string kernelFramesProblem() const override { return m_events.kernelFramesProblem(); }
    uint64_t foreignSamplesDropped() const override { return m_foreignDropped; }
    bool kernelCallchain() const { return m_events.kernelCallchain(); }
    // Events sampling now (retired ones not counted).
    size_t eventCount() const { return m_events.eventCount(); }
    // The kernel copies a sample's stack as the event was opened to: a new size opens a new set of events
    // (PerfEventSets), which takes over without losing or doubling a sample. On failure (out of file descriptors,
    // or no followed thread left) the old set goes on unchanged.
    bool setStackCopyBytes(uint32_t bytes) override;
    uint32_t stackCopyBytes() const override { return m_events.options().stackBytes; }
    std::string stackCopyProblem() const override { return m_events.stackCopyProblem(); }
    // CLOCK_MONOTONIC from which the latest set of events' records are taken (0 before any change).
    uint64_t stackCopyChangedAtNs() const { return m_events.currentSetStartNs(); }
    std::string description() const override;
    bool reportsMappings() const override { return true; }

private:
    struct Buffer;
    explicit PerfSampler(const PerfSamplerOptions &options);
    Status mapBuffer(int fd);
    // Reads the fork and exit records up to each buffer's head into the follow tree, oldest first.
    void followForks(const std::vector<uint64_t> &heads);
    void handleRecord(const uint8_t *record, size_t size, SampleSink &sink);
    void handleSample(const perf_event_header &hdr, const uint8_t *p, const uint8_t *end, SampleSink &sink);

    std::vector<std::unique_ptr<Buffer>> m_buffers; // one ring per CPU, mapped from the CPU's first event
    PerfEventSets m_events;
    std::vector<uint8_t> m_scratch;      // a record that wraps around the ring end is copied here
    std::vector<uint64_t> m_kernelStack; // the current sample's kernel callchain, context markers removed
    FollowTree m_tree;
    uint64_t m_foreignDropped = 0;
    uint64_t m_previousDrainNs = 0; // CLOCK_MONOTONIC at the previous drain: older exits can be forgotten
    std::vector<uint64_t> m_heads;
    struct TaskEvent {
        uint64_t timeNs;
        uint32_t pid;
        uint32_t ppid;
        bool fork;
    };
    std::vector<TaskEvent> m_taskEvents;
    std::vector<uint64_t> m_nextTimes; // per buffer, the time of its next record (UINT64_MAX: none this drain)
};

} // namespace emberline::engine
