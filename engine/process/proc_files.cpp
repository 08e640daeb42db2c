#include "engine/process/proc_files.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace emberline::engine {

std::string readProcFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::string readThreadName(int pid, int tid)
{
    std::string name = readProcFile("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
    while (!name.empty() && name.back() == '\n')
        name.pop_back();
    return name;
}

ThreadState threadStateFromStat(const std::string &stat)
{
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size())
        return ThreadState::Unknown;
    switch (stat[close + 2]) {
    case 'R':
        return ThreadState::Running;
    case 'S':
    case 'I':
        return ThreadState::Sleeping;
    case 'D':
        return ThreadState::DiskWait;
    case 'T':
    case 't':
        return ThreadState::Stopped;
    default:
        return ThreadState::Unknown;
    }
}

std::string readTaskFile(int &fd, int pid, int tid, const char *name)
{
    if (fd < 0) {
        const std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/" + name;
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    char buf[1024];
    const ssize_t n = fd >= 0 ? ::pread(fd, buf, sizeof buf, 0) : -1;
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

ThreadState readThreadState(int &statFd, int pid, int tid)
{
    const std::string stat = readTaskFile(statFd, pid, tid, "stat");
    return stat.empty() ? ThreadState::Unknown : threadStateFromStat(stat);
}

bool readSchedstat(int fd, uint64_t &cpuNs, uint64_t &runDelayNs, uint64_t &runs)
{
    char buf[128];
    const ssize_t n = fd >= 0 ? ::pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return false;
    buf[n] = '\0';
    char *end = nullptr;
    cpuNs = std::strtoull(buf, &end, 10);
    runDelayNs = std::strtoull(end, &end, 10);
    runs = std::strtoull(end, nullptr, 10);
    return true;
}

bool findMapping(int pid, uint64_t address, uint64_t &start, uint64_t &end, std::string *path)
{
    std::FILE *maps = std::fopen(("/proc/" + std::to_string(pid) + "/maps").c_str(), "re");
    if (!maps)
        return false;
    bool found = false;
    char line[512];
    while (!found && std::fgets(line, sizeof line, maps)) {
        unsigned long long from = 0, to = 0;
        int pathAt = 0;
        if (std::sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &from, &to, &pathAt) >= 2 && address >= from &&
            address < to) {
            start = from;
            end = to;
            found = true;
            if (path) {
                path->assign(pathAt > 0 ? line + pathAt : "");
                while (!path->empty() && path->back() != '\n' && std::fgets(line, sizeof line, maps))
                    path->append(line); // a path longer than the buffer
                if (!path->empty() && path->back() == '\n')
                    path->pop_back();
                continue;
            }
        }
        // A line longer than the buffer (a long path) continues in the next read: skip its rest.
        while (!std::strchr(line, '\n') && std::fgets(line, sizeof line, maps)) {}
    }
    std::fclose(maps);
    return found;
}

double allowedCpus(int pid)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(pid, sizeof set, &set) != 0)
        return std::max(1u, std::thread::hardware_concurrency());
    return std::max(1, CPU_COUNT(&set));
}

bool haveEffectiveCapability(int capability)
{
    const std::string status = readProcFile("/proc/self/status");
    const size_t at = status.find("\nCapEff:");
    if (at == std::string::npos || capability < 0 || capability > 63)
        return false;
    const unsigned long long effective = std::strtoull(status.c_str() + at + 8, nullptr, 16);
    return (effective >> capability) & 1;
}

int yamaPtraceScope()
{
    const std::string scope = readProcFile("/proc/sys/kernel/yama/ptrace_scope");
    return scope.empty() ? 0 : std::atoi(scope.c_str());
}

} // namespace emberline::engine
