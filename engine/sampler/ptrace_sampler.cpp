#include "engine/sampler/ptrace_sampler.h"

#include "engine/common/clock.h"
#include "engine/process/launcher.h"
#include "engine/process/proc_files.h"

#include "engine/unwind/unwinder.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

namespace emberline::engine {
namespace {

bool isStopSignal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

// A thread that was asleep in a system call is stopped on its way out of it, with the call to be restarted:
// its result register holds one of the kernel's restart codes (ERESTARTSYS 512 to ERESTART_RESTARTBLOCK 516),
// or EINTR for the calls that are never restarted.
// A thread stopped in user code has no call in progress (orig_rax is -1), and one stopped on its way out of a
// call that did not wait has that call's own result. This spares a read of /proc/PID/task/TID/stat per thread
// and round, which was the dearest of the round's reads.
bool asleepInSyscall(const user_regs_struct &regs)
{
    const auto result = static_cast<long long>(regs.rax);
    return static_cast<long long>(regs.orig_rax) >= 0 && ((result >= -516 && result <= -512) || result == -EINTR);
}

// How often the thread count is looked at: threads that start in between are found at most this late, and their
// first look only sets their baseline anyway.
constexpr int64_t kThreadCheckNs = 50'000'000;

// Rounds between two searches for a thread's stack mapping that found none.
constexpr uint64_t kStackLookupRounds = 64;

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
    s->start();
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
    s->start();
    return s;
}

void PtraceSampler::start()
{
    m_startNs = clockNs(CLOCK_MONOTONIC);
    m_lastOwnCpuNs = clockNs(CLOCK_THREAD_CPUTIME_ID);
    m_targetCpus = allowedCpus(m_pid);
    m_intervalNs = 1'000'000'000 / std::max(1, m_options.frequency);
    // Until rounds have been measured, expect one to cost what the budget allows at the asked frequency.
    m_budget.emplace(m_options.maxOverheadPercent, m_startNs,
                     static_cast<int64_t>(static_cast<double>(m_intervalNs) * m_options.maxOverheadPercent / 100));
    m_nextRoundNs = m_startNs + m_intervalNs;
}

void PtraceSampler::countHelperCpu(std::function<int64_t()> cpuNs)
{
    m_helperCpu = std::move(cpuNs);
    m_lastHelperCpuNs = m_helperCpu ? m_helperCpu() : 0;
}

Status PtraceSampler::seize(int tid, bool first)
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
                                 "kernel.yama.ptrace_scope (" + std::to_string(yamaPtraceScope()) +
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

bool PtraceSampler::threadListChanged()
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

void PtraceSampler::refreshThreads()
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

void PtraceSampler::forget(int tid)
{
    auto it = m_threads.find(tid);
    if (it == m_threads.end())
        return;
    if (it->second.schedstatFd >= 0)
        ::close(it->second.schedstatFd);
    if (it->second.statFd >= 0)
        ::close(it->second.statFd);
    m_threads.erase(it);
}

void PtraceSampler::handleStop(int tid, int status)
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

void PtraceSampler::handleEvents()
{
    m_eventsFresh = true;
    // One look across all our children first: usually nothing is pending, and one system call then replaces
    // one per thread. WNOWAIT leaves a child that is not one of our threads (another part of the program
    // may have children) to its owner; then every thread is asked in turn.
    for (int guard = 0; guard < 4096; ++guard) {
        siginfo_t info {};
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

void PtraceSampler::sweepEvents()
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
}

bool PtraceSampler::readThreadClock(int tid, Captured &out)
{
    Thread &t = m_threads[tid];
    if (t.schedstatFd < 0) {
        const std::string path = "/proc/" + std::to_string(m_pid) + "/task/" + std::to_string(tid) + "/schedstat";
        t.schedstatFd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    return readSchedstat(t.schedstatFd, out.cpuNs, out.runDelayNs, out.runs);
}

ThreadState PtraceSampler::readKernelState(Thread &t, int tid)
{
    if (t.statFd < 0) {
        const std::string path = "/proc/" + std::to_string(m_pid) + "/task/" + std::to_string(tid) + "/stat";
        t.statFd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    char buf[512];
    const ssize_t n = t.statFd >= 0 ? ::pread(t.statFd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return ThreadState::Unknown;
    buf[n] = '\0';
    return threadStateFromStat(buf);
}

// A thread last seen waiting (or stopped) that has used no CPU since has not moved: its stack is the one already
// delivered, and it still waits. One last seen running is stopped again even so: the kernel adds a running
// thread's CPU time up only at ticks and switches, so an unchanged count does not prove it stood still.
bool PtraceSampler::hasNotMoved(const Thread &t, const Captured &c) const
{
    if (!t.delivered || t.lastState == ThreadState::Running)
        return false;
    return c.cpuNs == t.lastCpuNs || (t.quietStop && c.runs == t.runsAtStop + 1);
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

void PtraceSampler::copyStoppedThread(int tid, Thread &t, Captured &out)
{
    user_regs_struct regs {};
    out.regs.clear();
    out.stack.clear();
    if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0)
        return;
    out.asleep = asleepInSyscall(regs);
    // Only the stack in use: from the stack pointer to the end of the thread's stack mapping. A shallow stack
    // is a page or two, where a copy of the whole limit would pin and copy eight (most of the stop's time).
    size_t bytes = m_options.stackBytes;
    if (regs.rsp >= t.stackStart && regs.rsp < t.stackEnd)
        bytes = std::min<uint64_t>(bytes, t.stackEnd - regs.rsp);
    else
        t.stackSp = regs.rsp;
    out.stack.resize(bytes);
    iovec local{out.stack.data(), out.stack.size()};
    // NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace takes its data and the remote stack as pointers
    iovec remote{reinterpret_cast<void *>(regs.rsp), out.stack.size()};
    ssize_t n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n < 0) {
        // The range runs past the end of the stack mapping: read up to the page boundary.
        remote.iov_len = local.iov_len = 4096 - (regs.rsp & 4095);
        n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    }
    out.stack.resize(n > 0 ? static_cast<size_t>(n) : 0);
    out.sample.stackLimit = m_options.stackBytes;
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

// Finds the mapping that holds the stack pointer a copy could not place. While the thread is running again: a
// read of /proc/PID/maps is far dearer than a round. A pointer outside every mapping (or a failed read) is
// tried again some rounds later; until then copies take the whole limit.
void PtraceSampler::lookUpStack(Thread &t)
{
    const uint64_t sp = t.stackSp;
    t.stackSp = 0;
    if (m_rounds < t.nextStackLookupRound)
        return;
    uint64_t start = 0, end = 0;
    const bool found = findMapping(m_pid, sp, start, end);
    if (found) {
        t.stackStart = start;
        t.stackEnd = end;
    }
    // A thread whose stack pointer moves between mappings (a signal stack, coroutines) is not looked up again at
    // once either.
    t.nextStackLookupRound = m_rounds + (found ? kStackLookupRounds / 8 : kStackLookupRounds);
}

void PtraceSampler::sampleRound(SampleSink &sink)
{
    const int64_t roundStart = clockNs(CLOCK_MONOTONIC);
    refreshThreads();
    // All threads are asked to stop at once and waited for together, so the scheduler runs them into their
    // stops in parallel; each is let go as soon as its registers and stack are copied. Unwinding happens
    // afterwards, while the target runs. (Stopping in batches instead leaves each batch waiting for its
    // threads to get a CPU among all the others still running: rounds of a second with 64 busy threads.)
    std::vector<int> &tids = m_tids;
    tids.clear();
    for (const auto &[tid, t] : m_threads)
        tids.push_back(tid);
    if (m_captured.size() < tids.size())
        m_captured.resize(tids.size());
    m_looks.assign(tids.size(), Look::Skipped);
    m_stopped.clear();
    double targetDemand = 0;
    size_t used = 0;
    for (size_t i = 0; i < tids.size(); ++i) {
        Captured &c = m_captured[i];
        Thread &t = m_threads[tids[i]];
        c.kernelState = ThreadState::Unknown;
        // A thread last found running is stopped whatever its clock says, so it is asked first and its clock
        // read while it gets to its stop: by the time we wait for it, it has often stopped, and we do not sleep
        // in waitpid and wait to be woken, time during which the target stays stopped.
        const bool running = t.baseline && t.lastState == ThreadState::Running;
        if (running) {
            c.stopFromNs = clockNs(CLOCK_MONOTONIC);
            if (::ptrace(PTRACE_INTERRUPT, tids[i], nullptr, nullptr) == 0)
                m_looks[i] = Look::Interrupted;
        }
        // Otherwise CPU time first: it says whether the thread has moved at all.
        if (!readThreadClock(tids[i], c)) {
            if (!running)
                continue;
            c.cpuNs = t.lastCpuNs; // ended meanwhile, most likely: the wait for its stop says
            c.runDelayNs = t.lastRunDelayNs;
        }
        targetDemand += t.demand;
        if (running)
            continue;
        // The first look only sets the baseline of its CPU and wall time: no need to stop it.
        if (!t.baseline) {
            m_looks[i] = Look::Baseline;
            c.sample.sameStack = false;
            continue;
        }
        // A thread last seen waiting: the kernel says how (sleep, disk wait, stopped), before a stop makes it
        // read as traced.
        c.kernelState = readKernelState(t, tids[i]);
        // Waiting and no CPU time since its previous sample: it has not moved, so its stack is the one already
        // delivered. Not stopping it also leaves a thread in disk wait or group-stop alone.
        if (hasNotMoved(t, c)) {
            m_looks[i] = Look::Unchanged;
            continue;
        }
        c.stopFromNs = clockNs(CLOCK_MONOTONIC);
        if (::ptrace(PTRACE_INTERRUPT, tids[i], nullptr, nullptr) == 0)
            m_looks[i] = Look::Interrupted;
    }
    for (size_t i = 0; i < tids.size(); ++i) {
        const int tid = tids[i];
        Captured &c = m_captured[i];
        if (m_looks[i] == Look::Unchanged) {
            c.sample.state = c.kernelState != ThreadState::Unknown ? c.kernelState : m_threads[tid].lastState;
            c.regs.clear();
            c.stack.clear();
            c.sample.ip = 0;
            c.sample.sameStack = true;
        } else if (m_looks[i] == Look::Interrupted) {
            int groupStopSignal = 0;
            if (!waitForInterruptStop(tid, groupStopSignal))
                continue;
            Thread &t = m_threads[tid];
            copyStoppedThread(tid, t, c);
            // Disk wait, which a stop cannot tell (the thread stops once its wait is over), as the kernel said it.
            c.sample.state = groupStopSignal                            ? ThreadState::Stopped
                             : c.kernelState == ThreadState::DiskWait ? ThreadState::DiskWait
                             : c.asleep                               ? ThreadState::Sleeping
                                                                      : ThreadState::Running;
            uint64_t cpu = 0, waited = 0;
            t.quietStop = c.sample.state != ThreadState::Running &&
                          readSchedstat(t.schedstatFd, cpu, waited, t.runsAtStop);
            // The stop ends when the thread is let go. Read the clock before: once resumed, the thread may
            // take this CPU from us for a while, which is not time it spent stopped.
            c.stopToNs = clockNs(CLOCK_MONOTONIC);
            ::ptrace(groupStopSignal ? PTRACE_LISTEN : PTRACE_CONT, tid, nullptr, nullptr);
            if (t.stackSp)
                lookUpStack(t);
            c.sample.sameStack = false;
            ++m_stops;
        } else if (m_looks[i] != Look::Baseline) {
            continue;
        }
        const uint64_t now = static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC));
        if (m_looks[i] == Look::Interrupted)
            m_stopped.push_back({c.stopFromNs, c.stopToNs, m_threads[tid].demand});
        const bool deliver = m_threads[tid].baseline && (c.sample.sameStack || !c.regs.empty());
        finishSample(tid, c, now);
        if (deliver) {
            if (used != i)
                std::swap(m_captured[used], c);
            ++used;
        }
    }
    for (size_t i = 0; i < used; ++i) {
        Captured &c = m_captured[i];
        c.sample.regs = c.regs;
        c.sample.stack = c.stack;
        m_repeats += c.sample.sameStack ? 1 : 0;
        sink.onSample(c.sample);
    }
    ++m_rounds;

    // The target's side: its kernel time per stop, and the CPU it could not use while threads were held.
    // The sampler's own CPU (one of the CPUs) is counted as its own cost.
    const int64_t targetCost = static_cast<int64_t>(m_stopped.size()) * m_options.stopCostNs +
                               stoppedTargetCpuNs(m_stopped, targetDemand, m_targetCpus - 1);
    account(roundStart, targetCost);
}

// Fills in the sample's deltas and moves the thread's baseline to now; the first look only sets it.
void PtraceSampler::finishSample(int tid, Captured &c, uint64_t nowNs)
{
    Thread &t = m_threads[tid];
    const bool first = !t.baseline;
    c.sample.kind = RawSample::Kind::Periodic;
    c.sample.pid = static_cast<uint32_t>(m_pid);
    c.sample.tid = static_cast<uint32_t>(tid);
    c.sample.timeNs = nowNs;
    const uint64_t cpu = c.cpuNs - std::min(c.cpuNs, t.lastCpuNs);
    const uint64_t wall = nowNs - std::min(nowNs, t.lastWallNs);
    c.sample.period = first ? 0 : cpu;
    c.sample.wallNs = first ? 0 : wall;
    if (!first && wall > 0) {
        const uint64_t waited = c.runDelayNs - std::min(c.runDelayNs, t.lastRunDelayNs);
        t.demand = std::min(1.0, static_cast<double>(cpu + waited) / static_cast<double>(wall));
    }
    if (!c.sample.sameStack)
        t.delivered = !first && !c.regs.empty();
    else
        t.quietStop = false;
    t.baseline = true;
    t.lastState = first ? ThreadState::Running : c.sample.state;
    t.lastCpuNs = c.cpuNs;
    t.lastRunDelayNs = c.runDelayNs;
    t.lastWallNs = nowNs;
}

// Throttle: what this round cost (our CPU since the previous round, the helpers' CPU, the target's side) goes
// into the budget, which says when the next round may start.
void PtraceSampler::account(int64_t roundStartNs, int64_t targetCostNs)
{
    const int64_t ownCpu = clockNs(CLOCK_THREAD_CPUTIME_ID);
    int64_t own = ownCpu - m_lastOwnCpuNs;
    m_lastOwnCpuNs = ownCpu;
    if (m_helperCpu) {
        const int64_t helper = m_helperCpu();
        m_budget->addSpreadCost(helper - m_lastHelperCpuNs);
        m_lastHelperCpuNs = helper;
    }
    const int64_t spreadBefore = m_budget->pendingSpreadNs();
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    m_budget->addRound(roundStartNs, now, own + targetCostNs);
    own += spreadBefore - m_budget->pendingSpreadNs();
    m_ownCostNs += own;
    m_targetCostNs += targetCostNs;
    const int64_t base = 1'000'000'000 / std::max(1, m_options.frequency);
    const int64_t next = m_budget->nextRoundNs(base);
    m_intervalNs = next - roundStartNs;
    // Never chase rounds missed while we were late: the next one waits at least half an interval.
    m_nextRoundNs = std::max(next, now + std::min(m_intervalNs, base) / 2);
}

void PtraceSampler::wait(int timeoutMs)
{
    // A signal for the target waits (its thread stopped) until handleEvents() passes it on: while the target
    // receives signals, nap 5 ms at most. Otherwise sleep as long as asked, for each wake-up costs CPU
    // (30-60 us in a VM, where a 5 ms nap alone takes 0.6-1% of a CPU).
    m_eventsFresh = false;
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    const int napMs = now - m_lastSignalNs < 1'000'000'000 ? std::min(timeoutMs, 5) : timeoutMs;
    // A round due a little after the nap would end is waited for in one sleep: a nap of 20 ms and then one of
    // 1 ms pay two wake-ups for one round. While no rounds are due (paused), the whole nap is taken.
    const int64_t napNs = napMs * 1'000'000LL;
    const bool sampling = !m_paused && !m_exited && !m_released;
    const int64_t until = sampling && m_nextRoundNs - now <= napNs * 3 / 2 ? m_nextRoundNs : now + napNs;
    if (until > now)
        std::this_thread::sleep_for(std::chrono::nanoseconds(until - now));
}

size_t PtraceSampler::drain(SampleSink &sink)
{
    handleEvents();
    for (int tid : m_exitedThreads)
        sink.onExit(static_cast<uint32_t>(m_pid), static_cast<uint32_t>(tid));
    m_exitedThreads.clear();
    if (m_execPending) {
        m_execPending = false;
        std::string comm = readProcFile("/proc/" + std::to_string(m_pid) + "/comm");
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
        if (auto it = m_threads.find(m_pid); it != m_threads.end()) {
            it->second.delivered = false; // a new program: its previous stack means nothing now
            it->second.stackStart = it->second.stackEnd = 0;
        }
    }
    if (m_paused || m_exited || m_released || clockNs(CLOCK_MONOTONIC) < m_nextRoundNs)
        return 0;
    const uint64_t before = m_rounds;
    sampleRound(sink);
    return m_rounds - before;
}

bool PtraceSampler::targetExited(int &exitStatus)
{
    // The session loop asks right after drain(), which has just looked: one waitid a wake-up is enough.
    if (!m_eventsFresh)
        handleEvents();
    m_eventsFresh = false;
    exitStatus = m_exitStatus;
    return m_exited;
}

void PtraceSampler::release()
{
    if (m_released)
        return;
    m_released = true;
    m_helperCpu = nullptr;
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
    std::vector<int> all;
    for (const auto &[tid, t] : m_threads)
        all.push_back(tid);
    for (int tid : all)
        forget(tid);
    if (m_taskDirFd >= 0)
        ::close(m_taskDirFd);
    m_taskDirFd = -1;
}

double PtraceSampler::effectiveRateHz() const
{
    const int64_t elapsed = clockNs(CLOCK_MONOTONIC) - m_startNs;
    return elapsed > 0 ? static_cast<double>(m_rounds) * 1e9 / static_cast<double>(elapsed) : 0;
}

std::string PtraceSampler::description() const
{
    const int64_t elapsed = std::max<int64_t>(clockNs(CLOCK_MONOTONIC) - m_startNs, 1);
    const auto percent = [&](int64_t ns) { return 100.0 * static_cast<double>(ns) / static_cast<double>(elapsed); };
    const uint64_t looks = m_stops + m_repeats;
    const double reused = looks ? 100.0 * static_cast<double>(m_repeats) / static_cast<double>(looks) : 0;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "ptrace every thread at %d Hz asked (%.1f Hz effective), throttled to %.1f%% of a CPU (spent "
                  "%.2f%%: %.2f%% sampling, %.2f%% the target's stops), %.0f%% of samples from threads that had not "
                  "run, %u KiB stacks, wall time",
                  m_options.frequency, effectiveRateHz(), m_options.maxOverheadPercent,
                  percent(m_ownCostNs + m_targetCostNs), percent(m_ownCostNs), percent(m_targetCostNs), reused,
                  m_options.stackBytes / 1024);
    return buf;
}

} // namespace emberline::engine
