#include "engine/sampler/ptrace_sampler.h"

#include "engine/common/clock.h"

#include "engine/unwind/unwinder.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

namespace emberline::engine {
namespace {

std::string readFile(const std::string &path)
{
    std::ifstream f(path);
    std::string s;
    std::getline(f, s, '\0');
    return s;
}

int ptraceScope()
{
    std::ifstream f("/proc/sys/kernel/yama/ptrace_scope");
    int v = -1;
    f >> v;
    return v;
}

ThreadState stateFromStat(const std::string &stat)
{
    // "tid (comm) S ...": the comm may hold spaces or parentheses, so look after the last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size())
        return ThreadState::Unknown;
    switch (stat[close + 2]) {
    case 'R': return ThreadState::Running;
    case 'S': case 'I': return ThreadState::Sleeping;
    case 'D': return ThreadState::DiskWait;
    case 'T': case 't': return ThreadState::Stopped;
    default: return ThreadState::Unknown;
    }
}

bool isStopSignal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

int shellStatus(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

} // namespace

PtraceSampler::~PtraceSampler()
{
    release();
}

Result<std::unique_ptr<PtraceSampler>> PtraceSampler::openForLaunch(int childPid, const PtraceSamplerOptions &options)
{
    std::unique_ptr<PtraceSampler> s(new PtraceSampler);
    s->m_options = options;
    s->m_pid = childPid;
    s->m_launched = true;
    if (auto st = s->seize(childPid, true); !st)
        return st.error();
    s->m_startNs = clockNs(CLOCK_MONOTONIC);
    s->m_intervalNs = 1'000'000'000 / std::max(1, options.frequency);
    s->m_nextRoundNs = s->m_startNs + s->m_intervalNs;
    return s;
}

Result<std::unique_ptr<PtraceSampler>> PtraceSampler::openForAttach(int pid, const PtraceSamplerOptions &options)
{
    if (::kill(pid, 0) != 0 && errno == ESRCH)
        return makeError(Error::Code::Invalid, "no process with pid " + std::to_string(pid));
    std::unique_ptr<PtraceSampler> s(new PtraceSampler);
    s->m_options = options;
    s->m_pid = pid;
    if (auto st = s->seize(pid, true); !st)
        return st.error();
    s->refreshThreads();
    s->m_startNs = clockNs(CLOCK_MONOTONIC);
    s->m_intervalNs = 1'000'000'000 / std::max(1, options.frequency);
    s->m_nextRoundNs = s->m_startNs + s->m_intervalNs;
    return s;
}

Status PtraceSampler::seize(int tid, bool first)
{
    long options = PTRACE_O_TRACEEXEC;
    if (m_launched)
        options |= PTRACE_O_EXITKILL; // a launched target does not outlive a crashed profiler
    if (::ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void *>(options)) != 0) {
        const int err = errno;
        if (!first && err == ESRCH)
            return Ok{}; // the thread ended while we listed it
        if (err == EPERM || err == EACCES) {
            return makeError(Error::Code::Permission,
                             "not allowed to trace process " + std::to_string(m_pid) +
                                 ": it belongs to another user, is already traced (by a debugger?), or "
                                 "kernel.yama.ptrace_scope (" + std::to_string(ptraceScope()) +
                                 ") forbids attaching to a process that is not our child. Run Emberline as "
                                 "root or with CAP_SYS_PTRACE, set kernel.yama.ptrace_scope=0, or launch the "
                                 "program from Emberline");
        }
        if (err == ESRCH)
            return makeError(Error::Code::Invalid, "no process with pid " + std::to_string(tid));
        return makeError(Error::Code::Io, std::string("ptrace: ") + std::strerror(err));
    }
    m_threads[tid].seized = true;
    return Ok{};
}

void PtraceSampler::refreshThreads()
{
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

void PtraceSampler::forget(int tid)
{
    auto it = m_threads.find(tid);
    if (it == m_threads.end())
        return;
    if (it->second.statFd >= 0)
        ::close(it->second.statFd);
    if (it->second.schedstatFd >= 0)
        ::close(it->second.schedstatFd);
    m_threads.erase(it);
}

void PtraceSampler::handleStop(int tid, int status)
{
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        if (tid == m_pid) {
            m_exited = true;
            m_exitStatus = shellStatus(status);
        }
        forget(tid);
        return;
    }
    if (!WIFSTOPPED(status))
        return;
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    if (event == PTRACE_EVENT_EXEC) {
        m_execPending = true;
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
        ::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void *>(static_cast<long>(sig)));
    }
}

void PtraceSampler::handleEvents()
{
    std::vector<int> tids;
    for (const auto &[tid, t] : m_threads)
        tids.push_back(tid);
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
    if (m_threads.empty() && !m_exited && ::kill(m_pid, 0) != 0 && errno == ESRCH)
        m_exited = true; // an attached process ended and was reaped by its own parent
}

bool PtraceSampler::readThreadClock(int tid, Captured &out)
{
    Thread &t = m_threads[tid];
    if (t.statFd < 0) {
        const std::string base = "/proc/" + std::to_string(m_pid) + "/task/" + std::to_string(tid);
        t.statFd = ::open((base + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
        t.schedstatFd = ::open((base + "/schedstat").c_str(), O_RDONLY | O_CLOEXEC);
    }
    char buf[512];
    const ssize_t n = t.statFd >= 0 ? ::pread(t.statFd, buf, sizeof buf - 1, 0) : -1;
    const ssize_t m = t.schedstatFd >= 0 ? ::pread(t.schedstatFd, buf + 256, 255, 0) : -1;
    if (n <= 0 || m <= 0)
        return false;
    buf[std::min<ssize_t>(n, 255)] = '\0';
    buf[256 + m] = '\0';
    out.sample.state = stateFromStat(buf);
    out.cpuNs = std::strtoull(buf + 256, nullptr, 10);
    return true;
}

bool PtraceSampler::waitForInterruptStop(int tid, int &groupStopSignal)
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

void PtraceSampler::copyStoppedThread(int tid, Captured &out)
{
    user_regs_struct regs {};
    out.regs.clear();
    out.stack.clear();
    if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0)
        return;
    out.stack.resize(m_options.stackBytes);
    iovec local{out.stack.data(), out.stack.size()};
    iovec remote{reinterpret_cast<void *>(regs.rsp), out.stack.size()};
    ssize_t n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n < 0) {
        // The range runs past the end of the stack mapping: read up to the page boundary.
        remote.iov_len = local.iov_len = 4096 - (regs.rsp & 4095);
        n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    }
    out.stack.resize(n > 0 ? static_cast<size_t>(n) : 0);
    out.regs.assign(RegCount, 0);
    out.regs[RegAX] = regs.rax;
    out.regs[RegBX] = regs.rbx;
    out.regs[RegCX] = regs.rcx;
    out.regs[RegDX] = regs.rdx;
    out.regs[RegSI] = regs.rsi;
    out.regs[RegDI] = regs.rdi;
    out.regs[RegBP] = regs.rbp;
    out.regs[RegSP] = regs.rsp;
    out.regs[RegIP] = regs.rip;
    const unsigned long long r8to15[] = {regs.r8, regs.r9, regs.r10, regs.r11, regs.r12, regs.r13, regs.r14, regs.r15};
    for (int i = 0; i < 8; ++i)
        out.regs[RegR8 + i] = r8to15[i];
    out.sample.ip = regs.rip;
}

void PtraceSampler::sampleRound(SampleSink &sink)
{
    const int64_t cpuBefore = clockNs(CLOCK_THREAD_CPUTIME_ID);
    refreshThreads();
    // All threads are asked to stop at once and waited for together, so the scheduler runs them into their
    // stops in parallel; each is let go as soon as its registers and stack are copied. Unwinding happens
    // afterwards, while the target runs.
    std::vector<int> tids;
    for (const auto &[tid, t] : m_threads)
        tids.push_back(tid);
    if (m_captured.size() < tids.size())
        m_captured.resize(tids.size());
    std::vector<uint8_t> interrupted(tids.size(), 0);
    for (size_t i = 0; i < tids.size(); ++i) {
        // State and CPU time first: once stopped, the thread reads as traced.
        if (readThreadClock(tids[i], m_captured[i]) && ::ptrace(PTRACE_INTERRUPT, tids[i], nullptr, nullptr) == 0)
            interrupted[i] = 1;
    }
    size_t used = 0;
    for (size_t i = 0; i < tids.size(); ++i) {
        if (!interrupted[i])
            continue;
        const int tid = tids[i];
        int groupStopSignal = 0;
        if (!waitForInterruptStop(tid, groupStopSignal))
            continue;
        Captured &c = m_captured[i];
        copyStoppedThread(tid, c);
        ::ptrace(groupStopSignal ? PTRACE_LISTEN : PTRACE_CONT, tid, nullptr, nullptr);

        const uint64_t now = static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC));
        Thread &t = m_threads[tid];
        const bool first = !t.baseline;
        c.sample.kind = RawSample::Kind::Periodic;
        c.sample.pid = static_cast<uint32_t>(m_pid);
        c.sample.tid = static_cast<uint32_t>(tid);
        c.sample.timeNs = now;
        c.sample.period = first ? 0 : c.cpuNs - std::min(c.cpuNs, t.lastCpuNs);
        c.sample.wallNs = first ? 0 : now - t.lastWallNs;
        t.baseline = true;
        t.lastCpuNs = c.cpuNs;
        t.lastWallNs = now;
        // The first look at a thread only sets its baseline.
        if (!first && !c.regs.empty()) {
            if (used != i)
                std::swap(m_captured[used], c);
            ++used;
        }
    }
    for (size_t i = 0; i < used; ++i) {
        Captured &c = m_captured[i];
        c.sample.regs = c.regs;
        c.sample.stack = c.stack;
        sink.onSample(c.sample);
    }
    ++m_rounds;

    // Throttle: a round may use at most maxOverheadPercent of the interval that follows it.
    const int64_t cost = clockNs(CLOCK_THREAD_CPUTIME_ID) - cpuBefore;
    const int64_t base = 1'000'000'000 / std::max(1, m_options.frequency);
    const auto needed = static_cast<int64_t>(static_cast<double>(cost) * 100.0 / m_options.maxOverheadPercent);
    m_intervalNs = std::max(base, (m_intervalNs * 3 + std::max(base, needed)) / 4);
    if (needed > m_intervalNs)
        m_intervalNs = needed; // never fall behind the budget, even for one round
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    m_nextRoundNs = std::max(m_nextRoundNs + m_intervalNs, now + m_intervalNs / 2);
}

void PtraceSampler::wait(int timeoutMs)
{
    // Short naps: signals for the target wait in our queue until handleEvents() passes them on.
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    const int64_t until = std::min<int64_t>(now + std::min(timeoutMs, 5) * 1'000'000LL, m_nextRoundNs);
    if (until > now)
        std::this_thread::sleep_for(std::chrono::nanoseconds(until - now));
}

size_t PtraceSampler::drain(SampleSink &sink)
{
    handleEvents();
    if (m_execPending) {
        m_execPending = false;
        std::string comm = readFile("/proc/" + std::to_string(m_pid) + "/comm");
        while (!comm.empty() && comm.back() == '\n')
            comm.pop_back();
        sink.onComm(static_cast<uint32_t>(m_pid), static_cast<uint32_t>(m_pid), comm, true);
        // exec leaves one thread; the others' tracing ended with them.
        std::vector<int> gone;
        for (const auto &[tid, t] : m_threads) {
            if (tid != m_pid)
                gone.push_back(tid);
        }
        for (int tid : gone)
            forget(tid);
    }
    if (m_paused || m_exited || m_released || clockNs(CLOCK_MONOTONIC) < m_nextRoundNs)
        return 0;
    const uint64_t before = m_rounds;
    sampleRound(sink);
    return m_rounds - before;
}

bool PtraceSampler::targetExited(int &exitStatus)
{
    handleEvents();
    exitStatus = m_exitStatus;
    return m_exited;
}

void PtraceSampler::release()
{
    if (m_released)
        return;
    m_released = true;
    handleEvents();
    for (auto &[tid, t] : m_threads) {
        if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0)
            continue;
        for (int attempts = 0; attempts < 16; ++attempts) {
            int status = 0;
            if (::waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status))
                break;
            const int event = status >> 16;
            if (event == 0) {
                // A signal was on its way: detaching delivers it.
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
    std::vector<int> all;
    for (const auto &[tid, t] : m_threads)
        all.push_back(tid);
    for (int tid : all)
        forget(tid);
}

double PtraceSampler::effectiveRateHz() const
{
    const int64_t elapsed = clockNs(CLOCK_MONOTONIC) - m_startNs;
    return elapsed > 0 ? static_cast<double>(m_rounds) * 1e9 / static_cast<double>(elapsed) : 0;
}

std::string PtraceSampler::description() const
{
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "ptrace every thread at %d Hz asked (%.1f Hz effective), throttled to %.1f%% of a CPU, "
                  "%u KiB stacks, wall time",
                  m_options.frequency, effectiveRateHz(), m_options.maxOverheadPercent, m_options.stackBytes / 1024);
    return buf;
}

} // namespace emberline::engine
