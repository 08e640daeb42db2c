#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

// How a PerfSampler's events sample, and how large its rings are.
struct PerfSamplerOptions {
    int frequency = 99;          // samples per second per thread on CPU
    uint32_t stackBytes = 32768; // user stack copied per sample (multiple of 8, at most 65000)
    // Ring buffer data pages per CPU (a power of two; halved where locked memory is short); 0 sizes them from the
    // CPU count (ringPagesPerCpu). 64 busy threads on two CPUs with 32 KiB copies fill 1024 pages in about 125 ms.
    uint32_t bufferPages = 0;
    bool wallTime = false;       // also sample at context switches (off-CPU stacks)
    bool kernelCallchain = true; // kernel stacks from the kernel's callchain, where kallsyms shows addresses
    std::string kallsymsPath = "/proc/kallsyms";
};

// The ring's data pages per CPU where the options leave it open: 16 MiB of samples in all, 4 to 8 MiB a CPU (a
// power of two). A session thread kept off its CPU (a loaded host, many busy threads) then has about 250 ms on two
// CPUs at 32 KiB copies before the kernel drops records, where a 4 MiB ring left it 125 ms. Larger rings cost
// their pages at once (the kernel clears them when they are mapped: about 1 ms of a session's start for each 8 MiB
// added) and in the session's resident memory once samples have gone round them. Where the kernel limits the
// memory a user's rings lock (no CAP_IPC_LOCK, perf_event_paranoid above -1: perf_event_mlock_kb a CPU and
// RLIMIT_MEMLOCK), 4 MiB a CPU, which the default limits hold: a larger first ring would leave the others the rest,
// and a ring cut short wakes the session only when it is full.
uint32_t ringPagesPerCpu(int cpus, bool lockedMemoryLimited);
// The bytes after which the kernel wakes the session: a quarter of the ring, at most 1 MiB (a wake-up for every
// 30 ms or so of 32 KiB copies at 999 Hz on one CPU), so that a larger ring adds room but not latency.
uint32_t ringWakeupBytes(uint32_t pages);

// The perf events of one PerfSampler, opened in sets. The kernel fixes an event's stack copy (sample_stack_user)
// when the event is opened, so a new copy size takes a new set: one event per thread of every followed process and
// CPU (each new thread inherits them), redirected (PERF_EVENT_IOC_SET_OUTPUT) into the rings the first set made,
// opened disabled and enabled together, after which the old set is disabled. Each set has its span of time, from
// the moment it was complete to the moment the next one was: a record is taken only from the set whose span holds
// its time (accepts()), so that no sample is lost or counted twice around a change. A change that fails closes
// what it opened and leaves the old set sampling.
//
// It also decides what the events record: the kernel's callchain where /proc/kallsyms names it, kernel samples
// where this user may have them (else user space only, and no wall time), context switches for wall time.
//
// The rings are the sampler's: the first event of each CPU is handed to `mapRing`, since the kernel redirects
// other events only into a ring that is already mapped. Retired events that own a ring stay open for it.
//
// Thread: opened with its sampler on any thread, then used by the session thread only.
class PerfEventSets {
public:
    using MapRing = std::function<Status(int fd)>;

    PerfEventSets(const PerfSamplerOptions &options, MapRing mapRing);
    ~PerfEventSets();
    PerfEventSets(const PerfEventSets &) = delete;
    PerfEventSets &operator=(const PerfEventSets &) = delete;

    // One clock event per CPU for a child that has not exec'd yet, each making its CPU's ring; they start counting
    // at its exec.
    Status openForLaunch(int childPid);
    // Events for every current thread of `pid` on every CPU.
    Status openForAttach(int pid);
    // A new set copying `stackBytes` (a multiple of 8) of every thread of the `followed` processes and of the
    // children they forked, whose fork records may not have been read yet. The old set is retired once the new one
    // samples; on failure (out of file descriptors, or no thread left) it goes on unchanged and false is returned.
    bool openNewSet(uint32_t stackBytes, const std::vector<uint32_t> &followed);
    void disable();
    void enable();

    // Whether a record of the event `id` at `timeNs` is taken: each set of events has its span of time.
    bool accepts(uint64_t id, uint64_t timeNs) const;
    // Whether more than one set has sampled, so that records have to be checked against the spans.
    bool hasChanged() const { return m_generationStart.size() > 1; }
    bool isContextSwitch(uint64_t id) const;

    // The options as the events were opened, with the current stack copy.
    const PerfSamplerOptions &options() const { return m_options; }
    // Events sampling now (retired ones not counted).
    size_t eventCount() const { return m_fds.size(); }
    // CLOCK_MONOTONIC from which the latest set's records are taken (0 before any change).
    uint64_t currentSetStartNs() const { return m_generationStart.back(); }
    bool kernelExcluded() const { return m_kernelExcluded; }
    bool kernelCallchain() const { return m_kernelCallchain; }
    const std::string &kernelFramesProblem() const { return m_kernelFramesProblem; }
    const std::string &wallTimeProblem() const { return m_wallTimeProblem; }
    const std::string &stackCopyProblem() const { return m_stackCopyProblem; }

private:
    enum class EventKind { Clock, ContextSwitch };
    Status openEvent(EventKind kind, int pid, int cpu, bool forLaunch, int outputFd, int &fdOut);
    // Opens the context-switch event beside a clock event; failing that, wall time is declared unavailable.
    void openSwitchEvent(int pid, int cpu, bool forLaunch, int outputFd);
    // Events for every thread of `pids` on every CPU, listed again until a pass finds no new thread; the
    // first event per CPU that has none makes that CPU's ring.
    Status openThreadEvents(const std::vector<int> &pids);
    // Decides whether samples carry the kernel callchain, before the first event is opened.
    void chooseKernelCallchain();

    PerfSamplerOptions m_options;
    MapRing m_mapRing;
    bool m_kernelExcluded = false;
    bool m_kernelCallchain = false; // clock samples carry PERF_SAMPLE_CALLCHAIN (kernel part)
    std::string m_kernelFramesProblem;
    std::string m_wallTimeProblem;
    std::string m_stackCopyProblem;
    std::vector<int> m_fds;
    std::vector<int> m_cpuLeaderFd; // per CPU, the fd that owns that CPU's ring
    // Every event's sample id: the set it was opened in (0 at the start, one more at each stack-size change),
    // and whether it samples context switches.
    struct EventId {
        uint32_t generation = 0;
        bool contextSwitch = false;
    };
    std::unordered_map<uint64_t, EventId> m_eventIds;
    std::vector<uint64_t> m_generationStart{0}; // CLOCK_MONOTONIC from which each set's records are taken
    uint32_t m_openingGeneration = 0;           // the set openEvent adds to
    std::vector<int> m_retiredFds;              // disabled ring owners, kept for their mapping
    bool m_disabled = false;                    // paused by disable()
    bool m_openingDisabled = false;             // a new set is being opened, to be enabled at once
};

// A message for an errno from perf_event_open, saying what to change.
std::string perfOpenErrorMessage(int error, int pid);
// Why perf events cannot be had here at all (a user-space cpu-clock event on this very process is refused), or
// empty when they can: the in-process and ptrace samplers' cue.
std::string perfEventsForbidden();
// Why perf_event_open is refused by policy rather than by privileges (a seccomp filter on this process while root,
// or while the paranoia level would allow it), with what works instead; empty when privileges explain it.
std::string perfEventsPolicyRefusal();

// A perf event bound to the calling thread, opened disabled and never enabled (-1 where perf events are refused), for
// the caller to hold while a program it launches or attaches to opens events of its own. The kernel runs its perf
// hooks in the scheduler only while some event bound to a thread is open: the first one on a quiet system turns them
// on and waits for an RCU grace period as it does (10 to 30 ms here, inside perf_event_open), and one opened while
// another is held does not wait. Held by the session, the wait is the session's, not the stopped thread's of an
// attached program, whose agent opens its CPU clocks there.
int holdPerfScheduling();

} // namespace emberline::engine
