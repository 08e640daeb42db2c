#include "engine/sampler/ptrace_sampler.h"

#include "engine/common/clock.h"
#include "engine/process/proc_files.h"

#include "engine/unwind/unwinder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

namespace emberline::engine {
namespace {

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

// Rounds between two searches for a thread's stack mapping that found none.
constexpr uint64_t kStackLookupRounds = 64;

} // namespace

PtraceSampler::PtraceSampler(int pid, bool launched, const PtraceSamplerOptions &options)
    : m_options(options), m_pid(pid), m_launched(launched),
      m_tracer(pid, launched, [this](int tid) { dropThread(tid); })
{
}

PtraceSampler::~PtraceSampler()
{
    release();
}

Result<std::unique_ptr<PtraceSampler>> PtraceSampler::openForLaunch(int childPid, const PtraceSamplerOptions &options)
{
    std::unique_ptr<PtraceSampler> s(new PtraceSampler(childPid, true, options));
    if (auto st = s->m_tracer.seize(childPid, true); !st)
        return st.error();
    s->start();
    return s;
}

Result<std::unique_ptr<PtraceSampler>> PtraceSampler::openForAttach(int pid, const PtraceSamplerOptions &options)
{
    if (::kill(pid, 0) != 0 && errno == ESRCH)
        return makeError(Error::Code::Invalid, "no process with pid " + std::to_string(pid));
    std::unique_ptr<PtraceSampler> s(new PtraceSampler(pid, false, options));
    if (auto st = s->m_tracer.seize(pid, true); !st)
        return st.error();
    s->m_tracer.refreshThreads();
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

void PtraceSampler::dropThread(int tid)
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
    return readThreadState(t.statFd, m_pid, tid);
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

void PtraceSampler::copyStoppedThread(int tid, Thread &t, Captured &out)
{
    user_regs_struct regs{};
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
    m_tracer.refreshThreads();
    // All threads are asked to stop at once and waited for together, so the scheduler runs them into their
    // stops in parallel; each is let go as soon as its registers and stack are copied. Unwinding happens
    // afterwards, while the target runs. (Stopping in batches instead leaves each batch waiting for its
    // threads to get a CPU among all the others still running: rounds of a second with 64 busy threads.)
    std::vector<int> &tids = m_tids;
    tids.clear();
    tids.assign(m_tracer.threads().begin(), m_tracer.threads().end());
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
            if (!m_tracer.waitForInterruptStop(tid, groupStopSignal))
                continue;
            Thread &t = m_threads[tid];
            copyStoppedThread(tid, t, c);
            // Disk wait, which a stop cannot tell (the thread stops once its wait is over), as the kernel said it.
            c.sample.state = groupStopSignal                          ? ThreadState::Stopped
                             : c.kernelState == ThreadState::DiskWait ? ThreadState::DiskWait
                             : c.asleep                               ? ThreadState::Sleeping
                                                                      : ThreadState::Running;
            uint64_t cpu = 0, waited = 0;
            t.quietStop =
                c.sample.state != ThreadState::Running && readSchedstat(t.schedstatFd, cpu, waited, t.runsAtStop);
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

void PtraceSampler::handleEvents()
{
    m_eventsFresh = true;
    m_tracer.handleEvents();
}

void PtraceSampler::wait(int timeoutMs)
{
    // A signal for the target waits (its thread stopped) until handleEvents() passes it on: while the target
    // receives signals, nap 5 ms at most. Otherwise sleep as long as asked, for each wake-up costs CPU
    // (30-60 us in a VM, where a 5 ms nap alone takes 0.6-1% of a CPU).
    m_eventsFresh = false;
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    const int napMs = now - m_tracer.lastSignalNs() < 1'000'000'000 ? std::min(timeoutMs, 5) : timeoutMs;
    // A round due a little after the nap would end is waited for in one sleep: a nap of 20 ms and then one of
    // 1 ms pay two wake-ups for one round. While no rounds are due (paused), the whole nap is taken.
    const int64_t napNs = napMs * 1'000'000LL;
    const bool sampling = !m_paused && !m_tracer.exited() && !m_released;
    const int64_t until = sampling && m_nextRoundNs - now <= napNs * 3 / 2 ? m_nextRoundNs : now + napNs;
    if (until > now)
        std::this_thread::sleep_for(std::chrono::nanoseconds(until - now));
}

size_t PtraceSampler::drain(SampleSink &sink)
{
    handleEvents();
    for (int tid : m_tracer.takeExitedThreads())
        sink.onExit(static_cast<uint32_t>(m_pid), static_cast<uint32_t>(tid));
    if (m_tracer.takeExec()) {
        sink.onExecTime(static_cast<uint32_t>(m_pid), m_tracer.execNs());
        sink.onComm(static_cast<uint32_t>(m_pid), static_cast<uint32_t>(m_pid), readThreadName(m_pid, m_pid), true);
        // exec leaves one thread; the others' tracing ended with them.
        std::vector<int> gone;
        for (int tid : m_tracer.threads()) {
            if (tid != m_pid)
                gone.push_back(tid);
        }
        for (int tid : gone)
            m_tracer.forget(tid);
        if (auto it = m_threads.find(m_pid); it != m_threads.end()) {
            it->second.delivered = false; // a new program: its previous stack means nothing now
            it->second.stackStart = it->second.stackEnd = 0;
        }
    }
    if (m_paused || m_tracer.exited() || m_released || clockNs(CLOCK_MONOTONIC) < m_nextRoundNs)
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
    exitStatus = m_tracer.exitStatus();
    return m_tracer.exited();
}

void PtraceSampler::release()
{
    if (m_released)
        return;
    m_released = true;
    m_helperCpu = nullptr;
    handleEvents();
    m_tracer.detachAll();
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
