#pragma once

#include "engine/common/result.h"
#include "engine/sampler/follow_tree.h"
#include "engine/sampler/sampler.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

struct PerfSamplerOptions {
    int frequency = 99;              // samples per second per thread on CPU
    uint32_t stackBytes = 32768;     // user stack copied per sample (multiple of 8, at most 65000)
    uint32_t bufferPages = 1024;     // ring buffer data pages per CPU (power of two; halved where locked memory
                                     // is short). 64 busy threads on two CPUs with 32 KiB stacks fill 512 pages
                                     // in about 30 ms
    bool wallTime = false;           // also sample at context switches (off-CPU stacks)
    bool kernelCallchain = true;     // kernel stacks from the kernel's callchain, where kallsyms shows addresses
    std::string kallsymsPath = "/proc/kallsyms";
};

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

    bool kernelExcluded() const { return m_kernelExcluded; }
    bool wallTime() const override { return m_options.wallTime && m_wallTimeProblem.empty(); }
    // Why wall time was asked for and cannot be measured with perf events here; empty otherwise.
    std::string wallTimeProblem() const override { return m_wallTimeProblem; }
    std::string kernelFramesProblem() const override { return m_kernelFramesProblem; }
    uint64_t foreignSamplesDropped() const override { return m_foreignDropped; }
    bool kernelCallchain() const { return m_kernelCallchain; }
    // Events sampling now (retired ones not counted).
    size_t eventCount() const { return m_fds.size(); }
    // The kernel copies a sample's stack as the event was opened to: a new size opens a new set of events, one
    // per thread of every followed process and CPU (each new thread inherits them), writing into the same
    // buffers, and retires the old set. Records carry their event's id and time: the old set's are taken up
    // to the moment the new set was complete, the new set's from then on, so that no sample is lost or counted
    // twice. On failure (out of file descriptors, or no followed thread left) the old set goes on unchanged.
    bool setStackCopyBytes(uint32_t bytes) override;
    uint32_t stackCopyBytes() const override { return m_options.stackBytes; }
    std::string stackCopyProblem() const override { return m_stackCopyProblem; }
    // CLOCK_MONOTONIC from which the latest set of events' records are taken (0 before any change).
    uint64_t stackCopyChangedAtNs() const { return m_generationStart.back(); }
    std::string description() const override;

private:
    struct Buffer;
    PerfSampler() = default;
    enum class EventKind { Clock, ContextSwitch };
    Status openEvent(EventKind kind, int pid, int cpu, bool forLaunch, int outputFd, int &fdOut);
    // Opens the context-switch event beside a clock event; failing that, wall time is declared unavailable.
    void openSwitchEvent(int pid, int cpu, bool forLaunch, int outputFd);
    // Events for every thread of `pids` on every CPU, listed again until a pass finds no new thread; the
    // first event per CPU that has none makes that CPU's buffer.
    Status openThreadEvents(const std::vector<int> &pids);
    // The followed processes and their children (whose fork records may not have been read yet).
    std::vector<int> followedProcesses() const;
    // Whether a record of the event `id` at `timeNs` is taken: each set of events has its span of time.
    bool accepts(uint64_t id, uint64_t timeNs) const;
    bool isContextSwitch(uint64_t id) const;
    Status mapBuffer(int fd);
    // Decides whether samples carry the kernel callchain, before the first event is opened.
    void chooseKernelCallchain();
    // Reads the fork and exit records up to each buffer's head into the follow tree, oldest first.
    void followForks(const std::vector<uint64_t> &heads);
    void handleRecord(const uint8_t *record, size_t size, SampleSink &sink);
    void handleSample(const perf_event_header &hdr, const uint8_t *p, const uint8_t *end, SampleSink &sink);

    PerfSamplerOptions m_options;
    bool m_kernelExcluded = false;
    std::vector<int> m_fds;
    std::vector<int> m_cpuLeaderFd; // per CPU, the fd that owns that CPU's buffer
    std::vector<std::unique_ptr<Buffer>> m_buffers;
    std::vector<uint8_t> m_scratch; // a record that wraps around the ring end is copied here
    // Every event's sample id: the set it was opened in (0 at the start, one more at each stack-size change),
    // and whether it samples context switches.
    struct EventId {
        uint32_t generation = 0;
        bool contextSwitch = false;
    };
    std::unordered_map<uint64_t, EventId> m_eventIds;
    std::vector<uint64_t> m_generationStart{0}; // CLOCK_MONOTONIC from which each set's records are taken
    uint32_t m_openingGeneration = 0;           // the set openEvent adds to
    std::vector<int> m_retiredFds;              // disabled buffer owners, kept for their mapping
    bool m_disabled = false;                    // paused by disable()
    bool m_openingDisabled = false;             // a new set is being opened, to be enabled at once
    std::string m_stackCopyProblem;
    std::string m_wallTimeProblem;
    bool m_kernelCallchain = false; // clock samples carry PERF_SAMPLE_CALLCHAIN (kernel part)
    std::string m_kernelFramesProblem;
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
};

// A message for an errno from perf_event_open, saying what to change.
std::string perfOpenErrorMessage(int error, int pid);

} // namespace emberline::engine
