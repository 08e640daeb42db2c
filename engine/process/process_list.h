#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace emberline::engine {

// One running process as the attach list shows it.
struct ProcessEntry {
    int pid = 0;
    uint32_t uid = 0;
    std::string user;
    std::string name;        // /proc/PID/comm
    std::string commandLine; // /proc/PID/cmdline, arguments joined by spaces
    double cpuPercent = 0;   // of one core, since the previous scan
    bool own = false;        // runs as the scanning user
    bool traceable = true;
    std::string reason; // why it cannot be traced, when it cannot
    // Asleep waiting for its children (readWaitingParent): "waiting for its child C (python3)", else empty.
    std::string waiting;
};

// Reads /proc into a list of processes: own processes first, then by CPU use. CPU % is the process's
// user+system time since the previous scan over the wall time between scans, so the first scan shows 0.
// Whether a process can be traced follows the kernel's rules we can check without trying: kernel threads
// and zombies cannot, nor Emberline itself; another user's process needs root (or CAP_SYS_PTRACE), and
// Yama's ptrace_scope 3 forbids attaching at all.
//
// Thread: any one thread at a time (the dialog's scanning worker); reads files, never blocks on a process.
class ProcessScanner {
public:
    std::vector<ProcessEntry> scan();

private:
    struct Previous {
        uint64_t ticks = 0;
    };
    std::unordered_map<int, Previous> m_previous;
    int64_t m_previousScanNs = 0;
    std::unordered_map<uint32_t, std::string> m_userNames;
    std::string userName(uint32_t uid);
};

// Whether a process with this pid exists now (a zombie counts as gone).
bool processExists(int pid);

// A process that only waits for its children (a shell running a command, `sudo`, `time`: asleep in wait4): its name
// and its live children (pid, name), in pid order. Someone about to attach to it most likely wants a child.
struct WaitingParent {
    std::string name;
    std::vector<std::pair<int, std::string>> children;
};
// Whether `pid` is such a process (false: running, no live children, or /proc unreadable).
bool readWaitingParent(int pid, WaitingParent &parent);
// What to say of it: "waiting for its child C (python3)", up to four children named.
std::string describeWaitingParent(const WaitingParent &parent);
// The command line's note before an attach to `pid`: the description and the --pid to give instead; empty where
// `pid` is no waiting parent.
std::string waitingParentHint(int pid);

} // namespace emberline::engine
