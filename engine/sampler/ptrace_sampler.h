#pragma once

#include "engine/common/result.h"
#include "engine/sampler/sampler.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace emberline::engine {

struct PtraceSamplerOptions {
    int frequency = 99;              // rounds per second asked for
    uint32_t stackBytes = 32768;     // user stack copied per thread and round
    double maxOverheadPercent = 2.0; // our own CPU time stays under this share of wall time
};

// The fallback sampler for machines where perf events are forbidden, in the manner of Datadog's
// CpuAndWallTimeWorker: every interval it briefly stops every thread of the target (PTRACE_INTERRUPT), copies
// its registers and the top of its stack (process_vm_readv), reads the thread's state and CPU time
// (/proc/PID/task/TID/stat and schedstat), lets it go, and only then unwinds. Each sample carries the
// thread's CPU-time and wall-time deltas since its previous sample. The interval stretches whenever a round
// costs more than the overhead budget allows, and the effective rate is reported.
//
// Being the tracer, it also passes every signal on to the target at once, and it detaches from every thread
// when the session ends, so the target is never left stopped.
//
// Thread: the session thread only; ptrace binds a tracee to the thread that attached.
class PtraceSampler final : public Sampler {
public:
    ~PtraceSampler() override;
    // The child must not have exec'd yet: it is seized first, and followed across its exec.
    static Result<std::unique_ptr<PtraceSampler>> openForLaunch(int childPid, const PtraceSamplerOptions &options);
    static Result<std::unique_ptr<PtraceSampler>> openForAttach(int pid, const PtraceSamplerOptions &options);

    void wait(int timeoutMs) override;
    size_t drain(SampleSink &sink) override;
    void disable() override { m_paused = true; }
    void enable() override { m_paused = false; }
    std::string description() const override;
    bool wallTime() const override { return true; }
    bool observesTargetExit() const override { return m_launched; }
    bool targetExited(int &exitStatus) override;
    void release() override;

    double effectiveRateHz() const;
    int64_t intervalNs() const { return m_intervalNs; }

private:
    struct Thread {
        bool seized = false;
        int statFd = -1;      // /proc/PID/task/TID/stat, kept open: read every round
        int schedstatFd = -1;
        uint64_t lastCpuNs = 0;
        uint64_t lastWallNs = 0;
        bool baseline = false;
    };
    struct Captured {
        RawSample sample;
        uint64_t cpuNs = 0;
        std::vector<uint64_t> regs;
        std::vector<uint8_t> stack;
    };
    PtraceSampler() = default;
    Status seize(int tid, bool first);
    void refreshThreads();
    void handleEvents();
    void handleStop(int tid, int status);
    bool readThreadClock(int tid, Captured &out);
    bool waitForInterruptStop(int tid, int &groupStopSignal);
    void copyStoppedThread(int tid, Captured &out);
    void sampleRound(SampleSink &sink);
    void forget(int tid);

    PtraceSamplerOptions m_options;
    int m_pid = 0;
    bool m_launched = false;
    bool m_paused = false;
    bool m_released = false;
    bool m_exited = false;
    int m_exitStatus = 0;
    std::map<int, Thread> m_threads;
    int64_t m_intervalNs = 0;
    int64_t m_nextRoundNs = 0;
    int64_t m_startNs = 0;
    uint64_t m_rounds = 0;
    bool m_execPending = false;
    std::vector<Captured> m_captured;
};

} // namespace emberline::engine
