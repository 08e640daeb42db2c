#pragma once

#include "engine/common/result.h"
#include "engine/sampler/overhead_budget.h"
#include "engine/sampler/ptrace_tracer.h"
#include "engine/sampler/sampler.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace emberline::engine {

struct PtraceSamplerOptions {
    int frequency = 99;              // rounds per second asked for
    uint32_t stackBytes = 32768;     // most user stack copied per thread and round (never past its end)
    double maxOverheadPercent = 2.0; // what sampling costs stays under this share of one CPU
    // The target's own kernel time for one stop and resume of a thread (the interrupt, the signal stop, two
    // context switches), charged to the budget per stop. Measured at about 15 us on a 2-vCPU VM as the CPU
    // time of a sleeping thread stopped and resumed 500 times.
    int64_t stopCostNs = 15'000;
};

// The fallback sampler for machines where perf events are forbidden, in the manner of Datadog's
// CpuAndWallTimeWorker: every interval it reads each thread's CPU time (/proc/PID/task/TID/schedstat), briefly
// stops it (PTRACE_INTERRUPT), copies its registers and the top of its stack (process_vm_readv), lets it go,
// and only then unwinds. The registers also say whether it was asleep in a system call (its state). Each sample
// carries the thread's CPU-time and wall-time deltas since its previous sample. A thread last found waiting
// that has used no CPU since is not stopped at all: its sample
// repeats the previous stack with the new state and wall time.
//
// The interval stretches so that sampling costs at most maxOverheadPercent of one CPU, with rounds paced
// evenly (OverheadBudget). The cost counted is everything the session thread spends (rounds, unwinding, polling for
// the target's events, recording), the helper threads' CPU (the exporter's symbolization, spread over the
// following seconds), and an estimate of what the target loses: its kernel time per stop, and the CPU time
// it could not use while its threads were held (stoppedTargetCpuNs). The effective rate and the measured
// share are reported.
//
// Being the tracer (PtraceTracer), it also passes every signal on to the target at once, and it detaches from
// every thread when the session ends, so the target is never left stopped.
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
    void countHelperCpu(std::function<int64_t()> cpuNs) override;
    // The most a stop copies (never past the end of the thread's stack mapping): applies from the next round.
    bool setStackCopyBytes(uint32_t bytes) override
    {
        if (bytes == 0)
            return false;
        m_options.stackBytes = bytes;
        return true;
    }
    uint32_t stackCopyBytes() const override { return m_options.stackBytes; }

    double effectiveRateHz() const;
    int64_t intervalNs() const { return m_intervalNs; }

private:
    // What the sampler keeps about a traced thread, from its first round until the tracer forgets it.
    struct Thread {
        int schedstatFd = -1; // /proc/PID/task/TID/schedstat, kept open: read every round
        int statFd = -1;      // /proc/PID/task/TID/stat, kept open: read while the thread waits
        // What its latest look found it doing: the registers of a stopped thread say whether it was asleep in a
        // system call, and a thread that has not run since keeps the state it had.
        ThreadState lastState = ThreadState::Running;
        uint64_t lastCpuNs = 0;
        uint64_t lastRunDelayNs = 0;
        uint64_t lastWallNs = 0;
        double demand = 1.0; // CPUs it wanted over its last interval (ran or waited to run), 0..1
        bool baseline = false;
        bool delivered = false; // its previous sample reached the sink with a stack, which a repeat reuses
        // It was stopped while not runnable, and had run `runsAtStop` times by then: resuming makes it run
        // once more (back into its wait) without moving, which the next look must not take for progress.
        bool quietStop = false;
        uint64_t runsAtStop = 0;
        // The mapping that holds its stack, [stackStart, stackEnd): a copy never reads past its end, where the
        // thread's outermost frame lies (plus, for the main thread, its arguments and environment). Looked up
        // after the thread is let go whenever its stack pointer is found outside it (its first stop, a signal
        // stack), at most every kStackLookupRounds rounds while that fails.
        uint64_t stackStart = 0;
        uint64_t stackEnd = 0;
        uint64_t stackSp = 0; // the stack pointer that has to be looked up; 0 when none
        uint64_t nextStackLookupRound = 0;
    };
    struct Captured {
        RawSample sample;
        uint64_t cpuNs = 0;
        uint64_t runDelayNs = 0;
        uint64_t runs = 0;
        int64_t stopFromNs = 0;
        int64_t stopToNs = 0;
        bool asleep = false; // stopped while waiting in a system call
        // The kernel's own state of a thread last seen waiting (Unknown for one last seen running, which is not
        // asked): it tells disk wait and stopped from sleep, which the registers of a stop cannot.
        ThreadState kernelState = ThreadState::Unknown;
        std::vector<uint64_t> regs;
        std::vector<uint8_t> stack;
    };
    enum class Look : uint8_t { Skipped, Baseline, Interrupted, Unchanged };
    PtraceSampler(int pid, bool launched, const PtraceSamplerOptions &options);
    void start();
    // The tracer's events, after which targetExited() need not look again until the session loop has waited.
    void handleEvents();
    bool readThreadClock(int tid, Captured &out);
    ThreadState readKernelState(Thread &t, int tid);
    bool hasNotMoved(const Thread &t, const Captured &c) const;
    void copyStoppedThread(int tid, Thread &t, Captured &out);
    void lookUpStack(Thread &t);
    void sampleRound(SampleSink &sink);
    void account(int64_t roundStartNs, int64_t targetCostNs);
    void finishSample(int tid, Captured &c, uint64_t nowNs);
    // The tracer has forgotten `tid`: drops what the sampler kept about it.
    void dropThread(int tid);

    PtraceSamplerOptions m_options;
    int m_pid = 0;
    bool m_launched = false;
    PtraceTracer m_tracer;
    bool m_paused = false;
    bool m_released = false;
    std::map<int, Thread> m_threads; // the traced threads (m_tracer.threads()) that have had a round
    bool m_eventsFresh = false;      // handleEvents() ran since the session loop last waited
    double m_targetCpus = 1;         // CPUs the target may run on
    std::optional<OverheadBudget> m_budget;
    std::function<int64_t()> m_helperCpu;
    int64_t m_lastHelperCpuNs = 0;
    int64_t m_lastOwnCpuNs = 0; // the session thread's CPU time at the previous measurement
    int64_t m_ownCostNs = 0;    // totals since the start, for the description
    int64_t m_targetCostNs = 0;
    uint64_t m_stops = 0;
    uint64_t m_repeats = 0;
    int64_t m_intervalNs = 0;
    int64_t m_nextRoundNs = 0;
    int64_t m_startNs = 0;
    uint64_t m_rounds = 0;
    std::vector<int> m_tids; // a round's threads, kept to spare an allocation per round
    std::vector<Captured> m_captured;
    std::vector<Look> m_looks;
    std::vector<StoppedSpan> m_stopped;
};

} // namespace emberline::engine
