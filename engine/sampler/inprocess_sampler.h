#pragma once

#include "engine/common/result.h"
#include "engine/memory/ring_reader.h"
#include "engine/model/thread_state.h"
#include "engine/sampler/host_steal.h"
#include "engine/sampler/sampler.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace emberline::engine {

struct InprocessSamplerOptions {
    int frequency = 999;         // CPU samples a second of each thread's CPU time
    bool wallTime = true;        // also the time threads wait, per thread and stack
    uint32_t stackBytes = 32768; // user stack each CPU sample copies
    // The Python frames of a thread blocked in a system call, read from outside (PythonFrames::readWaiting); null:
    // none are read.
    std::function<PythonFramesView(uint32_t pid, uint32_t tid)> pythonOfWait;
};

// The sampler for launched programs where perf events are forbidden, from inside the program: Emberline's agent
// (engine/agent, preloaded by the session) runs a timer on each thread's own CPU clock and, in its signal handler,
// copies the interrupted registers and the top of the stack into the process's ring (agent_cpu.cpp). This side
// takes the CPU records the session's ring reader hands it (CpuRecordSink) and hands the samples on as CPU time, to
// the pipeline given at open, unwound and symbolized on the session's thread like perf samples. It reads no ring
// itself: the session's one reader (RingReader) hands the memory records of the same rings to the memory side.
//
// Wall time never interrupts the program: no signal is sent to a waiting thread (a signal makes poll, epoll_wait,
// select and nanosleep fail with EINTR, whatever SA_RESTART says). Instead, every round (at most 100 a second) the
// sampler reads each thread's schedstat (time on a CPU, time waiting to run) from /proc: what is neither is time
// the thread slept. A thread asleep now has its wait read from /proc/PID/task/TID/syscall (the stack pointer and
// instruction pointer of the blocked system call; its stack does not move while it waits) and its stack copied
// from there; a thread that has not run since keeps its wait's stack. Time waiting to run lands on the thread's
// latest stack, as runnable.
//
// Threads: the agent starts a timer on every pthread_create'd thread as it starts; a thread this sampler finds in
// /proc without one (made by a bare clone) is asked for through the ring.
//
// Thread: the session thread.
class InprocessSampler final : public Sampler, public CpuRecordSink {
public:
    // `rings` is the agent link's reader, which this sampler steers (stack copy, timers) and the session polls;
    // the CPU samples it hands this sampler go to `samples`. The launched program must have the agent with a CPU
    // period.
    static Result<std::unique_ptr<InprocessSampler>> open(RingReader &rings, int childPid,
                                                          const InprocessSamplerOptions &options, SampleSink &samples);
    ~InprocessSampler() override;

    void wait(int timeoutMs) override;
    size_t drain(SampleSink &sink) override;
    void disable() override { m_paused = true; }
    void enable() override { m_paused = false; }
    std::string description() const override;
    bool wallTime() const override { return m_options.wallTime; }
    bool setStackCopyBytes(uint32_t bytes) override;
    uint32_t stackCopyBytes() const override { return m_options.stackBytes; }
    std::string stackCopyProblem() const override { return {}; }
    std::vector<std::string> problems() const override;

    // Whether this kernel raises a CPU timer's signal on the thread's way back to user mode (the kernel's
    // CONFIG_POSIX_CPU_TIMERS_TASK_WORK), so that it never interrupts a system call; nothing when its configuration
    // cannot be read. Without it, a tick that lands while a thread enters a blocking call can make that call fail
    // with EINTR.
    static std::optional<bool> timerSignalsOnReturnToUser();
    // The session ends: the session's reader reads the rings a last time and detaches every agent.
    void release() override;

    // CpuRecordSink
    void onCpuSample(const AgentCpuSample &sample) override;
    void onThreadTimer(uint64_t image, uint32_t pid, uint32_t tid, bool started) override;
    void onImageStart(uint64_t image, uint32_t pid, uint32_t parentPid) override;

    // CPU samples read, and threads seen with a timer.
    uint64_t cpuSamples() const { return m_cpuSamples; }
    size_t threadsWithTimer() const { return m_timedThreads; }

private:
    struct Thread {
        int schedstatFd = -1;
        int statFd = -1;    // /proc/PID/task/TID/stat: the kernel's state of a waiting thread (sleep, disk wait)
        int syscallFd = -1; // /proc/PID/task/TID/syscall: where a waiting thread waits
        uint64_t cpuNs = 0;
        uint64_t runDelayNs = 0;
        uint64_t runs = 0;        // times the kernel put it on a CPU (schedstat's third count)
        int64_t lastNs = 0;       // CLOCK_MONOTONIC of the last round
        int64_t sleptCarryNs = 0; // sleep counted but not yet sampled (below zero: counted too much)
        int64_t carryFromNs = 0;  // when that count last started from zero
        bool timer = false;
        int rounds = 0;
        bool requested = false;
        bool blocked = false;     // it blocks the sampler's signal
        bool blockedOnce = false; // it blocked it when first looked at (looked at again before it is said to)
        bool hasStack = false;    // a stack was handed on (a later wait or a runnable share may repeat it)
        bool waitKnown = false;   // the last stack was a wait at `waitSyscall`
        std::string waitSyscall;  // /proc/.../syscall as read then
    };
    struct Process {
        std::map<uint32_t, Thread> threads;
        uint64_t image = 0;
        // /proc/PID/task, kept open and read again from its start each round (an open of it walks the path anew).
        std::shared_ptr<void> taskDir;
    };

    InprocessSampler(RingReader &rings, int childPid, const InprocessSamplerOptions &options, SampleSink &samples);
    void round(SampleSink &sink, int64_t now);
    void refreshThreads(uint32_t pid, Process &process, SampleSink &sink, int64_t now);
    void sampleWait(uint32_t pid, uint32_t tid, Thread &thread, ThreadState state, uint64_t sleptNs, uint64_t cpuNs,
                    int64_t now, SampleSink &sink);
    void closeThread(Thread &thread);

    RingReader &m_rings;
    InprocessSamplerOptions m_options;
    int m_childPid;
    SampleSink &m_samples;
    std::map<uint32_t, Process> m_processes;
    bool m_paused = false;
    bool m_released = false;
    int64_t m_roundNs;        // the period asked for
    int64_t m_quietRoundNs;   // the period now: longer while the rounds find no thread waiting
    int m_quietRounds = 0;    // rounds in a row that sampled no wait and found the same threads
    bool m_roundBusy = false; // this round sampled a wait or saw a thread come or go
    int64_t m_nextRoundNs = 0;
    uint64_t m_cpuSamples = 0;
    uint64_t m_sampledCpuNs = 0; // the CPU time the samples stand for
    size_t m_timedThreads = 0;
    uint64_t m_timersFailed = 0;
    std::vector<uint8_t> m_stack;           // a waiting thread's stack copy
    std::set<std::string> m_blockedThreads; // names of threads that block the sampler's signal
    HostSteal m_steal;
};

} // namespace emberline::engine
