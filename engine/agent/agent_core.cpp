// The agent's core (agent_core.h): its start in a process image, the slow paths of allocations and frees, a forked
// child's new ring, a thread's end and the image's. It collects and never analyses: a sampled allocation copies the
// registers and the live part of the stack into the process's ring (agent_protocol.h), a free of a sampled address
// writes a small record, and the session unwinds, symbolizes and aggregates on its own threads.
//
// Sampling by bytes: each thread draws exponential intervals with the ring's mean (EMBERLINE_ALLOC_INTERVAL,
// default 512 KiB) and samples the allocation that crosses the next point, so an allocation of `size` bytes is
// sampled with probability 1 - exp(-size / mean). The agent only reports the size; the session applies the one
// weighting (engine/memory/allocation_weight.h).
//
// Thread: every thread of the program, concurrently.

#include "engine/agent/agent_core.h"
#include "engine/agent/agent_cpu.h"
#include "engine/agent/agent_walk.h"
#include "engine/agent/agent_writer.h"
#include "engine/agent/python/agent_pymem.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cmath>

namespace emberline::agent {

bool (*g_slowPathCheck)(uint64_t caller) = nullptr;

uint64_t nextRandom(uint64_t &state)
{
    if (state == 0)
        state = (nowNs() ^ (uint64_t(currentThreadId()) << 32)) | 1;
    uint64_t x = state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    state = x;
    return x;
}

namespace {
constexpr int64_t kOffCountdown = int64_t(1) << 20;
} // namespace

__thread ThreadState t_state __attribute__((tls_model("initial-exec"))) = {.state = kStateNow,
                                                                           .allocations = 0,
                                                                           .armed = kArmedNow,
                                                                           .bytes = 0,
                                                                           .rng = 0,
                                                                           .slot = nullptr,
                                                                           .fast = nullptr,
                                                                           .probeTick = 0,
                                                                           .ownSlot = nullptr,
                                                                           .heapEpoch = 0,
                                                                           .tid = 0,
                                                                           .depth = 0,
                                                                           .internal = 0,
                                                                           .inCxx = 0,
                                                                           .holding = false,
                                                                           .trackLocked = false,
                                                                           .noPages = false,
                                                                           .totalsKeySet = false,
                                                                           .slotGiven = false,
                                                                           .notMalloc = false,
                                                                           .sampleKind = SampleFiltered,
                                                                           .errnoAt = nullptr,
                                                                           .stackAsked = false,
                                                                           .stackLow = 0,
                                                                           .stackHigh = 0,
                                                                           .walks = 0,
                                                                           .walkMemo = 0,
                                                                           .memoBusy = false,
                                                                           .timer = -1,
                                                                           .cpuCountNs = 0,
                                                                           .cpuJitter = 0,
                                                                           .clockTsc = 0,
                                                                           .clockNs = 0,
                                                                           .clockRate = 0,
                                                                           .python = {},
                                                                           .pythonKnown = {}};

namespace {

RealFunctions g_real;
std::atomic<const void *> g_foreignBegin{nullptr};
std::atomic<const void *> g_foreignEnd{nullptr};

enum class Mode : int { Off = 0, Sampling = 1, Exact = 2 };
std::atomic<int> g_mode{int(Mode::Off)};
std::atomic<bool> g_active{false}; // this process image has a ring (memory, CPU or both)
std::atomic<int> g_initialized{0}; // 0: not yet, 1: starting, 2: done
bool g_pythonDomains = false;      // --python-allocators (agent_pymem.h)
std::atomic<bool> g_marksRefused{false};

// The hooks pass every call on while memory is off in this image (agent_core.h); sampled blocks are marked where the
// front end is the program's whole malloc family, the C library's allocator serves it, and the image was launched
// with the agent (agent_track.h: a program the agent was loaded into frees blocks of its own hooks' time through the
// C library's free after a detach).
void passThroughWhileOff()
{
    const int mode = g_mode.load(std::memory_order_acquire);
    const bool marks = mode == int(Mode::Sampling) && g_real.marksAllowed && g_chunkSizes && g_attachedNs == 0 &&
                       !g_marksRefused.load(std::memory_order_acquire);
    __atomic_store_n(&g_hookFlags.filtered, uint8_t(marks ? 0 : 1), __ATOMIC_RELEASE);
    __atomic_store_n(&g_passThrough, uint8_t(mode == int(Mode::Off)), __ATOMIC_RELEASE);
    hookFlagsRaised();
}

// The next sampling point, in bytes: an exponential draw with the mean interval.
int64_t drawInterval(ThreadState &t)
{
    const uint64_t x = nextRandom(t.rng);
    // u in (0, 1]: -ln(u) is an exponential draw with mean 1 (libm's log neither allocates nor locks).
    const double u = (double((x >> 11) + 1)) * (1.0 / 9007199254740992.0);
    const double next = -std::log(u) * double(g_interval);
    // At most 2^38 bytes: the countdown sits above the count bits (ThreadState::state) and must not overflow there.
    return next < 1 ? 1 : next > 2.7e11 ? int64_t(2.7e11) : int64_t(next);
}

uint64_t parseUnsigned(const char *s, uint64_t fallback)
{
    if (!s || !*s)
        return fallback;
    uint64_t v = 0;
    for (; *s; ++s) {
        if (*s < '0' || *s > '9')
            return fallback;
        v = v * 10 + uint64_t(*s - '0');
    }
    return v;
}

// The thread's counts start over (a forked child's one thread, a test's after agentStop).
void resetThread()
{
    ThreadState &t = t_state;
    t.tid = 0;
    t.rng = 0;
    t.cpuCountNs = 0; // a forked child's clock is its own, made anew
    t.cpuJitter = 0;
    t.state = kStateNow;
    t.armed = kArmedNow;
    t.allocations = 0;
    t.bytes = 0;
    heapForkChild();
}

// Before a fork, in the parent: the child writes this ring until its handler gives it its own.
void atForkPrepare()
{
    g_soleWriter = false;
}

void atForkChild()
{
    const AgentScope scope;
    resetThread(); // the child's totals start with it
    walkForkChild();
    if (!g_active.load(std::memory_order_relaxed) || !g_ring)
        return;
    const uint32_t parent = g_ring->pid;
    // The parent's CPython is the child's, at the same addresses: the child's samples walk its Python frames from the
    // first, not only once the session has found the interpreter in the child too (it writes the same target then).
    const bool python = g_ring->pythonState.load(std::memory_order_acquire) == 1;
    const PythonTarget target = g_ring->python;
    // The parent's ring stays the parent's: this process starts its own, or runs without one.
    unmapRing();
    if ((g_interval > 1 && !mapTables()) || !createRing(parent)) {
        g_mode.store(int(Mode::Off), std::memory_order_release);
        g_active.store(false, std::memory_order_release);
        startHeapCounting(false);
        resetFilter(false);
        passThroughWhileOff();
        return;
    }
    g_soleWriter = true; // its own ring now
    writeModules();
    if (python) {
        g_ring->python = target;
        g_ring->pythonState.store(1, std::memory_order_release);
    }
    resetFilter(g_mode.load(std::memory_order_relaxed) == int(Mode::Exact));
    cpuForkChild();
}

// A thread's totals when it ends (a thread-specific key's destructor: pthread threads; the main thread's are written at
// the image's end, agentFinish).
pthread_key_t g_totalsKey;
bool g_totalsKeyMade = false;

void threadTotals(void *)
{
    const AgentScope scope;
    const ThreadState &t = t_state;
    giveHeapSlotBack();
    walkThreadEnd();
    if (g_mode.load(std::memory_order_acquire) == int(Mode::Off) || !g_ring)
        return;
    writeTotals(totalAllocations(t), totalBytes(t)); // allocates nothing
}

// The ring, the tables and the mode, as the options say (inside InternalWork: what it allocates is the agent's).
void initialize(const AgentOptions &options)
{
    if (!options.directory || !*options.directory || strlen(options.directory) >= sizeof g_directory - 64)
        return;
    memcpy(g_directory, options.directory, strlen(options.directory) + 1);
    // Memory is profiled when an interval is given; CPU is sampled when a period is given; either needs the ring.
    const bool memory = options.allocInterval != 0;
    g_cpuPeriodNs = options.cpuPeriodNs;
    cpuUsePerfEvents(options.cpuPerfEvents);
    g_pythonDomains = options.pythonAllocators;
    if (!memory && g_cpuPeriodNs == 0)
        return;
    g_interval = options.allocInterval;
    recordClockStart();
    uint64_t ringBytes = options.ringBytes < 65536 ? 65536 : options.ringBytes;
    while (ringBytes & (ringBytes - 1))
        ringBytes &= ringBytes - 1; // down to a power of two
    g_ringBytes = ringBytes;
    if ((g_interval > 1 && !mapTables()) || !createRing(0))
        return;
    writeModules();
    g_active.store(true, std::memory_order_release);
    if (memory) {
        if (!g_totalsKeyMade)
            g_totalsKeyMade = pthread_key_create(&g_totalsKey, threadTotals) == 0;
        resetFilter(g_interval == 1);
        g_mode.store(int(g_interval == 1 ? Mode::Exact : Mode::Sampling), std::memory_order_release);
    }
}

// The agent starts at the program's first allocation (the C library's own, made while the dynamic linker starts the
// program, before any constructor), so that every block the program frees later was seen allocated; else in its
// constructor. Only system calls and getenv run then: the environment is in place before the first allocation.
bool startFromEnvironment()
{
    AgentOptions options;
    if (!optionsFromEnvironment(options))
        options = AgentOptions{}; // off, but started: not asked again
    return agentStart(options, false);
}

} // namespace

void setRealFunctions(const RealFunctions &real)
{
    g_real = real;
    resolveUsable(real.malloc, real.free, real.programScope ? RTLD_DEFAULT : RTLD_NEXT);
}

const RealFunctions &realFunctions()
{
    return g_real;
}

// Only `filtered` is set (always safe): the mode and pass-through are left as they are (before the agent has started,
// passThroughWhileOff would send every call past the hooks, and the agent would never start).
void refuseMarks()
{
    g_marksRefused.store(true, std::memory_order_release);
    __atomic_store_n(&g_hookFlags.filtered, uint8_t(1), __ATOMIC_RELEASE);
    hookFlagsRaised();
}

void setForeignBlocks(const void *begin, const void *end)
{
    g_foreignEnd.store(end, std::memory_order_relaxed);
    g_foreignBegin.store(begin, std::memory_order_release);
}

bool foreignBlock(const void *address)
{
    return address >= g_foreignBegin.load(std::memory_order_acquire) &&
           address < g_foreignEnd.load(std::memory_order_relaxed);
}

void *mallocInternal(size_t size)
{
    return g_real.malloc(size);
}

void freeInternal(void *address)
{
    g_real.free(address);
}

uint32_t currentThreadId()
{
    ThreadState &t = t_state;
    if (t.tid == 0)
        t.tid = uint32_t(syscall(SYS_gettid));
    return t.tid;
}

bool optionsFrom(AgentOptions &options, OptionLookup lookup, void *context)
{
    options.directory = lookup(kEnvDirectory, context);
    const char *interval = lookup(kEnvAllocInterval, context);
    options.allocInterval = interval && *interval ? parseUnsigned(interval, uint64_t(512) * 1024) : 0;
    if (interval && *interval && options.allocInterval == 0)
        options.allocInterval = 1;
    options.cpuPeriodNs = parseUnsigned(lookup(kEnvCpuPeriod, context), 0);
    const char *clock = lookup(kEnvCpuClock, context);
    options.cpuPerfEvents = clock && strcmp(clock, "perf") == 0;
    const char *python = lookup(kEnvPythonAllocators, context);
    options.pythonAllocators = python && strcmp(python, "1") == 0;
    options.ringBytes = parseUnsigned(lookup(kEnvRingBytes, context), kDefaultRingDataBytes);
    return options.directory && *options.directory && (options.allocInterval != 0 || options.cpuPeriodNs != 0);
}

bool optionsFromEnvironment(AgentOptions &options)
{
    return optionsFrom(
        options, [](const char *name, void *) -> const char * { return getenv(name); }, nullptr);
}

bool agentStart(const AgentOptions &options, bool wait)
{
    int expected = 0;
    if (g_initialized.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        {
            const InternalWork work;
            initialize(options);
        }
        startHeapCounting(g_mode.load(std::memory_order_acquire) != int(Mode::Off) && heapSizesKnown());
        passThroughWhileOff();
        g_initialized.store(2, std::memory_order_release);
    }
    while (wait && g_initialized.load(std::memory_order_acquire) == 1)
        sched_yield(); // another thread starts it (there are none before the constructors run)
    return g_active.load(std::memory_order_acquire);
}

bool agentActive()
{
    return g_active.load(std::memory_order_acquire);
}

bool agentRestart(const AgentOptions &options)
{
    if (g_initialized.load(std::memory_order_acquire) == 1 || g_active.load(std::memory_order_acquire))
        return false;
    // Started off before (a hook's call after a detach, or with no options): started anew.
    g_initialized.store(0, std::memory_order_release);
    unmapRing(); // the last session's ring, retired at its detach: nobody writes there any more
    walkForget();
    return agentStart(options);
}

void agentRetire()
{
    const AgentScope scope;
    cpuStop();
    g_mode.store(int(Mode::Off), std::memory_order_release);
    g_active.store(false, std::memory_order_release);
    if (g_ring) {
        g_ring->finished.store(1, std::memory_order_release);
        g_ring->detached.store(1, std::memory_order_release);
    }
    retireRing();
    walkRetire();
    resetFilter(false);
    giveTablePagesBack();
    startHeapCounting(false);
    heapResetThreads();
    resetThread();
    passThroughWhileOff();
    g_initialized.store(2, std::memory_order_release);
}

bool agentStarted()
{
    return g_initialized.load(std::memory_order_acquire) == 2;
}

void agentStartThreads()
{
    // A forked child starts its own ring: registered where the C library is fully started. The CPU sampler starts
    // here too: its timers' signal must find the C library ready.
    if (!g_active.load(std::memory_order_acquire))
        return;
    static bool atForkRegistered = false;
    if (!atForkRegistered) {
        const InternalWork work;
        atForkRegistered = pthread_atfork(atForkPrepare, nullptr, atForkChild) == 0;
        g_soleWriter = atForkRegistered;
    }
    // CPython's memory counted where it is allocated (agent_pymem.h): only before the interpreter starts.
    if (g_mode.load(std::memory_order_acquire) != int(Mode::Off) && g_attachedNs == 0 &&
        g_pythonAllocators == uint32_t(PythonAllocators::NotAsked)) {
        const InternalWork work; // dlsym's
        g_pythonAllocators = uint32_t(installPythonAllocators(g_pythonDomains, agentPythonFunctions()));
        if (g_pythonAllocators == uint32_t(PythonAllocators::NoInterpreter))
            forgetLookupError(); // a program that is not a Python has no PyMem_GetAllocator
        if (g_ring) {
            g_ring->pythonAllocators.store(g_pythonAllocators, std::memory_order_relaxed);
            if (g_pythonAllocators == uint32_t(PythonAllocators::Installed))
                g_ring->heapCounted.store(0, std::memory_order_release);
        }
    }
    cpuStart();
}

void agentFinish()
{
    const AgentScope scope;
    if (!g_ring)
        return;
    if (g_mode.load(std::memory_order_acquire) != int(Mode::Off)) {
        const ThreadState &t = t_state;
        writeTotals(totalAllocations(t), totalBytes(t));
    }
    if (g_pythonAllocators == uint32_t(PythonAllocators::Installed) ||
        g_pythonAllocators == uint32_t(PythonAllocators::Arenas))
        g_ring->pythonAllocators.store(uint32_t(pythonAllocatorsNow()), std::memory_order_relaxed);
    g_ring->finished.store(1, std::memory_order_release);
}

void agentStop()
{
    const AgentScope scope;
    cpuStop();
    g_mode.store(int(Mode::Off), std::memory_order_release);
    g_active.store(false, std::memory_order_release);
    if (g_ring)
        g_ring->finished.store(1, std::memory_order_release);
    unmapRing();
    resetFilter(false);
    startHeapCounting(false);
    resetThread();
    t_state.totalsKeySet = false;
    t_state.stackAsked = false;
    // Not started: the next allocation's countdown starts the agent from the environment again.
    __atomic_store_n(&g_hookFlags.filtered, uint8_t(1), __ATOMIC_RELEASE);
    __atomic_store_n(&g_passThrough, uint8_t(0), __ATOMIC_RELEASE);
    hookFlagsRaised();
    g_initialized.store(0, std::memory_order_release);
}

// --- The slow paths ----------------------------------------------------------------------------------------------

// Called when the thread's countdown ran out: decides whether `address` is sampled and draws the next point.
__attribute__((noinline)) void onCountdown(void *address, size_t size, const ProgramCall *call)
{
    ThreadState &t = t_state;
    if (address == nullptr)
        return; // a failed allocation: the countdown stays run out for the next one
    // Inside an allocator's operator new, which counts the call (and restores the countdown); the agent's own
    // allocations (made while it works: dlsym, pthread_getattr_np, pthread_atfork) pass through and leave the
    // countdown to the call they are nested in, as does a signal handler's allocation nested in that work.
    if (t.inCxx != 0 || t.internal != 0)
        return;
    const AgentScope scope;
    heapRecheck();
    // The first allocation starts the agent (one made while it starts passes through); once it is off or detached,
    // the thread comes back here a MiB later.
    if (!agentStarted() && !startFromEnvironment() && !agentStarted())
        return;
    const int mode = g_mode.load(std::memory_order_acquire);
    // What the countdown counted since it was last armed is the thread's, this allocation's included.
    int64_t countdown = countdownOf(t);
    t.bytes += uint64_t(t.armed - countdown);
    arm(t, countdown);
    if (g_slowPathCheck && t.depth == 1 && mode != int(Mode::Off) && g_slowPathCheck(call ? call->returnAddress : 0))
        return; // the front end let the agent go
    if (mode == int(Mode::Off) || (g_ring && g_ring->detached.load(std::memory_order_relaxed))) {
        // Off: back here after another MiB, no sooner (a slow path a MiB costs nothing to see). Not further off: an
        // agent loaded into a running program may be attached again, and a thread armed far off then would not be
        // sampled for as long (agentRetire's reset of each thread can lose to the thread's own add in a hook).
        arm(t, kOffCountdown);
        return;
    }
    watchThreadEnd();
    // Exact mode waits for room, except in a signal handler that interrupted this thread's own unpublished record
    // (AgentScope::reserve knows). Sampling never waits.
    if (mode == int(Mode::Exact)) {
        arm(t, kArmedNow);
        writeAlloc(address, size, true, true, totalAllocations(t), t.bytes, call);
    } else {
        // A malloc-family block allocated unmarked while the agent marks (the agent started at its call) could not be
        // told at its free: the thread's next allocation is the sample.
        const bool untellable = t.sampleKind == SampleUnmarked && marksSamples();
        if (t.rng == 0) {
            // A fresh thread: its first point is drawn, not taken at once.
            countdown += drawInterval(t);
            if (countdown <= 0 && !untellable)
                writeAlloc(address, size, false, false, totalAllocations(t), t.bytes, call);
        } else if (untellable) {
            arm(t, kArmedNow);
            return;
        } else {
            writeAlloc(address, size, false, false, totalAllocations(t), t.bytes, call);
        }
        while (countdown <= 0)
            countdown += drawInterval(t);
        arm(t, countdown);
    }
}

// A free that the filter let through (freeFiltered): records it when it is one the session must see.
__attribute__((noinline)) bool freeSlow(void *address)
{
    if (foreignBlock(address))
        return false;
    countFreed(address);
    if (t_state.inCxx != 0)
        return true; // inside an allocator's operator delete, which recorded the free
    const int mode = g_mode.load(std::memory_order_relaxed);
    if (mode == int(Mode::Off) || address == nullptr)
        return true;
    const AgentScope scope;
    if (mode == int(Mode::Exact)) {
        if (t_state.internal == 0)
            writeFree(address, true, true);
        return true;
    }
    if (untrack(uint64_t(address)))
        writeFree(address, false, false);
    return true;
}

void *unmarkFreed(void *address, bool *told)
{
    if (foreignBlock(address))
        return nullptr; // the start-up storage's: never given back
    void *block = markedBlockOf(address);
    countFreed(block);
    // Recorded where this ring recorded the sample (a forked child's parent, or an earlier session, did not).
    if (markRecordedHere(address) && g_mode.load(std::memory_order_relaxed) == int(Mode::Sampling)) {
        const AgentScope scope;
        writeFree(address, false, false);
        if (told)
            *told = true;
    }
    return block;
}

__attribute__((noinline)) void pythonFreeSlow(void *address)
{
    const int mode = g_mode.load(std::memory_order_relaxed);
    if (mode == int(Mode::Off) || t_state.inCxx != 0)
        return;
    const AgentScope scope;
    if (mode == int(Mode::Exact)) {
        if (t_state.internal == 0)
            writeFree(address, true, true);
        return;
    }
    if (untrack(uint64_t(address)))
        writeFree(address, false, false);
}

void watchThreadEnd()
{
    ThreadState &t = t_state;
    if (!t.totalsKeySet && g_totalsKeyMade) {
        t.totalsKeySet = true;
        const InternalWork work; // a key past the C library's first block of them takes memory of its own, once
        pthread_setspecific(g_totalsKey, reinterpret_cast<void *>(1));
    }
}

} // namespace emberline::agent
