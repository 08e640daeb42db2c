#include "engine/process/process_list.h"

#include "engine/process/proc_files.h"

#include <dirent.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

namespace emberline::engine {
namespace {

int64_t monotonicNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// State and utime+stime from /proc/PID/stat (the name in parentheses may itself hold spaces and parentheses).
bool readStat(int pid, char &state, uint64_t &ticks)
{
    const std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos)
        return false;
    std::istringstream rest(stat.substr(close + 2));
    rest >> state;
    std::string field;
    for (int i = 0; i < 10; ++i) // ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
        rest >> field;
    uint64_t utime = 0, stime = 0;
    rest >> utime >> stime;
    ticks = utime + stime;
    return static_cast<bool>(rest);
}

uint32_t ownerOf(int pid)
{
    const std::string status = readProcFile("/proc/" + std::to_string(pid) + "/status");
    const auto at = status.find("\nUid:");
    return at == std::string::npos ? UINT32_MAX
                                   : static_cast<uint32_t>(std::strtoul(status.c_str() + at + 5, nullptr, 10));
}

} // namespace

bool processExists(int pid)
{
    if (pid <= 0)
        return false;
    char state = 0;
    uint64_t ticks = 0;
    return readStat(pid, state, ticks) && state != 'Z' && state != 'X';
}

namespace {

std::string trimmed(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

// The process's children: its threads' children lists (/proc/PID/task/TID/children).
std::vector<int> childrenOf(int pid)
{
    std::vector<int> children;
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    DIR *dir = opendir(tasks.c_str());
    if (!dir)
        return children;
    while (const dirent *entry = readdir(dir)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
            continue;
        std::istringstream list(readProcFile(tasks + "/" + entry->d_name + "/children"));
        int child = 0;
        while (list >> child)
            children.push_back(child);
    }
    closedir(dir);
    std::sort(children.begin(), children.end());
    return children;
}

// readWaitingParent's check, from the state and name the caller read already.
bool waitsForChildren(int pid, char state, const std::string &name, WaitingParent &parent)
{
    if (state != 'S')
        return false;
    // Asleep in wait4 (the kernel's do_wait); /proc shows 0 for wchan where it hides kernel addresses: then a shell
    // by its name.
    const std::string wchan = trimmed(readProcFile("/proc/" + std::to_string(pid) + "/wchan"));
    static const char *const kShells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh"};
    const bool shell = std::any_of(std::begin(kShells), std::end(kShells), [&](const char *s) { return name == s; });
    if (wchan != "do_wait" && !((wchan.empty() || wchan == "0") && shell))
        return false;
    parent.name = name;
    parent.children.clear();
    for (int child : childrenOf(pid)) {
        if (processExists(child))
            parent.children.emplace_back(child, trimmed(readProcFile("/proc/" + std::to_string(child) + "/comm")));
    }
    return !parent.children.empty();
}

} // namespace

bool readWaitingParent(int pid, WaitingParent &parent)
{
    char state = 0;
    uint64_t ticks = 0;
    return readStat(pid, state, ticks) &&
           waitsForChildren(pid, state, trimmed(readProcFile("/proc/" + std::to_string(pid) + "/comm")), parent);
}

std::string describeWaitingParent(const WaitingParent &parent)
{
    const auto &children = parent.children;
    std::string text = "waiting for its ";
    text += children.size() == 1 ? "child " : "children ";
    for (size_t i = 0; i < children.size() && i < 4; ++i)
        text += (i ? ", " : "") + std::to_string(children[i].first) + " (" + children[i].second + ")";
    if (children.size() > 4)
        text += " and " + std::to_string(children.size() - 4) + " more";
    return text;
}

std::string waitingParentHint(int pid)
{
    WaitingParent parent;
    if (!readWaitingParent(pid, parent))
        return {};
    return "process " + std::to_string(pid) + " (" + parent.name + ") is " + describeWaitingParent(parent) +
           ": the work is the child's, not its own. To profile it, attach to the child (--pid " +
           std::to_string(parent.children.front().first) + ").";
}

std::string ProcessScanner::userName(uint32_t uid)
{
    auto it = m_userNames.find(uid);
    if (it != m_userNames.end())
        return it->second;
    passwd pw{};
    passwd *found = nullptr;
    char buffer[4096];
    std::string name =
        getpwuid_r(uid, &pw, buffer, sizeof buffer, &found) == 0 && found ? pw.pw_name : std::to_string(uid);
    m_userNames.emplace(uid, name);
    return name;
}

std::vector<ProcessEntry> ProcessScanner::scan()
{
    const uint32_t me = getuid();
    const bool root = me == 0;
    const int scope = yamaPtraceScope();
    const int self = getpid();
    const int64_t now = monotonicNs();
    const double wallTicks = m_previousScanNs > 0 ? (now - m_previousScanNs) * 1e-9 * sysconf(_SC_CLK_TCK) : 0;
    std::unordered_map<int, Previous> current;
    std::vector<ProcessEntry> out;

    DIR *dir = opendir("/proc");
    if (!dir)
        return out;
    while (dirent *entry = readdir(dir)) {
        const int pid = std::atoi(entry->d_name);
        if (pid <= 0)
            continue;
        char state = 0;
        uint64_t ticks = 0;
        if (!readStat(pid, state, ticks))
            continue; // gone meanwhile
        ProcessEntry p;
        p.pid = pid;
        p.uid = ownerOf(pid);
        p.user = userName(p.uid);
        p.own = p.uid == me;
        const std::string base = "/proc/" + std::to_string(pid);
        p.name = readProcFile(base + "/comm");
        if (!p.name.empty() && p.name.back() == '\n')
            p.name.pop_back();
        p.commandLine = readProcFile(base + "/cmdline");
        while (!p.commandLine.empty() && p.commandLine.back() == '\0')
            p.commandLine.pop_back();
        std::replace(p.commandLine.begin(), p.commandLine.end(), '\0', ' ');
        if (auto prev = m_previous.find(pid); prev != m_previous.end() && wallTicks > 0 && ticks >= prev->second.ticks)
            p.cpuPercent = 100.0 * static_cast<double>(ticks - prev->second.ticks) / wallTicks;
        current[pid] = Previous{ticks};

        if (p.commandLine.empty() && state != 'Z') {
            p.traceable = false;
            p.reason = "kernel thread: it has no user-space code to sample";
        } else if (state == 'Z') {
            p.traceable = false;
            p.reason = "zombie: the process has exited";
        } else if (pid == self) {
            p.traceable = false;
            p.reason = "Emberline itself";
        } else if (scope >= 3) {
            p.traceable = false;
            p.reason = "attaching is disabled on this system (kernel.yama.ptrace_scope = 3)";
        } else if (!root && !p.own) {
            p.traceable = false;
            p.reason = "belongs to " + p.user + ": profiling another user's process needs root or CAP_SYS_PTRACE";
        }
        if (WaitingParent parent; p.traceable && waitsForChildren(pid, state, p.name, parent))
            p.waiting = describeWaitingParent(parent);
        out.push_back(std::move(p));
    }
    closedir(dir);
    m_previous = std::move(current);
    m_previousScanNs = now;
    std::stable_sort(out.begin(), out.end(), [](const ProcessEntry &a, const ProcessEntry &b) {
        if (a.own != b.own)
            return a.own;
        if (a.traceable != b.traceable)
            return a.traceable;
        if (a.cpuPercent != b.cpuPercent)
            return a.cpuPercent > b.cpuPercent;
        return a.pid > b.pid;
    });
    return out;
}

} // namespace emberline::engine
