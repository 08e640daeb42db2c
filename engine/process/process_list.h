#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
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

} // namespace emberline::engine
