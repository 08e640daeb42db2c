#pragma once

#include "engine/common/fd_closer.h"
#include "engine/common/result.h"
#include "engine/memory/ring_reader.h"
#include "engine/session/session_config.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace emberline::engine {

// The link between a session and the agent it puts in a launched program (libemberline_agent.so): finds the
// library, makes the rings' folder (private to the session, removed at the end), and says what the program's
// environment gets. The memory session and the in-process sampler share it, and so the program's rings: its one
// reader (RingReader), which the session polls, hands each side the records of its kind.
//
// Thread: the session thread.
class AgentLink {
public:
    // `purpose` names what needs the agent, for the messages ("memory profiling", "the in-process sampler").
    static Result<std::unique_ptr<AgentLink>> create(const SessionConfig &config, const std::string &purpose);
    ~AgentLink();
    AgentLink(const AgentLink &) = delete;
    AgentLink &operator=(const AgentLink &) = delete;

    RingReader &rings() { return m_rings; }
    const RingReader &rings() const { return m_rings; }

    // What the program is asked to do, before it is launched: profile memory at `allocInterval` bytes (0: not),
    // sample CPU every `cpuPeriodNs` of each thread's CPU time (0: not); the larger ring asked for wins.
    void askMemory(uint64_t allocInterval, uint64_t ringBytes, bool pythonAllocators = false);
    // `perfEvents`: each thread's clock a perf event where allowed (the asked rate; for programs that retry a wait a
    // signal interrupts, as CPython does), else POSIX CPU timers (the kernel's tick).
    void askCpu(uint64_t cpuPeriodNs, uint64_t ringBytes, bool perfEvents = false);
    uint64_t cpuPeriodNs() const { return m_cpuPeriodNs; }

    // The launched program's environment: the agent first in LD_PRELOAD (before whatever the caller's environment
    // or ours already preloads), the rings' folder, and what was asked.
    std::vector<std::pair<std::string, std::string>>
    environment(const std::vector<std::pair<std::string, std::string>> &given) const;

    // Loads the agent into running process `pid` and starts it with what was asked (engine/inject: one of its
    // threads, stopped at a safe point, calls dlopen and the agent's attach): its allocation functions go through the
    // agent's hooks from then on. The report says how many modules were redirected and how long the thread was
    // stopped. The rings' folder must be the program's to write in: made so by create() for a config with a pid.
    struct Attached {
        int modules = 0;        // modules whose allocation functions now reach the agent
        uint64_t stoppedNs = 0; // how long the injected thread was stopped
        uint64_t injectNs = 0;  // the injector's whole run (its start, its checks, the stop, the calls, its end)
        bool loadedBefore = false;
        int64_t attachedRealNs = 0; // CLOCK_REALTIME of the attach
        // Modules that define malloc themselves (an allocator linked in): their calls to it inside the module do not
        // go through a table, and escape the agent.
        std::vector<std::string> ownAllocators;
    };
    Result<Attached> attach(int pid);
    // Lets the agent of an attached program go (its tables as they were, its ring given back); the library stays
    // loaded. Nothing when the program was launched or has ended.
    Status detach();
    bool attached() const { return m_attachedPid > 0; }

    // The launched program's executable (resolved on PATH), and whether the dynamic loader runs in it at all: a
    // statically linked program loads no agent.
    const std::string &executable() const { return m_executable; }
    bool executableIsStatic() const { return m_static; }

private:
    AgentLink(const SessionConfig &config, std::string directory, std::string agentPath);
    // What the agent is asked, NAME=VALUE, as in the launched program's environment (LD_PRELOAD aside).
    std::vector<std::pair<std::string, std::string>> options(const std::string &directory) const;
    // The injector beside the agent library; "": the default (beside the executable).
    std::string injectHelper() const;

    std::string m_agentPath;
    std::string m_directoryInTarget; // the rings' folder as the attached program sees it (its own root)
    int m_attachedPid = 0;
    RingReader m_rings;
    uint64_t m_allocInterval = 0;
    uint64_t m_cpuPeriodNs = 0;
    bool m_cpuPerfEvents = false;
    FdCloser m_perfHold{-1}; // holdPerfScheduling's event, while the program's agent opens its own
    bool m_pythonAllocators = false;
    uint64_t m_ringBytes = 0;
    std::string m_executable;
    bool m_static = false;
};

// The session's account of the agent's stacks: the rings' counts, the tables served, the checks' outcome.
std::shared_ptr<const AgentStacksSummary> agentStacksSummary(const RingReader &rings, const UnwindCounters &unwind,
                                                             bool walking);

// The health's line on the Python chains the agent gave again from a thread's last walk and checked against a walk
// anew (RingCounters::pythonRepeatChecks): a note, and a fault too where more than 0.1% of them differed.
void pythonRepeatHealth(const RingReader &rings, std::vector<std::string> &notes, std::vector<std::string> &faults);

} // namespace emberline::engine
