#include "engine/inject/inject_checks.h"

#include "engine/common/fd_closer.h"
#include "engine/process/proc_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace emberline::engine {
namespace {

constexpr unsigned long kPfKthread = 0x00200000; // PF_KTHREAD in /proc/PID/stat's flags
constexpr int kCapSysPtrace = 19;

std::string procPath(int pid, const char *file)
{
    return "/proc/" + std::to_string(pid) + "/" + file;
}

// The value of a "Key:\tvalue" line of a status file; "" when absent.
std::string statusField(const std::string &status, const char *key)
{
    const std::string prefix = std::string(key) + ":";
    size_t at = status.starts_with(prefix) ? 0 : status.find("\n" + prefix);
    if (at == std::string::npos)
        return {};
    at += (at == 0 ? 0 : 1) + prefix.size();
    const size_t end = status.find('\n', at);
    std::string value = status.substr(at, end == std::string::npos ? std::string::npos : end - at);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
}

// The state letter and flags of a stat line ("pid (comm) S ppid ... flags ..."; comm may hold spaces or ')').
bool parseStat(const std::string &stat, char &state, unsigned long &flags)
{
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size())
        return false;
    state = stat[close + 2];
    std::istringstream rest(stat.substr(close + 3));
    std::string skip;
    // After the state: ppid pgrp session tty_nr tpgid, then flags (field 9).
    for (int i = 0; i < 5; ++i)
        rest >> skip;
    rest >> flags;
    return true;
}

bool threadAlive(int pid, int tid)
{
    char state = '?';
    unsigned long flags = 0;
    const std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
    return parseStat(stat, state, flags) && state != 'Z' && state != 'X';
}

} // namespace

Result<ProcessFacts> readProcessFacts(int pid)
{
    const std::string status = readProcFile(procPath(pid, "status"));
    const std::string stat = readProcFile(procPath(pid, "stat"));
    if (status.empty() || stat.empty())
        return makeError(Error::Code::Invalid, "no process with pid " + std::to_string(pid));
    ProcessFacts f;
    unsigned long flags = 0;
    parseStat(stat, f.state, flags);
    f.kernelThread = flags & kPfKthread;
    f.name = statusField(status, "Name");
    f.parent = std::atoi(statusField(status, "PPid").c_str());
    f.tracer = std::atoi(statusField(status, "TracerPid").c_str());
    f.seccomp = std::atoi(statusField(status, "Seccomp").c_str());
    std::sscanf(statusField(status, "Uid").c_str(), "%u %u %u %u", &f.uids[0], &f.uids[1], &f.uids[2], &f.uids[3]);
    std::sscanf(statusField(status, "Gid").c_str(), "%u %u %u %u", &f.gids[0], &f.gids[1], &f.gids[2], &f.gids[3]);
    return f;
}

Status checkProcess(int pid, const ProcessFacts &f)
{
    const std::string who = "process " + std::to_string(pid) + " (" + f.name + ")";
    if (f.state == 'Z' || f.state == 'X')
        return makeError(Error::Code::Invalid, who + " has exited (a zombie): there is no program left to load into");
    if (f.kernelThread)
        return makeError(Error::Code::Invalid,
                         who + " is a kernel thread: it has no user space to load a library into");
    if (f.tracer != 0)
        return makeError(Error::Code::Unsupported, who + " is traced by PID " + std::to_string(f.tracer) +
                                                       " (a debugger?): only one tracer may attach at a time");
    if (f.state == 'T' || f.state == 't')
        return makeError(Error::Code::Unsupported, who +
                                                       " is stopped (by SIGSTOP or a terminal's job control): "
                                                       "it is left stopped; continue it (kill -CONT " +
                                                       std::to_string(pid) + ") and try again");
    if (f.uids[0] != f.uids[1] || f.uids[0] != f.uids[2] || f.gids[0] != f.gids[1] || f.gids[0] != f.gids[2])
        return makeError(Error::Code::Permission,
                         who + " runs set-user-ID or set-group-ID (real uid " + std::to_string(f.uids[0]) +
                             ", effective " + std::to_string(f.uids[1]) + "; real gid " + std::to_string(f.gids[0]) +
                             ", effective " + std::to_string(f.gids[1]) + "): Emberline does not load code into it");
    if (f.seccomp == 1)
        return makeError(Error::Code::Unsupported, who + " runs in strict seccomp mode: any system call but read, "
                                                         "write and exit would kill it, and loading a library makes "
                                                         "many");
    // A vfork child runs in its parent's memory until it execs or exits: a library loaded into it would be loaded
    // into the parent behind the parent's back, on the parent's stack.
    if (f.parent > 0 && ::syscall(SYS_kcmp, pid, f.parent, KCMP_VM, 0, 0) == 0)
        return makeError(Error::Code::Unsupported,
                         who + " shares its memory with its parent " + std::to_string(f.parent) + " (a vfork child)");
    return Ok{};
}

Status checkDynamicallyLinked(int pid, const std::vector<TargetModule> &modules)
{
    bool loader = false;
    for (const TargetModule &m : modules)
        loader |= isDynamicLoader(m.path);
    FdCloser exe(::open(procPath(pid, "exe").c_str(), O_RDONLY | O_CLOEXEC));
    const bool interpreter = exe.fd < 0 || hasProgramInterpreter(exe.fd); // unreadable: the loader's mapping decides
    if (!loader || !interpreter)
        return makeError(Error::Code::Unsupported, "cannot load a library into a statically linked program (process " +
                                                       std::to_string(pid) + " has no dynamic loader)");
    return Ok{};
}

Result<int> chooseThread(int pid, int tid)
{
    if (tid > 0) {
        if (!threadAlive(pid, tid))
            return makeError(Error::Code::Invalid, "thread " + std::to_string(tid) +
                                                       " is not a live thread of process " + std::to_string(pid));
        return tid;
    }
    if (threadAlive(pid, pid))
        return pid;
    // The leader ended (pthread_exit in main) while other threads run: its task stays a zombie until they end.
    DIR *dir = ::opendir(procPath(pid, "task").c_str());
    int chosen = 0;
    while (dir && chosen == 0) {
        const dirent *entry = ::readdir(dir);
        if (!entry)
            break;
        const int candidate = std::atoi(entry->d_name);
        if (candidate > 0 && candidate != pid && threadAlive(pid, candidate))
            chosen = candidate;
    }
    if (dir)
        ::closedir(dir);
    if (chosen == 0)
        return makeError(Error::Code::Invalid, "process " + std::to_string(pid) + " has no live thread");
    return chosen;
}

std::string explainPtraceRefusal(int pid, const ProcessFacts &facts, int error)
{
    std::string text =
        "the system refused to let Emberline trace process " + std::to_string(pid) + " (" + std::strerror(error) + ")";
    if (error != EPERM)
        return text;
    std::vector<std::string> causes;
    const bool privileged = haveEffectiveCapability(kCapSysPtrace);
    const int scope = yamaPtraceScope();
    if (scope == 1 && !privileged)
        causes.push_back("kernel.yama.ptrace_scope is 1: a process may trace only its own descendants, unless it has "
                         "CAP_SYS_PTRACE (run as root, or set it to 0: sudo sysctl kernel.yama.ptrace_scope=0)");
    else if (scope == 2 && !privileged)
        causes.push_back("kernel.yama.ptrace_scope is 2: only processes with CAP_SYS_PTRACE (root) may trace");
    else if (scope == 3)
        causes.push_back("kernel.yama.ptrace_scope is 3: no process may trace another until the next boot");
    if (!privileged && facts.uids[1] != ::geteuid())
        causes.push_back("the process belongs to user " + std::to_string(facts.uids[1]) + " and Emberline runs as " +
                         std::to_string(::geteuid()));
    const std::string ownSeccomp = statusField(readProcFile("/proc/self/status"), "Seccomp");
    if (!ownSeccomp.empty() && ownSeccomp != "0")
        causes.push_back("Emberline runs under a seccomp filter (Seccomp: " + ownSeccomp +
                         "), which may forbid ptrace, as container runtimes' default profiles do");
    if (causes.empty())
        causes.push_back("the program may have made itself undumpable (prctl PR_SET_DUMPABLE), or a security module "
                         "(AppArmor, SELinux) forbids it");
    text += ": ";
    for (size_t i = 0; i < causes.size(); ++i)
        text += (i ? "; or " : "") + causes[i];
    return text;
}

} // namespace emberline::engine
