#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <functional>
#include <set>
#include <utility>
#include <vector>

namespace emberline::engine {

// The PtraceSampler's tracer side: which threads of the target it traces, and what they report. It seizes the
// target's threads (the first at once, the others as a look at /proc/PID/task finds them), reaps their ptrace
// events (passing every signal on to the target at once, noting an exec and each thread's exit) and, when the
// session ends, detaches from every thread, so the target is never left stopped.
//
// Stopping a thread for a sample (PTRACE_INTERRUPT, its registers and stack, PTRACE_CONT) is the sampler's; waiting
// for that stop is here, since a signal or an exec may come first.
//
// Thread: the session thread only; ptrace binds a tracee to the thread that attached.
class PtraceTracer {
public:
    // `forgotten` is called with each thread that stops being traced (it ended, exec ended it, or the tracer
    // detached), for the sampler to drop what it keeps about it.
    PtraceTracer(int pid, bool launched, std::function<void(int tid)> forgotten);
    ~PtraceTracer();
    PtraceTracer(const PtraceTracer &) = delete;
    PtraceTracer &operator=(const PtraceTracer &) = delete;

    // `first`: the target's first thread, whose failure is the session's; a later thread that ended while it was
    // listed is no error. A launched target is killed with its tracer (PTRACE_O_EXITKILL).
    Status seize(int tid, bool first);
    // Seizes the threads that started since the last look; the thread count is looked at every 50 ms at most.
    void refreshThreads();
    // Reaps every pending ptrace event of the traced threads without waiting.
    void handleEvents();
    // Waits for the stop that PTRACE_INTERRUPT asked of `tid`, handling what comes before it. False when the thread
    // is gone; `groupStopSignal` is the signal of a group-stop the thread is held in (the user stopped the program).
    bool waitForInterruptStop(int tid, int &groupStopSignal);
    void forget(int tid);
    // Detaches from every thread, delivering a signal that was on its way, and forgets them all.
    void detachAll();

    const std::set<int> &threads() const { return m_threads; }
    bool exited() const { return m_exited; }
    // The target's exit as a shell reports it; meaningful once exited().
    int exitStatus() const { return m_exitStatus; }
    // Threads that ended since the last call.
    std::vector<int> takeExitedThreads() { return std::exchange(m_exitedThreads, {}); }
    // Whether the target exec'd since the last call.
    bool takeExec() { return std::exchange(m_execPending, false); }
    // When the latest exec stopped the program (CLOCK_MONOTONIC): after the old image's last instruction, before the
    // new one's first.
    uint64_t execNs() const { return m_execNs; }
    // CLOCK_MONOTONIC when a signal for the target last passed through.
    int64_t lastSignalNs() const { return m_lastSignalNs; }

private:
    void handleStop(int tid, int status);
    void sweepEvents();
    bool threadListChanged();

    int m_pid = 0;
    bool m_launched = false;
    std::function<void(int)> m_forgotten;
    std::set<int> m_threads;
    bool m_exited = false;
    int m_exitStatus = 0;
    std::vector<int> m_exitedThreads; // reported to the sink at the next drain
    bool m_execPending = false;
    uint64_t m_execNs = 0;
    int64_t m_lastSignalNs = 0;      // when a signal for the target last passed through us
    int m_taskDirFd = -1;            // /proc/PID/task: its link count says how many threads there are
    int64_t m_nextThreadCheckNs = 0; // when the thread count is looked at again
    uint64_t m_threadChecks = 0;
    uint64_t m_lastListingCheck = 0;
};

} // namespace emberline::engine
