#pragma once

#include "engine/common/result.h"
#include "engine/sampler/follow_tree.h"
#include "engine/sampler/sampler.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <string>
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
    size_t eventCount() const { return m_fds.size(); }
    std::string description() const override;

private:
    struct Buffer;
    PerfSampler() = default;
    enum class EventKind { Clock, ContextSwitch };
    Status openEvent(EventKind kind, int pid, int cpu, bool forLaunch, int outputFd, int &fdOut);
    // Opens the context-switch event beside a clock event; failing that, wall time is declared unavailable.
    void openSwitchEvent(int pid, int cpu, bool forLaunch, int outputFd);
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
    std::vector<uint64_t> m_switchEventIds; // sample ids of context-switch events
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
