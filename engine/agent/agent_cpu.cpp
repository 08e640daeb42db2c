// The in-process sampler's half in the agent: a clock per thread on that thread's own CPU time, whose signal handler
// copies the interrupted registers and the top of the stack (or walks them, with the thread's Python frames) into the
// ring and returns. Unwinding, symbolization and the wait (off-CPU) part of wall time are the session's.
//
// - The clock: a cpu-clock perf event opened on the thread whose overflows signal that thread (F_SETSIG and
//   F_SETOWN_EX, as async-profiler's perf mode does), at the asked rate; where perf events are refused (a seccomp
//   filter, perf_event_paranoid), a POSIX CPU timer (timer_create with SIGEV_THREAD_ID, as its ctimer mode does),
//   which fires at the kernel's tick whatever rate is asked. A thread whose event would take the program's file
//   descriptors past half their limit gets a timer. "Timer" below means either.
// - The signal is a real-time one the program has no handler for, chosen at start; when the program installs a
//   handler for it later (sigaction or signal, both hooked), every timer is deleted first and the session is told.
// - Every thread: the main thread's timer starts with the agent, a pthread_create'd thread's as it starts (the
//   start routine is wrapped), a forked child's anew (timers are not inherited), and a thread made any other way
//   when the session finds it and asks (RingHeader::timerRequests, served by the next sample on any thread).
// - A thread's timer is deleted when the thread ends (a thread-specific key's destructor); when the session stops
//   visiting for 100 ms or detaches, each thread deletes its own at its next tick. A thread that execs deletes its
//   own before the exec (the exec hooks), and a tick still pending with it, which would end the new image.
//
// Thread: every thread of the program; the handler runs on the thread its timer belongs to.

#include "engine/agent/agent_cpu.h"
#include "engine/agent/agent_core.h"
#include "engine/agent/agent_pystack.h"
#include "engine/agent/agent_stack.h"
#include "engine/agent/agent_walk.h"
#include "engine/agent/agent_writer.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>

namespace emberline::agent {

uint64_t g_cpuPeriodNs = 0;

namespace {

std::atomic<int> g_signal{0};       // the sampler's signal (0: none)
std::atomic<bool> g_stopped{false}; // the program took the signal, or the session is gone: no new timers
pthread_key_t g_threadKey;
bool g_keyMade = false;

// Every timer made, so that all of them can be deleted when the program takes the signal: kernel timer ids,
// -1 for a free slot.
constexpr int kMaxTimers = 8192;
std::atomic<int> g_timers[kMaxTimers];
std::atomic<int> g_timersUsed{0};
// Timers being made now (createTimer, from its check of g_stopped until its timer is in the table): stopAll waits for
// them, so that no timer outlives it. A timer the table could not hold, or one still being made when stopAll gave up
// waiting, may still tick: the signal then stays ignored after the sampler stops.
std::atomic<int> g_creating{0};
std::atomic<bool> g_timerLost{false};
// What the program had for the signal before the sampler took it (the default, as chooseSignal asks).
struct sigaction g_programAction;
// How the samples are timed (RingHeader::cpuClock): per-thread perf events where the system allows them (the asked
// rate), else POSIX CPU timers (the kernel's tick); chosen at the first thread's, -1 until then. A thread whose event
// cannot be had (the program's descriptors running short) gets a timer. The table holds timers' ids, and perf events'
// file descriptors marked with kPerfId.
std::atomic<int> g_clock{-1};
bool g_perfAsked = false; // the session asked for perf events (kEnvCpuClock)

void rememberTimer(int id)
{
    const int n = g_timersUsed.load(std::memory_order_relaxed);
    for (int i = 0; i < n && i < kMaxTimers; ++i) {
        int empty = -1;
        if (g_timers[i].compare_exchange_strong(empty, id, std::memory_order_acq_rel))
            return;
    }
    const int i = g_timersUsed.fetch_add(1, std::memory_order_acq_rel);
    if (i < kMaxTimers)
        g_timers[i].store(id, std::memory_order_release);
    else
        g_timerLost.store(true, std::memory_order_relaxed);
}

void forgetTimer(int id)
{
    const int n = g_timersUsed.load(std::memory_order_acquire);
    for (int i = 0; i < n && i < kMaxTimers; ++i) {
        int expected = id;
        if (g_timers[i].compare_exchange_strong(expected, -1, std::memory_order_acq_rel))
            return;
    }
}

// A timer's or a perf event's end (raw system calls).
void endClock(int id)
{
    if ((id & kPerfId) != 0)
        syscall(SYS_close, id & ~kPerfId);
    else
        syscall(SYS_timer_delete, id);
}

void deleteTimer(int id)
{
    forgetTimer(id);
    endClock(id);
}

// A timer on thread `tid`'s CPU clock, signalling that thread every g_cpuPeriodNs of its CPU time (raw system
// calls: safe in a signal handler, and the kernel's own ids). -1 when it could not be made.
int createTimer(uint32_t tid)
{
    // Counted as being made before g_stopped is read, stopAll sets it before it reads the count (both sequentially
    // consistent): either this sees the sampler stopped, or stopAll waits for this timer to be in the table.
    struct Creating {
        Creating() { g_creating.fetch_add(1, std::memory_order_seq_cst); }
        ~Creating() { g_creating.fetch_sub(1, std::memory_order_release); }
        Creating(const Creating &) = delete;
        Creating &operator=(const Creating &) = delete;
    } creating;
    const int signal = g_signal.load(std::memory_order_acquire);
    if (signal == 0 || g_stopped.load(std::memory_order_seq_cst))
        return -1;
    if (g_perfAsked && g_clock.load(std::memory_order_acquire) != int(CpuClock::Timers)) {
        const int fd = openPerfClock(tid, signal);
        int unchosen = -1;
        if (fd >= 0) {
            g_clock.compare_exchange_strong(unchosen, int(CpuClock::PerfEvents), std::memory_order_acq_rel);
            g_ring->cpuClock = uint32_t(CpuClock::PerfEvents);
            rememberTimer(fd | kPerfId);
            writeThread(tid, true);
            return fd | kPerfId;
        }
        // Refused at the first thread: the system forbids perf events, timers for all. Refused later (the thread
        // ended, or the descriptors run short): a timer for this one.
        if (errno != EMFILE && errno != ESRCH)
            g_clock.compare_exchange_strong(unchosen, int(CpuClock::Timers), std::memory_order_acq_rel);
    }
    struct sigevent event {};
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = signal;
    event._sigev_un._tid = pid_t(tid); // sigev_notify_thread_id
    // The thread's CPU clock (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)): measured in the thread's own run time.
    const clockid_t clock = clockid_t((~clockid_t(tid) << 3) | 6);
    int id = -1;
    if (syscall(SYS_timer_create, clock, &event, &id) != 0) {
        g_ring->problems.fetch_or(ProblemTimer, std::memory_order_relaxed);
        writeThread(tid, false);
        return -1;
    }
    // The first expiry is spread over one period, so that threads started together do not tick together.
    const uint64_t first = 1 + (nowNs() ^ (uint64_t(tid) * 0x9E3779B97F4A7C15ull)) % g_cpuPeriodNs;
    struct itimerspec spec {};
    spec.it_interval.tv_sec = time_t(g_cpuPeriodNs / 1'000'000'000u);
    spec.it_interval.tv_nsec = long(g_cpuPeriodNs % 1'000'000'000u);
    spec.it_value.tv_sec = time_t(first / 1'000'000'000u);
    spec.it_value.tv_nsec = long(first % 1'000'000'000u);
    if (syscall(SYS_timer_settime, id, 0, &spec, nullptr) != 0) {
        syscall(SYS_timer_delete, id);
        g_ring->problems.fetch_or(ProblemTimer, std::memory_order_relaxed);
        writeThread(tid, false);
        return -1;
    }
    g_ring->cpuClock = uint32_t(CpuClock::Timers);
    rememberTimer(id);
    writeThread(tid, true);
    return id;
}

// The calling thread's own timer, deleted with the thread (the key's destructor).
void startThisThread()
{
    if (t_state.timer >= 0 || g_cpuPeriodNs == 0)
        return;
    t_state.cpuCountNs = 0;
    t_state.timer = createTimer(currentThreadId());
    if (t_state.timer >= 0 && g_keyMade)
        // The timer's id travels as the key's value (never dereferenced). NOLINTNEXTLINE(performance-no-int-to-ptr)
        pthread_setspecific(g_threadKey, reinterpret_cast<void *>(intptr_t(t_state.timer) + 1));
}

void threadEnded(void *value)
{
    const AgentScope scope;
    const int id = int(reinterpret_cast<intptr_t>(value) - 1);
    if (id >= 0)
        deleteTimer(id);
    t_state.timer = -1;
}

// The program takes the signal, or the sampler ends: every timer goes before anything else may receive the signal.
void stopAll(uint32_t problem)
{
    if (g_stopped.exchange(true, std::memory_order_seq_cst))
        return;
    // Timers being made now land in the table first (a bounded wait: one may be made by this very thread, under a
    // signal handler that called sigaction).
    for (int spin = 0; g_creating.load(std::memory_order_seq_cst) != 0; ++spin) {
        if (spin == 1000) {
            g_timerLost.store(true, std::memory_order_relaxed);
            break;
        }
        sched_yield();
    }
    const int n = g_timersUsed.load(std::memory_order_acquire);
    for (int i = 0; i < n && i < kMaxTimers; ++i) {
        const int id = g_timers[i].exchange(-1, std::memory_order_acq_rel);
        if (id >= 0)
            endClock(id);
    }
    if (problem != 0 && g_ring)
        g_ring->problems.fetch_or(problem, std::memory_order_relaxed);
}

void serveTimerRequests()
{
    for (auto &slot : g_ring->timerRequests) {
        if (slot.load(std::memory_order_relaxed) == 0)
            continue;
        const uint32_t tid = slot.exchange(0, std::memory_order_acq_rel);
        if (tid != 0 && tid != currentThreadId())
            createTimer(tid);
    }
}

// The copied form: every interrupted register and the top of the stack (and, for a checked sample, the walk's pcs
// after it).
void writeCpuCopy(const greg_t *g, uint64_t periodNs, const PythonStack &python, const uint64_t *pcs, uint32_t frames,
                  WalkFallback because)
{
    // Where the thread's stack bounds are known, its whole live stack (every frame, so never cut short, and no
    // more than that); else the session's learned copy.
    const uint64_t live = liveStackBytes(uint64_t(g[REG_RSP]));
    uint64_t stackWant = live != 0 ? live : g_ring->cpuStackCopyBytes.load(std::memory_order_relaxed);
    if (stackWant > kMaxStackCopyBytes)
        stackWant = kMaxStackCopyBytes;
    const uint32_t stackPadded = uint32_t((stackWant + 7) & ~uint64_t(7));
    const uint32_t bytes = uint32_t(sizeof(CpuRecord) + stackPadded + frames * sizeof(uint64_t) + python.bytes());
    // Never waits: the interrupted code may hold a record of its own.
    AgentScope scope;
    auto *record = scope.reserve<CpuRecord>(bytes, keptForFrees(), false);
    if (!record) {
        g_ring->cpuDropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    record->tid = currentThreadId();
    record->timeNs = nowNs();
    record->periodNs = periodNs;
    record->walkedFrames = frames;
    record->copiedBecause = frames != 0 ? 0 : uint32_t(because) + 1;
    // kPerfRegsMask order: AX BX CX DX SI DI BP SP IP, then R8..R15 (9..16).
    const int order[kRegisterCount] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_RIP,
                                       REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
    for (int i = 0; i < kRegisterCount; ++i)
        record->regs[i] = uint64_t(g[order[i]]);
    // The thread's stack bounds are learned outside signal handlers (pthread_getattr_np allocates); until then the
    // copy goes through process_vm_readv, which is safe here.
    auto *stack = reinterpret_cast<uint8_t *>(record + 1);
    record->stackBytes = copyStackInHandler(record->regs[RegSP], stack, uint32_t(stackWant));
    if (frames != 0)
        memcpy(stack + stackPadded, pcs, frames * sizeof(uint64_t));
    putPython(record->python, stack + stackPadded + frames * sizeof(uint64_t), python);
    scope.publish(RecordType::Cpu);
}

// Walks the interrupted stack and writes the walked record; false when the walk could not go (the copy is written
// instead). A checked sample writes the copied record with the walk in it.
__attribute__((noinline)) bool writeCpuWalked(const greg_t *g, uint64_t periodNs, const PythonStack &python,
                                              WalkFallback &because)
{
    uint64_t pcs[kMaxWalkFrames];
    // A checked sample's walk keeps every pc (the session compares them with its own unwind of the copy).
    const bool checked = checkedWalk();
    StackClaim claim = StackClaim::None;
    const AgentWalk walk = walkStack(UnwindRegs{uint64_t(g[REG_RIP]), uint64_t(g[REG_RSP]), uint64_t(g[REG_RBP])},
                                     false, pcs, kMaxWalkFrames, checked ? nullptr : &claim, pythonStackHash(python));
    if (!walk.whole) {
        because = walk.reason;
        return false;
    }
    if (checked) {
        writeCpuCopy(g, periodNs, python, pcs, walk.frames, WalkFallback::NotReady);
        return true;
    }
    const uint64_t hash = walk.hash;
    const uint32_t frames = claim == StackClaim::Known ? 0 : walk.frames;
    const PythonStack &written = pythonWritten(python, claim == StackClaim::Known);
    const uint32_t bytes = uint32_t(sizeof(WalkedCpuRecord) + frames * sizeof(uint64_t) + written.bytes());
    AgentScope scope;
    auto *record = scope.reserve<WalkedCpuRecord>(bytes, keptForFrees(), false);
    if (!record) {
        if (claim == StackClaim::Claimed)
            settleStack(hash, false);
        g_ring->cpuDropped.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    record->tid = currentThreadId();
    record->frames = uint16_t(frames);
    record->flags = uint8_t(walk.flags | (claim == StackClaim::Claimed ? WalkDefines : 0));
    record->reserved = 0;
    record->timeNs = nowNs();
    record->periodNs = periodNs;
    record->stackHash = hash;
    if (frames != 0)
        memcpy(reinterpret_cast<uint8_t *>(record + 1), pcs, frames * sizeof(uint64_t));
    putPython(record->python, reinterpret_cast<uint8_t *>(record + 1) + frames * sizeof(uint64_t), written);
    scope.publish(RecordType::CpuWalked);
    if (claim == StackClaim::Claimed)
        settleStack(hash, true);
    return true;
}

void writeCpuSample(const ucontext_t *context, uint64_t periodNs)
{
    const greg_t *g = context->uc_mcontext.gregs;
    PythonStack python;
    gatherPythonTimed(python);
    WalkFallback because = WalkFallback::Disabled;
    if (walkWanted()) {
        because = WalkFallback::NotReady;
        if (roomToWalk() && writeCpuWalked(g, periodNs, python, because))
            return;
    }
    writeCpuCopy(g, periodNs, python, nullptr, 0, because);
}

void onSignal(int, siginfo_t *info, void *context)
{
    const AgentScope scope;
    // Only the sampler's own timers: the signal sent by anyone else is ignored (it has no other meaning here).
    const bool perf = info->si_code == POLL_IN && g_clock.load(std::memory_order_relaxed) == int(CpuClock::PerfEvents);
    if ((info->si_code == SI_TIMER || perf) && g_ring) {
        const uint64_t now = nowNs();
        if (g_ring->detached.load(std::memory_order_relaxed) || !sessionAlive(now) ||
            g_stopped.load(std::memory_order_relaxed)) {
            // The session is gone: this thread's timer goes (the others go at their own next tick).
            if (t_state.timer >= 0) {
                deleteTimer(t_state.timer);
                t_state.timer = -1;
            } else {
                deleteTimer(perf ? info->si_fd | kPerfId : info->si_timerid);
            }
        } else {
            if (t_state.timer < 0) {
                t_state.timer = perf ? info->si_fd | kPerfId : info->si_timerid; // asked for, made elsewhere
                t_state.cpuCountNs = 0;
            }
            serveTimerRequests();
            const uint64_t overruns = !perf && info->si_overrun > 0 ? uint64_t(info->si_overrun) : 0;
            const uint64_t cpuNs = perf ? perfClockSampled(info->si_fd) : g_cpuPeriodNs * (1 + overruns);
            writeCpuSample(static_cast<const ucontext_t *>(context), cpuNs);
            g_ring->cpuHandlerNs[handlerBucket(nowNs() - now)].fetch_add(1, std::memory_order_relaxed);
        }
    }
}

// A real-time signal without a handler of the program's (from the top: libraries that use one take the lowest).
int chooseSignal()
{
    for (int signal = SIGRTMAX - 1; signal > SIGRTMIN + 2; --signal) {
        struct sigaction old {};
        if (realFunctions().sigaction(signal, nullptr, &old) != 0)
            continue;
        if ((old.sa_flags & SA_SIGINFO) == 0 && old.sa_handler == SIG_DFL) {
            g_programAction = old;
            return signal;
        }
    }
    return 0;
}

struct StartArgs {
    void *(*routine)(void *);
    void *arg;
};

} // namespace

void cpuUsePerfEvents(bool perfEvents)
{
    g_perfAsked = perfEvents;
}

void cpuStart()
{
    if (g_cpuPeriodNs == 0 || !g_ring || !realFunctions().sigaction)
        return;
    g_stopped.store(false, std::memory_order_release);
    {
        const InternalWork work;
        if (!g_keyMade)
            g_keyMade = pthread_key_create(&g_threadKey, threadEnded) == 0;
        const int signal = chooseSignal();
        if (signal == 0) {
            g_ring->problems.fetch_or(ProblemNoSignal, std::memory_order_relaxed);
            return;
        }
        struct sigaction action {};
        action.sa_sigaction = onSignal;
        // SA_RESTART: a system call the tick lands in is restarted where the kernel can restart it.
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        if (realFunctions().sigaction(signal, &action, nullptr) != 0)
            return;
        g_signal.store(signal, std::memory_order_release);
        g_ring->cpuSignal = uint32_t(signal);
        learnThreadStack();
    }
    startThisThread();
}

void cpuStartOtherThreads()
{
    if (g_cpuPeriodNs == 0 || !g_ring || g_signal.load(std::memory_order_acquire) == 0)
        return;
    const int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    const uint32_t self = currentThreadId();
    alignas(8) char buffer[4096];
    for (;;) {
        const long n = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
        if (n <= 0)
            break;
        for (long at = 0; at < n;) {
            const auto *entry = reinterpret_cast<const struct dirent64 *>(buffer + at);
            at += entry->d_reclen;
            uint32_t tid = 0;
            for (const char *c = entry->d_name; *c >= '0' && *c <= '9'; ++c)
                tid = tid * 10 + uint32_t(*c - '0');
            if (tid != 0 && tid != self)
                createTimer(tid); // the thread may have ended since: its timer is then refused, and nothing is lost
        }
    }
    close(fd);
}

void cpuForkChild()
{
    // Timers are not inherited: the child's one thread starts its own; the parent's ids mean nothing here. Only the
    // slots ever used are cleared: the rest are -1 already, and untouched they stay shared with the parent (32 KiB
    // of the table written in every forked child were its pages copied).
    const int counted = g_timersUsed.load(std::memory_order_relaxed);
    const int used = counted < kMaxTimers ? counted : kMaxTimers;
    for (int i = 0; i < used; ++i) {
        const int id = g_timers[i].exchange(-1, std::memory_order_relaxed);
        if (id >= 0 && (id & kPerfId) != 0)
            syscall(SYS_close, id & ~kPerfId); // the parent's threads' events, whose descriptors the fork copied
    }
    g_timersUsed.store(0, std::memory_order_relaxed);
    g_creating.store(0, std::memory_order_relaxed); // the parent's other threads' are not here
    t_state.timer = -1;
    if (g_stopped.load(std::memory_order_relaxed) || g_signal.load(std::memory_order_relaxed) == 0 || !g_ring)
        return;
    g_ring->cpuSignal = uint32_t(g_signal.load(std::memory_order_relaxed));
    startThisThread();
}

bool cpuBeforeExec()
{
    const int signal = g_signal.load(std::memory_order_acquire);
    // A child of vfork shares its parent's memory, this thread state too: its thread id is not the one cached there.
    if (t_state.timer < 0 || signal == 0 || t_state.tid != uint32_t(syscall(SYS_gettid)))
        return false;
    // Blocked while the clock ends, so that a tick already sent is not taken by the handler, which would adopt the
    // ended clock as the thread's; then every pending tick is taken and dropped.
    sigset_t only;
    sigset_t before;
    sigemptyset(&only);
    sigaddset(&only, signal);
    if (pthread_sigmask(SIG_BLOCK, &only, &before) != 0)
        return false;
    const int id = t_state.timer;
    t_state.timer = -1;
    if (g_keyMade)
        pthread_setspecific(g_threadKey, nullptr);
    deleteTimer(id);
    const timespec now{0, 0};
    while (sigtimedwait(&only, nullptr, &now) == signal) {}
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    return true;
}

void cpuAfterFailedExec()
{
    startThisThread();
}

void cpuStop()
{
    stopAll(0);
    t_state.timer = -1;
    const int signal = g_signal.exchange(0, std::memory_order_acq_rel);
    if (signal != 0 && realFunctions().sigaction) {
        // The handler goes too. Ignoring the signal first discards the ticks already sent to any thread (a deleted
        // timer's pending signal is still delivered); then the program's own action (the default, which ends the
        // program on a real-time signal) comes back, unless a timer may have escaped the table and may still tick.
        struct sigaction action {};
        action.sa_handler = SIG_IGN;
        sigemptyset(&action.sa_mask);
        realFunctions().sigaction(signal, &action, nullptr);
        if (!g_timerLost.load(std::memory_order_relaxed))
            realFunctions().sigaction(signal, &g_programAction, nullptr);
    }
}

bool cpuOwnsSignal(int signal)
{
    const int mine = g_signal.load(std::memory_order_acquire);
    return mine != 0 && signal == mine && !g_stopped.load(std::memory_order_acquire);
}

void cpuGiveUpSignal()
{
    const AgentScope scope; // the program's sigaction call sets errno, not the timers' deletion
    stopAll(ProblemSignalTaken);
}

void *cpuThreadStartArgs(void *(*routine)(void *), void *arg)
{
    if (g_cpuPeriodNs == 0 || g_stopped.load(std::memory_order_acquire) || g_signal.load() == 0)
        return nullptr;
    StartArgs *args = nullptr;
    {
        const AgentScope scope;
        const InternalWork work;
        args = static_cast<StartArgs *>(mallocInternal(sizeof(StartArgs)));
    }
    if (args) {
        args->routine = routine;
        args->arg = arg;
    }
    return args;
}

void *cpuThreadStart(void *raw)
{
    StartArgs args = *static_cast<StartArgs *>(raw);
    {
        const AgentScope scope;
        const InternalWork work;
        freeInternal(raw);
        learnThreadStack();
    }
    {
        const AgentScope scope;
        startThisThread();
    }
    return args.routine(args.arg);
}

void cpuDropThreadStartArgs(void *args)
{
    const AgentScope scope;
    const InternalWork work;
    freeInternal(args);
}

} // namespace emberline::agent
