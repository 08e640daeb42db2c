#include "engine/sampler/ptrace_tracer.h"

#include "engine/common/clock.h"
#include "engine/process/launcher.h"
#include "engine/process/proc_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace emberline::engine {
namespace {

bool isStopSignal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

// How often the thread count is looked at: threads that start in between are found at most this late, and their
// first look only sets their baseline anyway.
constexpr int64_t kThreadCheckNs = 50'000'000;

} // namespace

PtraceTracer::PtraceTracer(int pid, bool launched, std::function<void(int tid)> forgotten)
    : m_pid(pid), m_launched(launched), m_forgotten(std::move(forgotten))
{
}

PtraceTracer::~PtraceTracer()
{
    if (m_taskDirFd >= 0)
        ::close(m_taskDirFd);
}

Status PtraceTracer::seize(int tid, bool first)
{
    long options = PTRACE_O_TRACEEXEC;
    if (m_launched)
        options |= PTRACE_O_EXITKILL; // a launched target does not outlive a crashed profiler
    // NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace takes its data and the remote stack as pointers
    if (::ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void *>(options)) != 0) {
        const int err = errno;
        if (!first && err == ESRCH)
            return Ok{}; // the thread ended while we listed it
        if (err == EPERM || err == EACCES) {
            return makeError(Error::Code::Permission,
                             "not allowed to trace process " + std::to_string(m_pid) +
                                 ": it belongs to another user, is already traced (by a debugger?), or "
                                 "kernel.yama.ptrace_scope (" +
                                 std::to_string(yamaPtraceScope()) +
                                 ") forbids attaching to a process that is not our child. Run Emberline as "
                                 "root or with CAP_SYS_PTRACE, set kernel.yama.ptrace_scope=0, or launch the "
                                 "program from Emberline");
        }
        if (err == ESRCH)
            return makeError(Error::Code::Invalid, "no process with pid " + std::to_string(tid));
        return makeError(Error::Code::Io, std::string("ptrace: ") + std::strerror(err));
    }
    m_threads.insert(tid);
    return Ok{};
}

bool PtraceTracer::threadListChanged()
{
    // /proc/PID/task has two links plus one per thread. A thread that ended stays counted until we reap it
    // (handleEvents), so an equal count means the same threads; the full listing runs anyway every 64
    // checks, in case a thread ended and another began between two looks. The count is looked at every
    // kThreadCheckNs rather than every round: at a hundred rounds a second that is one system call less a
    // round.
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    if (now < m_nextThreadCheckNs)
        return false;
    m_nextThreadCheckNs = now + kThreadCheckNs;
    ++m_threadChecks;
    if (m_taskDirFd < 0) {
        const std::string dir = "/proc/" + std::to_string(m_pid) + "/task";
        m_taskDirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    struct stat st {};
    if (m_taskDirFd < 0 || ::fstat(m_taskDirFd, &st) != 0 || m_threadChecks - m_lastListingCheck >= 64)
        return true;
    return st.st_nlink != m_threads.size() + 2;
}

void PtraceTracer::refreshThreads()
{
    if (!threadListChanged())
        return;
    m_lastListingCheck = m_threadChecks;
    const std::string dir = "/proc/" + std::to_string(m_pid) + "/task";
    DIR *d = ::opendir(dir.c_str());
    if (!d)
        return;
    while (dirent *e = ::readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        const int tid = std::atoi(e->d_name);
        if (!m_threads.count(tid))
            (void)seize(tid, false);
    }
    ::closedir(d);
}

void PtraceTracer::forget(int tid)
{
    if (m_threads.erase(tid) != 0)
        m_forgotten(tid);
}

void PtraceTracer::handleStop(int tid, int status)
{
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        if (tid == m_pid) {
            m_exited = true;
            m_exitStatus = shellExitStatus(status);
        }
        forget(tid);
        m_exitedThreads.push_back(tid);
        return;
    }
    if (!WIFSTOPPED(status))
        return;
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    if (event == PTRACE_EVENT_EXEC) {
        m_execPending = true;
        m_execNs = uint64_t(clockNs(CLOCK_MONOTONIC));
        ::ptrace(PTRACE_CONT, tid, nullptr, nullptr);
    } else if (event == PTRACE_EVENT_STOP) {
        // A group-stop (the user stopped the program) stays stopped; any other event-stop is ours or stale.
        if (isStopSignal(sig))
            ::ptrace(PTRACE_LISTEN, tid, nullptr, nullptr);
        else
            ::ptrace(PTRACE_CONT, tid, nullptr, nullptr);
    } else if (event != 0) {
        ::ptrace(PTRACE_CONT, tid, nullptr, nullptr);
    } else {
        // A signal on its way to the target: deliver it at once.
        m_lastSignalNs = clockNs(CLOCK_MONOTONIC);
        // NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace takes its data and the remote stack as pointers
        ::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void *>(static_cast<long>(sig)));
    }
}

void PtraceTracer::handleEvents()
{
    // One look across all our children first: usually nothing is pending, and one system call then replaces
    // one per thread. WNOWAIT leaves a child that is not one of our threads (another part of the program
    // may have children) to its owner; then every thread is asked in turn.
    for (int guard = 0; guard < 4096; ++guard) {
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) != 0) {
            sweepEvents(); // no children left (each thread is then forgotten), or waitid cannot look
            break;
        }
        if (info.si_pid == 0)
            break; // nothing pending
        const int tid = info.si_pid;
        int status = 0;
        if (!m_threads.count(tid) || ::waitpid(tid, &status, WNOHANG | __WALL) != tid) {
            sweepEvents();
            break;
        }
        handleStop(tid, status);
    }
    if (m_threads.empty() && !m_exited && ::kill(m_pid, 0) != 0 && errno == ESRCH)
        m_exited = true; // an attached process ended and was reaped by its own parent
}

void PtraceTracer::sweepEvents()
{
    const std::vector<int> tids(m_threads.begin(), m_threads.end());
    for (int tid : tids) {
        int status = 0;
        while (m_threads.count(tid)) {
            const pid_t r = ::waitpid(tid, &status, WNOHANG | __WALL);
            if (r == tid) {
                handleStop(tid, status);
            } else {
                if (r < 0 && errno == ECHILD)
                    forget(tid);
                break;
            }
        }
    }
}

bool PtraceTracer::waitForInterruptStop(int tid, int &groupStopSignal)
{
    groupStopSignal = 0;
    for (int attempts = 0; attempts < 16; ++attempts) {
        int status = 0;
        if (::waitpid(tid, &status, __WALL) != tid) {
            forget(tid);
            return false;
        }
        if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP) {
            if (isStopSignal(WSTOPSIG(status)))
                groupStopSignal = WSTOPSIG(status);
            return true;
        }
        handleStop(tid, status); // a signal or exec on the way: pass it on, the interrupt stop follows
        if (!m_threads.count(tid))
            return false;
    }
    return false;
}

void PtraceTracer::detachAll()
{
    for (int tid : m_threads) {
        if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0)
            continue;
        for (int attempts = 0; attempts < 16; ++attempts) {
            int status = 0;
            if (::waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status))
                break;
            const int event = status >> 16;
            if (event == 0) {
                // A signal was on its way: detaching delivers it.
                // NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace takes its data and the remote stack as pointers
                ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void *>(static_cast<long>(WSTOPSIG(status))));
                break;
            }
            if (event == PTRACE_EVENT_STOP) {
                ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
                break;
            }
            ::ptrace(PTRACE_CONT, tid, nullptr, nullptr);
        }
    }
    const std::vector<int> all(m_threads.begin(), m_threads.end());
    for (int tid : all)
        forget(tid);
    if (m_taskDirFd >= 0)
        ::close(m_taskDirFd);
    m_taskDirFd = -1;
}

} // namespace emberline::engine
