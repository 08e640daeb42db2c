#pragma once

#include "engine/common/result.h"
#include "engine/health/unwind_health.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace emberline::engine {

// What the memory agent saw over a session (SessionConfig::memory).
struct MemorySummary {
    uint64_t interval = 0; // mean bytes between samples (1: every allocation)
    // What the program allocated: counted by the agent's hooks, every allocation (exact), or where the agent did
    // not report its counts, the samples' estimate (allocatedExact false).
    double allocatedBytes = 0;
    double allocatedObjects = 0;
    bool allocatedExact = false;
    // The samples' estimate of the same: what the profile's alloc-samples and alloc-space add up to.
    double sampledAllocatedBytes = 0;
    double sampledAllocatedObjects = 0;
    double sampledAllocatedBytesMargin = 0;
    // The live heap's high-water mark: the largest live heap the session saw, at its reads of the rings and its
    // flushes (exact mode: at every record), as the samples tell it.
    double highWaterBytes = 0;
    double leakedBytes = 0; // still live when the processes ended
    double leakedObjects = 0;
    double liveBytes = 0; // live now (at the end: in processes still running)
    // How far sampling may have put allocatedBytes, liveBytes and leakedBytes off the program's own: the
    // half-width of each one's 95% range (samplingMargin); 0 at interval 1.
    double allocatedBytesMargin = 0;
    double liveBytesMargin = 0;
    double leakedBytesMargin = 0;
    uint64_t samples = 0;       // allocation records read
    uint64_t frees = 0;         // free records read
    uint64_t unknownFrees = 0;  // frees of an address not known to be live (never allocated, or freed twice)
    uint64_t allocsDropped = 0; // sampled allocations the agent could not report (full ring)
    uint64_t bytesDropped = 0;
    uint64_t waitNs = 0;               // exact mode: the programs' time waiting for room in the ring
    uint64_t processes = 0;            // process images that ran the agent
    std::vector<std::string> problems; // why some or all of the memory could not be profiled
    std::vector<std::string> notes;    // what the numbers count, where a program's own allocator shapes them
    // An attached program (the agent loaded into it while it ran): when (CLOCK_REALTIME), how many of its modules
    // call the agent's hooks, and how long the thread that loaded it was stopped. Blocks allocated before are
    // unknown: their frees are counted apart (unknownFrees), and in-use is what was allocated since.
    bool attached = false;
    int64_t attachedRealNs = 0;
    int modulesRedirected = 0;
    uint64_t attachStoppedNs = 0;
    uint64_t attachInjectNs = 0; // the injector's whole run, from its start to its answer
};

// How the agent took its samples' stacks over a session (memory, the in-process sampler): walked in the program with
// the session's unwind tables, or copied and unwound by the session; and the checked samples, walked and copied both.
struct AgentStacksSummary {
    bool walking = false;   // the walk was asked for (SessionConfig::agentWalks)
    uint64_t walked = 0;    // samples the agent wrote as program counters
    uint64_t stackRefs = 0; // of those, written as a reference to a stack written before
    uint64_t leafWalks = 0; // of those, walks whose innermost frames came from a leaf of the thread's earlier walks
    uint64_t copied = 0;    // samples copied instead (all of them when not walking)
    std::vector<std::pair<std::string, uint64_t>> copiedBecause; // why, largest first
    uint64_t checks = 0;      // checked samples: the session's own unwind of the copy against the walk
    uint64_t mismatches = 0;  // of those, stacks that differ
    uint64_t walkLonger = 0;  // of those, walks that went further than the copy's unwind, and agreed up to there
    uint64_t unknownRefs = 0; // references to stacks the ring never wrote out (dropped)
    // The unwind tables the session built and shared.
    uint64_t tablesBuilt = 0;
    uint64_t tablesStored = 0; // of the tables, those read from the ones earlier sessions kept
    uint64_t tablesFailed = 0;
    uint64_t tableBytes = 0; // the arena
    int64_t tableBuildNs = 0;
    std::string tableProblem; // why tables could not be shared (a full disk): the agents copied
    // The in-process sampler's handler in the program, per sample: how many were timed, and the median and 99th
    // percentile (the lower bounds of their quarter-octave buckets).
    uint64_t handlerSamples = 0;
    uint64_t handlerP50Ns = 0;
    uint64_t handlerP99Ns = 0;
    // Of those, the walks of the thread's Python frames (a CPython's samples): how many, their median and 99th
    // percentile the same way, and the frames they gave on average.
    uint64_t pythonWalks = 0;
    uint64_t pythonWalkP50Ns = 0;
    uint64_t pythonWalkP99Ns = 0;
    double pythonWalkFrames = 0;
    // The Python chains given again from what a thread's last walk kept, checked against a walk anew, and those that
    // differed (as the stack walks' checks, a share that should be 0).
    uint64_t pythonRepeatChecks = 0;
    uint64_t pythonRepeatDiffers = 0;
};

// The values a recording is configured, steered and described with, shared by RecordSession (the engine's
// session loop), ProfilingSession (the GUI's facade), `emberline record` and the sampler factory.
struct SessionConfig {
    // Launch (command) or attach (pid); exactly one.
    std::vector<std::string> command;
    std::string workingDirectory;
    std::vector<std::pair<std::string, std::string>> environment;
    bool ownSession = false; // launch the command in a session of its own (LaunchOptions::ownSession)
    int pid = 0;

    int frequency = 99;
    int64_t durationNs = 0;                 // 0: until the target exits or stop is requested
    int64_t flushPeriodNs = 10'000'000'000; // 1 s to 60 s
    std::string outputDirectory;            // empty: flushes are not written
    uint32_t stackBytes = 32768;            // the stack copy per sample; where learned, the first one
    // Learn the stack copy from the stacks (StackCopyPolicy): it shrinks to what they need and grows, up to
    // kMaxStackCopyBytes, when one is cut short. Off: every sample copies stackBytes.
    bool learnStackCopy = true;
    // auto | perf | ptrace | inprocess. auto: perf events where they are allowed; where they are not, the
    // in-process sampler for a launched program and ptrace for an attach.
    std::string sampler = "auto";
    bool wallTime = true;                  // also record wall time (off-CPU stacks), where it can be measured
    double ptraceMaxOverheadPercent = 2.0; // the ptrace sampler's budget, in % of one CPU
    // Memory profiling (launched programs only): the agent (libemberline_agent.so) is preloaded into the
    // program and samples its allocations every `allocInterval` bytes on average (1: every allocation).
    bool memory = false;
    uint64_t allocInterval = uint64_t(512) * 1024;
    // A CPython's memory counted at its own allocators' calls (every object, as Python allocates it) rather than at
    // malloc (its small objects' arenas, each as one allocation): engine/agent/python/agent_pymem.h. Launched programs
    // only: the allocators can only be replaced before the interpreter starts.
    bool pythonAllocators = false;
    // A CPython's stacks keep the interpreter's own frames (for those debugging CPython itself): each eval-loop frame
    // under the Python frames it ran, and the functions that pass calls on between them. Off: the Python frames
    // replace them (engine/session/python_frames.h).
    bool pythonInterpreterFrames = false;
    // How the agent takes its samples' stacks (memory and the in-process sampler): walked in the program with unwind
    // tables the session builds from each module's .eh_frame, copied where the walk cannot go (true); or every stack
    // copied and unwound by the session (false). Every `walkCheckEvery`-th walked sample of a thread is copied too,
    // and the session compares its own unwind with the walk (0: none; 1: every sample, for debugging).
    bool agentWalks = true;
    uint32_t walkCheckEvery = 1000;
    // The agent library; empty: found beside the executable (<exe dir>/../lib/emberline/).
    std::string agentPath;
    // Where the agent's rings' folder is made; empty: a tmpfs with room ($XDG_RUNTIME_DIR, /dev/shm), else
    // $TMPDIR or /tmp (AgentLink).
    std::string agentFolderParent;
    // Where separate debug files are looked for (by build id and .gnu_debuglink).
    std::vector<std::string> debugDirectories{"/usr/lib/debug"};
};

Status validateConfig(const SessionConfig &config);

struct SessionSummary {
    std::string samplerDescription;
    std::string samplerChoice;                // which backend runs and why
    std::vector<std::string> samplerProblems; // what kept the sampler from sampling all it should
    bool wallTime = false;                    // wall time was measured
    std::string wallTimeProblem;              // why wall time was asked for and not measured
    std::string kernelFramesProblem;          // why kernel time is one unnamed [kernel] frame; empty when named
    uint64_t foreignDropped = 0;              // samples of processes outside the followed tree, dropped
    int64_t durationNs = 0;
    uint64_t samples = 0;
    uint64_t lost = 0;
    uint64_t incomplete = 0;
    std::map<std::string, uint64_t> incompleteByModule;
    uint64_t framePointerFallbacks = 0;
    // The stack copy per sample at the end, whether it was learned, how often it changed, the deepest stack seen
    // (bytes above the stack pointer), and why it could not change (empty when it could).
    uint32_t stackCopyBytes = 0;
    bool stackCopyLearned = false;
    uint32_t stackCopyChanges = 0;
    uint64_t deepestStackBytes = 0;
    std::string stackCopyProblem;
    // Per module: where stacks ended and why, symbol status and the fix to try; faults met (null: not known).
    std::shared_ptr<const UnwindHealth> health;
    double realRateHz = 0;     // samples per second of session per thread-second on CPU is not known; per s
    int64_t targetCpuNs = 0;   // CPU time the samples stand for
    int64_t profilerCpuNs = 0; // our own user+system time
    uint32_t flushes = 0;
    std::string sessionProfilePath; // empty when nothing was recorded or it could not be written
    // What could not be saved: every failed write as "<file>: <reason>", in order. The session went on; the
    // views had every flush.
    std::vector<std::string> saveErrors;
    uint32_t flushesNotSaved = 0;
    // Memory profiling: estimates from the sampled allocations (exact at interval 1); null when not asked.
    std::shared_ptr<const MemorySummary> memory;
    // The agent's stacks (memory, the in-process sampler); null when no agent ran.
    std::shared_ptr<const AgentStacksSummary> agentStacks;
    bool launched = false;
    bool targetExited = false;
    int exitStatus = 0; // the launched target's, shell style
    std::string endReason;
};

// Live numbers of a running session, reported a few times a second on the session thread.
struct SessionStats {
    int64_t realNs = 0; // when they were taken (CLOCK_REALTIME, as flush times)
    int64_t elapsedNs = 0;
    uint64_t samples = 0;
    uint64_t lost = 0;
    uint64_t incomplete = 0;
    uint64_t foreignDropped = 0;   // samples of other processes the kernel delivered, dropped
    double rateHz = 0;             // samples per second over the last report interval
    double profilerCpuPercent = 0; // our own CPU over the last interval, % of one core
    bool paused = false;
    int targetPid = 0;
    std::string samplerDescription;
    std::string samplerChoice; // which backend runs and why
    // Memory profiling: estimated live heap and allocations so far (0 when not profiled).
    bool memory = false;
    double liveBytes = 0;
    double liveBytesMargin = 0; // the half-width of its 95% range (MemorySummary::liveBytesMargin)
    double allocatedBytes = 0;
    // Memory profiling: the resident memory (RSS) of the program and the processes it started, read with these
    // numbers, so that a view of the memory takes one fast channel; -1 when not read (no memory profiled, or the
    // program is gone).
    int64_t residentBytes = -1;
    // An attached program the agent was loaded into: when (CLOCK_REALTIME; 0: launched, or no agent).
    int64_t attachedRealNs = 0;
};

// Set from any thread (or a signal handler) to steer a running session.
struct SessionControl {
    std::atomic<bool> stop{false};
    std::atomic<bool> paused{false};                 // while set, no samples are taken
    const std::atomic<bool> *externalStop = nullptr; // a flag owned elsewhere (a signal handler's) that also stops
    bool stopRequested() const { return stop.load() || (externalStop && externalStop->load()); }
};

} // namespace emberline::engine
