#include "engine/sampler/inprocess_sampler.h"

#include "engine/agent/agent_protocol.h"
#include "engine/common/clock.h"
#include "engine/process/proc_files.h"
#include "engine/unwind/unwinder.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>
#include <utility>

namespace emberline::engine {
namespace {

// Each wake-up of the session costs some tens of microseconds in a VM: wall-time rounds come at most 50 times a
// second (the wait totals are exact whatever the rate; only where a wait is attributed gets coarser), and the
// rings are read every 50 ms, sooner while they fill (a ring found a quarter full is read again within 5 ms).
constexpr int64_t kMinRoundNs = 20'000'000;
constexpr int64_t kMaxNapNs = 50'000'000;
constexpr int64_t kBusyNapNs = 5'000'000;
constexpr double kBusyFill = 0.25;
// A thread's sleep is what its scheduler statistics leave of a round's wall time, and they lag: the kernel brings a
// running thread's CPU time up to date at its ticks (up to 4 ms late at HZ 250), and a runnable thread's wait for a
// CPU when it gets one. A CPU-bound thread so seems to sleep a little in one round and to run longer than the round
// in the next. So the count is carried from round to round (below zero after an overcount: the next rounds pay it
// back) and sampled once it reaches kMinSleptNs, the total kept whole. A thread that never left its CPU since the
// last round (its count of times scheduled unchanged, its CPU time grown) cannot have slept: what its counts leave out
// then is lag or time the host kept a virtual CPU (steal, which no thread's CPU time includes: 40-100 ms of a CPU-bound
// thread's 8 s here), and it is sampled as runnable, without reading its state. Only a thread that did leave its CPU
// has its state read (/proc/.../stat; a 99 Hz session read it in about half its rounds before, for every CPU-bound
// thread).
constexpr int64_t kMinSleptNs = 5'000'000;
// While the rounds find no thread waiting (a CPU-bound program: its threads' counts only say they ran), the period
// doubles after every few such rounds, up to kQuietRoundNs; a round that samples a wait, or finds a thread started or
// ended, brings it back. Each round wakes the session (40-60 us of a CPU in a VM before any work), and a 99 Hz session
// of a CPU-bound CPython spent 38 ms of its 66 ms over 8 s on its 50 rounds a second. The wall time is no less exact:
// every thread's sleep is counted from its scheduler statistics whatever the period; a wait found is sampled then.
constexpr int64_t kQuietRoundNs = 80'000'000;
constexpr int kQuietRoundsBeforeLonger = 4;
constexpr int kRoundsBeforeRequest = 2; // rounds a thread may run without a timer before one is asked for
constexpr int kRoundsBeforeBlocked = 5; // rounds between two looks at a thread that blocks the sampler's signal

std::string taskPath(uint32_t pid, uint32_t tid, const char *file)
{
    return "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/" + file;
}

// "nr a1 a2 a3 a4 a5 a6 sp pc" of a thread blocked in a system call (hex); false when it runs ("running") or is
// not in one ("-1 sp pc" is a wait outside a system call: its stack pointer and instruction pointer still hold).
bool parseSyscall(const std::string &text, uint64_t &sp, uint64_t &pc)
{
    if (text.empty() || text.compare(0, 7, "running") == 0)
        return false;
    std::array<unsigned long long, 9> v{};
    const int n = std::sscanf(text.c_str(), "%lli %llx %llx %llx %llx %llx %llx %llx %llx", &v[0], &v[1], &v[2], &v[3],
                              &v[4], &v[5], &v[6], &v[7], &v[8]);
    if (n == 9) {
        sp = v[7];
        pc = v[8];
    } else if (n == 3) { // "-1 sp pc"
        sp = v[1];
        pc = v[2];
    } else {
        return false;
    }
    return sp != 0 && pc != 0;
}

// Time thread `tid` spent off a CPU until `now`, in `state`; its stack is set by the caller.
RawSample waitSample(uint32_t pid, uint32_t tid, int64_t now, uint64_t wallNs, ThreadState state)
{
    RawSample s;
    s.kind = RawSample::Kind::Wait;
    s.pid = pid;
    s.tid = tid;
    s.timeNs = uint64_t(now);
    s.wallNs = wallNs;
    s.state = state;
    return s;
}

// Whether thread `tid` blocks `signal` now (SigBlk of /proc/PID/task/TID/status, a hex mask of signals 1..64).
bool signalBlocked(uint32_t pid, uint32_t tid, uint32_t signal)
{
    const std::string status = readProcFile(taskPath(pid, tid, "status"));
    const size_t at = status.find("SigBlk:");
    if (at == std::string::npos || signal == 0 || signal > 64)
        return false;
    const unsigned long long mask = std::strtoull(status.c_str() + at + 7, nullptr, 16);
    return (mask >> (signal - 1)) & 1;
}

} // namespace

Result<std::unique_ptr<InprocessSampler>>
InprocessSampler::open(RingReader &rings, int childPid, const InprocessSamplerOptions &options, SampleSink &samples)
{
    if (childPid <= 0)
        return makeError(Error::Code::Invalid,
                         "the in-process sampler samples a program Emberline launches (its agent is preloaded at "
                         "start): it cannot attach to a running process");
    if (options.frequency <= 0)
        return makeError(Error::Code::Invalid, "the in-process sampler needs a positive frequency");
    return std::unique_ptr<InprocessSampler>(new InprocessSampler(rings, childPid, options, samples));
}

InprocessSampler::InprocessSampler(RingReader &rings, int childPid, const InprocessSamplerOptions &options,
                                   SampleSink &samples)
    : m_rings(rings), m_options(options), m_childPid(childPid), m_samples(samples),
      m_roundNs(std::max<int64_t>(kMinRoundNs, 1'000'000'000 / options.frequency)), m_quietRoundNs(m_roundNs),
      m_steal(clockNs(CLOCK_MONOTONIC))
{
    m_rings.setCpuStackCopyBytes(m_options.stackBytes);
    m_nextRoundNs = clockNs(CLOCK_MONOTONIC) + m_roundNs;
}

InprocessSampler::~InprocessSampler()
{
    for (auto &[pid, process] : m_processes)
        for (auto &[tid, thread] : process.threads)
            closeThread(thread);
}

void InprocessSampler::closeThread(Thread &thread)
{
    if (thread.schedstatFd >= 0)
        ::close(thread.schedstatFd);
    thread.schedstatFd = -1;
    if (thread.statFd >= 0)
        ::close(thread.statFd);
    thread.statFd = -1;
    if (thread.syscallFd >= 0)
        ::close(thread.syscallFd);
    thread.syscallFd = -1;
}

std::optional<bool> InprocessSampler::timerSignalsOnReturnToUser()
{
    struct utsname name {};
    std::string config;
    if (::uname(&name) == 0)
        config = readProcFile(std::string("/boot/config-") + name.release);
    if (config.empty()) {
        // The running kernel's own configuration, when it keeps one.
        if (gzFile gz = ::gzopen("/proc/config.gz", "rb")) {
            char buf[65536];
            int n = 0;
            while ((n = ::gzread(gz, buf, sizeof buf)) > 0)
                config.append(buf, size_t(n));
            ::gzclose(gz);
        }
    }
    if (config.find("CONFIG_POSIX_CPU_TIMERS_TASK_WORK=") == std::string::npos) {
        // A readable configuration without the option: a kernel from before it, or one that left it out.
        if (config.find("CONFIG_POSIX_TIMERS=") != std::string::npos)
            return false;
        return std::nullopt;
    }
    return config.find("CONFIG_POSIX_CPU_TIMERS_TASK_WORK=y") != std::string::npos;
}

std::string InprocessSampler::description() const
{
    const bool perf = m_rings.cpuClock() == agent::CpuClock::PerfEvents;
    std::string rate = std::to_string(m_options.frequency) + " Hz";
    // The kernel checks CPU timers at its scheduler tick: a faster timer fires once a tick with overruns, and
    // its sample stands for all of them. Said when the achieved rate is visibly lower.
    if (!perf && m_cpuSamples >= 100 && m_sampledCpuNs > 0) {
        const double achieved = static_cast<double>(m_cpuSamples) * 1e9 / static_cast<double>(m_sampledCpuNs);
        if (achieved < m_options.frequency * 0.9) {
            char text[160];
            std::snprintf(text, sizeof text,
                          " asked, %.0f Hz of CPU time achieved (the kernel's CPU timers fire at its tick; each "
                          "sample stands for the periods it covers)",
                          achieved);
            rate += text;
        }
    }
    // A CPU sample walks its thread's stack in the program (agent_walk.h); where the tables cannot, it copies the live
    // stack (up to 64 KiB). The learned copy is for waits' stacks and threads of unknown stack bounds.
    return std::string(perf ? "in-process sampler (a cpu-clock perf event on each thread, signalling it, at "
                            : "in-process sampler (each thread's CPU clock at ") +
           rate + "; each CPU sample walks its stack with the session's unwind tables, or copies it where they cannot" +
           (m_options.wallTime ? "; wall time from /proc, no signal to waiting threads)" : ")");
}

bool InprocessSampler::setStackCopyBytes(uint32_t bytes)
{
    if (bytes == 0)
        return false;
    m_options.stackBytes = bytes;
    m_rings.setCpuStackCopyBytes(bytes);
    return true;
}

std::vector<std::string> InprocessSampler::problems() const
{
    std::vector<std::string> out;
    const RingCounters c = m_rings.counters();
    if (c.problems & agent::ProblemNoSignal)
        out.push_back("the program has handlers for every real-time signal: the in-process sampler had none to use, "
                      "and CPU time was not sampled");
    if (c.problems & agent::ProblemSignalTaken)
        out.push_back("the program installed a handler for the in-process sampler's signal: CPU sampling stopped "
                      "then, so as not to take the program's signal (wall time went on)");
    if ((c.problems & agent::ProblemTimer) || m_timersFailed)
        out.push_back("a thread's CPU timer could not be created (timer_create refused): that thread's CPU time "
                      "is missing");
    if (!m_blockedThreads.empty()) {
        std::string names;
        size_t n = 0;
        for (const std::string &name : m_blockedThreads)
            if (n++ < 5)
                names += (names.empty() ? "" : ", ") + name;
        out.push_back(std::to_string(m_blockedThreads.size()) +
                      " kind(s) of thread block the in-process sampler's "
                      "signal (" +
                      names +
                      "; the C library's timer threads block every signal): their CPU time is "
                      "not sampled");
    }
    if (c.cpuDropped)
        out.push_back(std::to_string(c.cpuDropped) + " CPU samples were lost to a full ring");
    static const std::optional<bool> onReturn = timerSignalsOnReturnToUser();
    if (onReturn == false)
        out.push_back("this kernel raises CPU timers' signals from its tick (it lacks "
                      "CONFIG_POSIX_CPU_TIMERS_TASK_WORK): one that lands while a thread enters poll, nanosleep, "
                      "select or epoll_wait makes that call fail with EINTR, which a program that does not retry may "
                      "take for an error");
    if (c.ringFailures > 0)
        out.push_back(std::to_string(c.ringFailures) + " process image(s) could not make the agent's ring (" +
                      c.ringFailure + "): they were not sampled from inside; the program ran on unharmed");
    if (c.ringsNotReserved > 0)
        out.push_back(std::to_string(c.ringsNotReserved) + " ring(s) could not be reserved whole (" +
                      c.ringNotReserved +
                      "): each wrote within what it had while the file system had no room, and the "
                      "samples that did not fit are counted as lost");
    if (c.rings == 0 && c.ringFailures == 0)
        out.push_back("no process of the program loaded Emberline's agent (LD_PRELOAD was cleared, or the program "
                      "is set-user-ID or statically linked): nothing was sampled from inside it");
    return out;
}

void InprocessSampler::release()
{
    m_released = true;
}

void InprocessSampler::wait(int timeoutMs)
{
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    const int64_t nap = m_rings.lastFill() >= kBusyFill ? kBusyNapNs : kMaxNapNs;
    int64_t until = now + std::min<int64_t>(int64_t(timeoutMs) * 1'000'000, nap);
    if (m_options.wallTime && !m_paused)
        until = std::min(until, m_nextRoundNs);
    if (until <= now)
        return;
    // A ring made meanwhile (a process that just started: its first samples carry Python frames only once the session
    // has told its agent where the interpreter is) wakes the session at once.
    pollfd made{m_rings.changeFd(), POLLIN, 0};
    const timespec timeout{time_t((until - now) / 1'000'000'000), long((until - now) % 1'000'000'000)};
    if (made.fd < 0 || ::ppoll(&made, 1, &timeout, nullptr) < 0)
        std::this_thread::sleep_for(std::chrono::nanoseconds(until - now));
}

size_t InprocessSampler::drain(SampleSink &sink)
{
    // The CPU samples come as the session reads the rings; a drain is the wall-time round when one is due.
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    if (now < m_nextRoundNs)
        return 0;
    m_roundBusy = false;
    round(sink, now);
    if (m_roundBusy || m_paused) {
        m_quietRounds = 0;
        m_quietRoundNs = m_roundNs;
    } else if (++m_quietRounds >= kQuietRoundsBeforeLonger) {
        m_quietRounds = 0;
        m_quietRoundNs = std::min(std::max(m_roundNs, kQuietRoundNs), m_quietRoundNs * 2);
    }
    m_nextRoundNs = std::max(m_nextRoundNs + m_quietRoundNs, now + m_quietRoundNs / 2);
    return 1;
}

void InprocessSampler::round(SampleSink &sink, int64_t now)
{
    for (auto it = m_processes.begin(); it != m_processes.end();) {
        refreshThreads(it->first, it->second, sink, now);
        if (it->second.threads.empty() && ::kill(pid_t(it->first), 0) != 0) {
            it = m_processes.erase(it);
            continue;
        }
        ++it;
    }
}

void InprocessSampler::refreshThreads(uint32_t pid, Process &process, SampleSink &sink, int64_t now)
{
    std::set<uint32_t> present;
    if (!process.taskDir) {
        if (DIR *d = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str()))
            process.taskDir = std::shared_ptr<void>(d, [](void *dir) { ::closedir(static_cast<DIR *>(dir)); });
    }
    if (auto *d = static_cast<DIR *>(process.taskDir.get())) {
        ::rewinddir(d);
        while (dirent *e = ::readdir(d))
            if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
                present.insert(uint32_t(std::strtoul(e->d_name, nullptr, 10)));
    }
    for (auto it = process.threads.begin(); it != process.threads.end();) {
        if (!present.count(it->first)) {
            m_roundBusy = true;
            closeThread(it->second);
            sink.onExit(pid, it->first);
            it = process.threads.erase(it);
        } else {
            ++it;
        }
    }
    for (uint32_t tid : present) {
        Thread &t = process.threads[tid];
        if (t.schedstatFd < 0) {
            m_roundBusy = true;
            t.schedstatFd = ::open(taskPath(pid, tid, "schedstat").c_str(), O_RDONLY | O_CLOEXEC);
            if (t.schedstatFd >= 0)
                readSchedstat(t.schedstatFd, t.cpuNs, t.runDelayNs, t.runs);
            t.lastNs = now;
            t.carryFromNs = now;
            continue; // its first round only starts the count
        }
        // Once a thread has lived a few rounds: whether it blocks the sampler's signal (its timer could never be
        // heard: the C library's own timer threads block every signal), and if it has no timer, one is asked for
        // through the ring. A thread blocks every signal for moments of its own too (the C library's pthread_create,
        // fork and posix_spawn do, and a thread just made does until it starts): one seen blocking it is looked at
        // again some rounds later, and only a thread that blocks it both times goes unsampled.
        ++t.rounds;
        const bool look = t.rounds == kRoundsBeforeRequest + 1 ||
                          (t.blockedOnce && t.rounds == kRoundsBeforeRequest + 1 + kRoundsBeforeBlocked);
        if (look && !m_paused) {
            const uint32_t signal = m_rings.cpuSignal(pid);
            const bool blocks = signal != 0 && signalBlocked(pid, tid, signal);
            if (blocks && !t.blockedOnce) {
                t.blockedOnce = true;
            } else if (blocks) {
                t.blocked = true;
                const std::string name = readThreadName(int(pid), int(tid));
                m_blockedThreads.insert(name.empty() ? "thread " + std::to_string(tid) : name);
            } else if (!t.timer) {
                t.requested = m_rings.requestTimer(pid, tid);
            }
        }
        if (!m_options.wallTime)
            continue;
        uint64_t cpu = 0, runDelay = 0, runs = 0;
        if (!readSchedstat(t.schedstatFd, cpu, runDelay, runs))
            continue;
        const uint64_t wall = uint64_t(std::max<int64_t>(0, now - t.lastNs));
        const uint64_t cpuDelta = cpu >= t.cpuNs ? cpu - t.cpuNs : 0;
        const uint64_t runnable = runDelay >= t.runDelayNs ? runDelay - t.runDelayNs : 0;
        // Put on a CPU no more since the last round, yet with CPU time: it never left the CPU (a thread asleep the
        // whole round has neither).
        const bool onCpuThroughout = runs == t.runs && cpuDelta > 0;
        t.sleptCarryNs += int64_t(wall) - int64_t(cpuDelta) - int64_t(runnable);
        t.cpuNs = cpu;
        t.runDelayNs = runDelay;
        t.runs = runs;
        t.lastNs = now;
        if (m_paused) {
            t.sleptCarryNs = 0;
            t.carryFromNs = now;
            continue;
        }
        // Time it wanted to run: under the thread's latest stack, as runnable (none is known before its first
        // stack: the time is not attributed, as a wait would not be).
        const auto sampleRunnable = [&](uint64_t ns) {
            if (ns == 0 || !t.hasStack)
                return;
            RawSample s = waitSample(pid, tid, now, ns, ThreadState::Running);
            s.sameStack = true;
            sink.onSample(s);
        };
        sampleRunnable(runnable);
        if (t.sleptCarryNs < kMinSleptNs)
            continue;
        if (onCpuThroughout) {
            sampleRunnable(uint64_t(std::exchange(t.sleptCarryNs, 0)));
            t.carryFromNs = now;
            continue;
        }
        const ThreadState state = readThreadState(t.statFd, int(pid), int(tid));
        m_roundBusy = true;
        if (state == ThreadState::Running) {
            // It left its CPU and runs again: what its counts leave out may be a sleep, or the time the host kept its
            // CPU from it (on a loaded host, tens of milliseconds a second). At most the host's share of steal over
            // the count's span is runnable; the rest was a sleep.
            const auto stolen = int64_t(double(now - t.carryFromNs) * m_steal.share(now));
            const int64_t ran = std::min(t.sleptCarryNs, stolen); // both at least 0 here
            sampleRunnable(uint64_t(ran));
            t.sleptCarryNs -= ran;
            if (t.sleptCarryNs < kMinSleptNs)
                continue;
        }
        t.carryFromNs = now;
        sampleWait(pid, tid, t, state, uint64_t(std::exchange(t.sleptCarryNs, 0)), cpuDelta, now, sink);
    }
}

void InprocessSampler::sampleWait(uint32_t pid, uint32_t tid, Thread &t, ThreadState state, uint64_t sleptNs,
                                  uint64_t cpuNs, int64_t now, SampleSink &sink)
{
    // How it waits, as the kernel says now (`state`): in disk wait (D), stopped (T), else asleep. One already running
    // again slept earlier in the round: its wait is labelled a sleep, under its latest stack, and where it waited is
    // not read.
    RawSample s =
        waitSample(pid, tid, now, sleptNs,
                   state == ThreadState::DiskWait || state == ThreadState::Stopped ? state : ThreadState::Sleeping);
    const std::string syscall =
        state == ThreadState::Running ? std::string() : readTaskFile(t.syscallFd, int(pid), int(tid), "syscall");
    uint64_t sp = 0, pc = 0;
    const bool waiting = parseSyscall(syscall, sp, pc);
    // The same wait as last round, and no CPU used since: the same stack.
    if ((waiting && t.waitKnown && cpuNs == 0 && syscall == t.waitSyscall) || (!waiting && t.hasStack)) {
        // (A thread running again now slept earlier in the round: its latest stack stands for the wait.)
        s.sameStack = true;
        sink.onSample(s);
        return;
    }
    if (!waiting)
        return; // no stack known for it yet: the wait is not attributed
    // The blocked thread's stack, from its stack pointer: page by page, so that a copy reaching the end of the
    // stack's mapping stops there instead of failing whole.
    const uint32_t want = m_options.stackBytes;
    m_stack.resize(want);
    std::vector<iovec> local, remote;
    uint64_t at = sp;
    uint32_t planned = 0;
    while (planned < want) {
        const uint64_t pageEnd = (at | 4095) + 1;
        const uint32_t len = uint32_t(std::min<uint64_t>(pageEnd - at, want - planned));
        local.push_back({m_stack.data() + planned, len});
        remote.push_back({reinterpret_cast<void *>(at), len}); // NOLINT(performance-no-int-to-ptr)
        planned += len;
        at += len;
    }
    const ssize_t got = ::process_vm_readv(pid_t(pid), local.data(), local.size(), remote.data(), remote.size(), 0);
    // A CPython thread's Python frames, read while it waits: its chain does not move until it runs again.
    if (got > 0 && m_options.pythonOfWait)
        s.python = m_options.pythonOfWait(pid, tid);
    // The thread may have woken while its stack (and chain) was read: the copy counts only if it still waits where it
    // did.
    if (got <= 0 || readTaskFile(t.syscallFd, int(pid), int(tid), "syscall") != syscall) {
        s.python = {};
        if (t.hasStack) {
            s.sameStack = true;
            sink.onSample(s);
        }
        return;
    }
    std::array<uint64_t, RegCount> regs{};
    regs[RegSP] = sp;
    regs[RegIP] = pc;
    s.ip = pc;
    s.inKernel = true;
    s.regs = regs;
    s.stack = std::span<const uint8_t>(m_stack.data(), size_t(got));
    s.stackLimit = want;
    sink.onSample(s);
    t.hasStack = true;
    t.waitKnown = true;
    t.waitSyscall = syscall;
}

void InprocessSampler::onCpuSample(const AgentCpuSample &c)
{
    ++m_cpuSamples;
    m_sampledCpuNs += c.periodNs;
    if (m_paused || m_released)
        return;
    auto &process = m_processes[c.pid];
    Thread &t = process.threads[c.tid];
    if (!t.timer) {
        t.timer = true;
        ++m_timedThreads;
    }
    RawSample s;
    // Periodic, so that the thread's latest stack is kept for the runnable and waiting time that may follow.
    s.kind = RawSample::Kind::Periodic;
    s.pid = c.pid;
    s.tid = c.tid;
    s.timeNs = c.timeNs;
    s.period = c.periodNs;
    s.wallNs = m_options.wallTime ? c.periodNs : 0;
    s.state = ThreadState::Running;
    s.ip = c.regs.size() > RegIP ? c.regs[RegIP] : (c.walk.pcs.empty() ? 0 : c.walk.pcs[0]);
    s.regs = c.regs;
    s.stack = c.stack;
    s.stackLimit = c.stackLimit;
    s.walked = c.walk;
    s.python = c.python;
    m_samples.onSample(s);
    t.hasStack = true;
    t.waitKnown = false;
}

void InprocessSampler::onThreadTimer(uint64_t image, uint32_t pid, uint32_t tid, bool started)
{
    (void)image;
    Thread &t = m_processes[pid].threads[tid];
    if (started && !t.timer) {
        t.timer = true;
        ++m_timedThreads;
    }
    if (!started)
        ++m_timersFailed;
}

void InprocessSampler::onImageStart(uint64_t image, uint32_t pid, uint32_t parentPid)
{
    auto known = m_processes.find(pid);
    if (!m_released) {
        if (known != m_processes.end() && known->second.image != 0) {
            // A new image of a known process: it exec'd. Its other threads ended with the old image.
            m_samples.onComm(pid, pid, readThreadName(int(pid), int(pid)), true);
            for (auto it = known->second.threads.begin(); it != known->second.threads.end();) {
                if (it->first != pid) {
                    closeThread(it->second);
                    m_samples.onExit(pid, it->first);
                    it = known->second.threads.erase(it);
                } else {
                    it->second.timer = false;
                    it->second.requested = false;
                    it->second.rounds = 0;
                    it->second.blocked = false;
                    it->second.blockedOnce = false;
                    it->second.hasStack = false;
                    it->second.waitKnown = false;
                    ++it;
                }
            }
        } else if (parentPid != 0) {
            m_samples.onFork(pid, parentPid, pid);
        }
    }
    m_processes[pid].image = image;
}

} // namespace emberline::engine
