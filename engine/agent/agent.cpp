// libemberline_agent.so: the in-process part of Emberline's memory profiling, preloaded into a launched program
// (LD_PRELOAD, inherited across fork and exec). It collects and never analyses: a sampled allocation copies the
// registers and the live part of the stack into the process's ring (agent_protocol.h), a free of a sampled
// address writes a small record, and the session unwinds, symbolizes and aggregates on its own threads.
//
// Sampling by bytes: each thread draws exponential intervals with the ring's mean (EMBERLINE_ALLOC_INTERVAL,
// default 512 KiB) and samples the allocation that crosses the next point, so an allocation of `size` bytes is
// sampled with probability 1 - exp(-size / mean). The agent only reports the size; the session applies the one
// weighting (engine/memory/allocation_weight.h).
//
// Safe anywhere: the hooks' fast path takes no lock and allocates nothing; per-thread state is static TLS;
// reentry (our own calls, a signal handler allocating inside the hooks) passes through; the calloc that dlsym
// makes while the hooks are being resolved is served from a static buffer; a forked child gets its own ring;
// a full ring never blocks (but in exact mode, where nothing may be lost, while the session is alive); if the
// session stops visiting for 100 ms, nothing new is sampled until it comes back; once it detaches, everything
// passes through.
//
// Thread: every thread of the program, concurrently.

#include "engine/agent/agent_count.h"
#include "engine/agent/agent_hooks.h"
#include "engine/agent/agent_protocol.h"
#include "engine/agent/agent_ring.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cmath>

#define EMBERLINE_EXPORT extern "C" __attribute__((visibility("default")))

namespace emberline::agent {
namespace {

using MallocFn = void *(*)(size_t);
using FreeFn = void (*)(void *);
using CallocFn = void *(*)(size_t, size_t);
using ReallocFn = void *(*)(void *, size_t);
using MemalignFn = void *(*)(size_t, size_t);
using PosixMemalignFn = int (*)(void **, size_t, size_t);
using DlopenFn = void *(*)(const char *, int);

struct RealFunctions {
    MallocFn malloc = nullptr;
    FreeFn free = nullptr;
    CallocFn calloc = nullptr;
    ReallocFn realloc = nullptr;
    MemalignFn memalign = nullptr;
    MemalignFn alignedAlloc = nullptr;
    PosixMemalignFn posixMemalign = nullptr;
    MallocFn valloc = nullptr;
    MallocFn pvalloc = nullptr;
    DlopenFn dlopen = nullptr;
};
RealFunctions g_real;
std::atomic<int> g_resolved{0}; // 0: not yet, 1: resolving, 2: done

// The hot two are called through these, which start as functions that resolve the real ones first: the fast path
// then has no check of its own.
void *resolvingMalloc(size_t size);
void resolvingFree(void *address);
std::atomic<MallocFn> g_mallocFn{resolvingMalloc};
std::atomic<FreeFn> g_freeFn{resolvingFree};

// dlsym may call calloc (for its error state) before the real one is known: served from here, never freed.
alignas(64) char g_bootstrap[64 * 1024];
std::atomic<size_t> g_bootstrapUsed{0};

bool isBootstrap(const void *p)
{
    return p >= static_cast<const void *>(g_bootstrap) &&
           p < static_cast<const void *>(g_bootstrap + sizeof g_bootstrap);
}

void *bootstrapAlloc(size_t size, size_t alignment = 16)
{
    size_t used = g_bootstrapUsed.load(std::memory_order_relaxed);
    for (;;) {
        const size_t start = (used + alignment - 1) & ~(alignment - 1);
        if (start + size > sizeof g_bootstrap)
            return nullptr;
        if (g_bootstrapUsed.compare_exchange_weak(used, start + size, std::memory_order_relaxed)) {
            // Its free must leave the fast path, to be recognized and not handed to the C library.
            pinFilter(reinterpret_cast<uint64_t>(g_bootstrap + start));
            return g_bootstrap + start;
        }
    }
}

} // namespace

__thread ThreadState t_state __attribute__((tls_model("initial-exec"))) = {.state = kStateNow,
                                                                           .allocations = 0,
                                                                           .armed = kArmedNow,
                                                                           .bytes = 0,
                                                                           .rng = 0,
                                                                           .tid = 0,
                                                                           .totalsKeySet = false,
                                                                           .slotGiven = false,
                                                                           .slot = nullptr,
                                                                           .ownSlot = nullptr};

namespace {

enum class Mode : int { Off = 0, Sampling = 1, Exact = 2 };
std::atomic<int> g_mode{int(Mode::Off)};
std::atomic<bool> g_started{false}; // the constructor has run (g_mode is final, but for a fork's failure)
std::atomic<bool> g_active{false};  // this process image has a ring (memory, CPU or both)
uint32_t currentTid()
{
    ThreadState &t = t_state;
    if (t.tid == 0)
        t.tid = uint32_t(syscall(SYS_gettid));
    return t.tid;
}

void resolveReal()
{
    int expected = 0;
    if (!g_resolved.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        while (g_resolved.load(std::memory_order_acquire) != 2)
            sched_yield();
        return;
    }
    g_real.malloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "malloc"));
    g_real.free = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free"));
    g_real.calloc = reinterpret_cast<CallocFn>(dlsym(RTLD_NEXT, "calloc"));
    g_real.realloc = reinterpret_cast<ReallocFn>(dlsym(RTLD_NEXT, "realloc"));
    g_real.memalign = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "memalign"));
    g_real.alignedAlloc = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "aligned_alloc"));
    g_real.posixMemalign = reinterpret_cast<PosixMemalignFn>(dlsym(RTLD_NEXT, "posix_memalign"));
    g_real.valloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "valloc"));
    g_real.pvalloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "pvalloc"));
    g_real.dlopen = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
    resolveUsable(g_real.malloc, g_real.free);
    g_mallocFn.store(g_real.malloc, std::memory_order_release);
    g_freeFn.store(g_real.free, std::memory_order_release);
    g_resolved.store(2, std::memory_order_release);
}

inline void ensureReal()
{
    if (__builtin_expect(g_resolved.load(std::memory_order_acquire) != 2, 0))
        resolveReal();
}

void *resolvingMalloc(size_t size)
{
    ensureReal();
    return g_real.malloc(size);
}

void resolvingFree(void *address)
{
    ensureReal();
    g_real.free(address);
}

} // namespace

void *mallocInternal(size_t size)
{
    ensureReal();
    return g_real.malloc(size);
}

void freeInternal(void *address)
{
    ensureReal();
    g_real.free(address);
}

namespace {

// The next sampling point, in bytes: an exponential draw with the mean interval.
int64_t drawInterval(ThreadState &t)
{
    if (t.rng == 0)
        t.rng = (nowNs() ^ (uint64_t(currentTid()) << 32)) | 1;
    uint64_t x = t.rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t.rng = x;
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

void atForkChild()
{
    ThreadState &t = t_state;
    t.tid = 0;
    t.rng = 0;
    t.state = kStateNow;
    t.armed = kArmedNow;
    t.allocations = 0; // the child's totals start with it
    t.bytes = 0;
    heapForkChild();
    if (!g_active.load(std::memory_order_relaxed) || !g_ring)
        return;
    const uint32_t parent = g_ring->pid;
    g_sessionGone.store(false, std::memory_order_relaxed);
    // The parent's ring stays the parent's: this process starts its own, or runs without one.
    munmap(g_ring, kRingHeaderBytes + g_ringBytes);
    g_ring = nullptr;
    if ((g_interval > 1 && !mapTables()) || !createRing(parent)) {
        g_mode.store(int(Mode::Off), std::memory_order_release);
        g_active.store(false, std::memory_order_release);
        startHeapCounting(false);
        resetFilter(false);
        return;
    }
    resetFilter(g_mode.load(std::memory_order_relaxed) == int(Mode::Exact));
    cpuForkChild();
}

// A thread's totals when it ends (a thread-specific key's destructor: pthread threads; the main thread's are written at
// the image's end, agentEnd).
pthread_key_t g_totalsKey;
bool g_totalsKeyMade = false;

void threadTotals(void *)
{
    const ThreadState &t = t_state;
    giveHeapSlotBack();
    if (g_mode.load(std::memory_order_acquire) == int(Mode::Off) || !g_ring)
        return;
    writeTotals(currentTid(), totalAllocations(t), totalBytes(t)); // allocates nothing
}

void initialize()
{
    ensureReal();
    const char *directory = getenv(kEnvDirectory);
    if (!directory || !*directory || strlen(directory) >= sizeof g_directory - 64)
        return;
    memcpy(g_directory, directory, strlen(directory) + 1);
    // Memory is profiled when an interval is given; CPU is sampled when a period is given; either needs the ring.
    const char *interval = getenv(kEnvAllocInterval);
    const bool memory = interval && *interval;
    g_cpuPeriodNs = parseUnsigned(getenv(kEnvCpuPeriod), 0);
    if (!memory && g_cpuPeriodNs == 0)
        return;
    g_interval = memory ? parseUnsigned(interval, uint64_t(512) * 1024) : 0;
    if (memory && g_interval == 0)
        g_interval = 1;
    uint64_t ringBytes = parseUnsigned(getenv(kEnvRingBytes), kDefaultRingDataBytes);
    if (ringBytes < 65536)
        ringBytes = 65536;
    while (ringBytes & (ringBytes - 1))
        ringBytes &= ringBytes - 1; // down to a power of two
    g_ringBytes = ringBytes;
    if ((g_interval > 1 && !mapTables()) || !createRing(0))
        return;
    g_active.store(true, std::memory_order_release);
    if (memory) {
        g_totalsKeyMade = pthread_key_create(&g_totalsKey, threadTotals) == 0;
        resetFilter(g_interval == 1);
        g_mode.store(int(g_interval == 1 ? Mode::Exact : Mode::Sampling), std::memory_order_release);
    }
}

// The agent starts at the program's first allocation (the C library's own, made while the dynamic linker starts the
// program, before any constructor), so that every block the program frees later was seen allocated; else in its
// constructor. Only system calls and getenv run then: the environment is in place before the first allocation.
std::atomic<int> g_initialized{0}; // 0: not yet, 1: starting, 2: done
bool startOnce()
{
    int expected = 0;
    if (g_initialized.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        {
            const InternalWork work;
            initialize();
        }
        startHeapCounting(g_mode.load(std::memory_order_acquire) != int(Mode::Off) && heapSizesKnown());
        g_started.store(true, std::memory_order_release);
        g_initialized.store(2, std::memory_order_release);
    }
    return g_initialized.load(std::memory_order_acquire) == 2;
}

__attribute__((constructor(101))) void agentStart()
{
    startOnce();
    // A forked child starts its own ring: registered here, where the C library is fully started. The CPU sampler
    // starts here too: its timers' signal must find the C library ready.
    if (g_active.load(std::memory_order_acquire)) {
        {
            const InternalWork work;
            pthread_atfork(nullptr, nullptr, atForkChild);
        }
        cpuStart();
    }
}

__attribute__((destructor(101))) void agentEnd()
{
    if (!g_ring)
        return;
    if (g_mode.load(std::memory_order_acquire) != int(Mode::Off)) {
        const ThreadState &t = t_state;
        writeTotals(currentTid(), totalAllocations(t), totalBytes(t));
    }
    g_ring->finished.store(1, std::memory_order_release);
}

// --- The slow paths ----------------------------------------------------------------------------------------------

// Called when the thread's countdown ran out: decides whether `address` is sampled and draws the next point.
__attribute__((noinline)) void onCountdown(void *address, size_t size)
{
    ThreadState &t = t_state;
    if (address == nullptr)
        return; // a failed allocation: the countdown stays run out for the next one
    if (t_inCxx != 0)
        return; // inside an allocator's operator new, which counts the call (and restores the countdown)
    int mode = g_mode.load(std::memory_order_acquire);
    // The agent's own allocations (made while it works: dlsym, pthread_getattr_np, pthread_atfork) pass through
    // and leave the countdown to the call they are nested in. A signal handler's allocation nested in the agent's
    // work is the program's: it is recorded, without waiting.
    if (t_internal != 0)
        return;
    // The first allocation starts the agent; while it starts, other threads' allocations (there are none before the
    // constructors run) ask again at their next one. Once it is off or detached, the thread does not come back here
    // for a long while.
    if (mode == int(Mode::Off) && !g_started.load(std::memory_order_acquire)) {
        if (!startOnce())
            return;
        mode = g_mode.load(std::memory_order_acquire);
    }
    // What the countdown counted since it was last armed is the thread's, this allocation's included.
    int64_t countdown = countdownOf(t);
    t.bytes += uint64_t(t.armed - countdown);
    arm(t, countdown);
    if (mode == int(Mode::Off) || (g_ring && g_ring->detached.load(std::memory_order_relaxed))) {
        arm(t, int64_t(1) << 36); // far off (a countdown shifted by kCountBits must stay below 2^63)
        return;
    }
    watchThreadEnd();
    // Exact mode waits for room, except in a signal handler that interrupted this thread's own unpublished record
    // (reserveWaiting knows). Sampling never waits.
    if (mode == int(Mode::Exact)) {
        arm(t, kArmedNow);
        writeAlloc(address, size, true, true, currentTid(), t.allocations, t.bytes);
    } else {
        const bool first = t.rng == 0;
        if (first) {
            // A fresh thread: its first point is drawn, not taken at once.
            countdown += drawInterval(t);
            if (countdown <= 0)
                writeAlloc(address, size, false, false, currentTid(), t.allocations, t.bytes);
        } else {
            writeAlloc(address, size, false, false, currentTid(), t.allocations, t.bytes);
        }
        while (countdown <= 0)
            countdown += drawInterval(t);
        arm(t, countdown);
    }
}

inline void *afterAlloc(void *address, size_t size)
{
    ThreadState &t = t_state;
    if (__builtin_expect(countDown(t, size), 0))
        onCountdown(address, size);
    countAllocated(address);
    return address;
}

// A malloc whose size ran the countdown out (already taken off it): the allocation, then the sampling decision.
__attribute__((noinline)) void *countedMalloc(size_t size)
{
    void *address = g_mallocFn.load(std::memory_order_relaxed)(size);
    onCountdown(address, size); // the first allocation starts the agent here, before it is counted
    countAllocated(address);
    return address;
}

// A free that the filter let through (freeFiltered): records it when it is one the session must see.
void beforeFree(void *address)
{
    if (t_inCxx != 0)
        return; // inside an allocator's operator delete, which recorded the free
    const int mode = g_mode.load(std::memory_order_relaxed);
    if (mode == int(Mode::Off) || address == nullptr)
        return;
    if (mode == int(Mode::Exact)) {
        if (t_internal == 0)
            writeFree(address, true, true, currentTid());
        return;
    }
    if (untrack(uint64_t(address)))
        writeFree(address, false, false, currentTid());
}

// A free the fast path leaves to the slow path: no slot yet, the agent's work, free(nullptr), another allocator.
__attribute__((noinline)) void countedFree(void *address)
{
    countFreed(address);
    g_freeFn.load(std::memory_order_relaxed)(address);
}

__attribute__((noinline)) void filteredFree(void *address)
{
    if (isBootstrap(address))
        return;
    ensureReal();
    countFreed(address);
    beforeFree(address);
    g_real.free(address);
}

} // namespace

uint32_t currentThreadId()
{
    return currentTid();
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

// For the C++ operators (agent_cxx.cpp).
__thread uint32_t t_inCxx __attribute__((tls_model("initial-exec")));

void *countAllocation(void *address, size_t size)
{
    return afterAlloc(address, size);
}

void recordFree(void *address)
{
    beforeFree(address);
}

void resolveRealFunctions()
{
    ensureReal();
}

} // namespace emberline::agent

using namespace emberline::agent;

// --- The hooks ---------------------------------------------------------------------------------------------------

// The fast paths: the countdown, the allocator's call and the block's chunk size added to the thread's heap slot
// for malloc; one bit of the filter, the chunk size taken off and an indirect jump for free.
EMBERLINE_EXPORT void *malloc(size_t size)
{
    ThreadState &t = t_state;
    if (__builtin_expect(countDown(t, size), 0))
        return countedMalloc(size);
    void *address = g_mallocFn.load(std::memory_order_relaxed)(size);
    countAllocated(address);
    return address;
}

EMBERLINE_EXPORT void free(void *address)
{
    if (__builtin_expect(freeFiltered(uint64_t(address)), 0))
        return filteredFree(address);
    HeapSlot *slot = t_state.slot; // the C library's chunk size off the count, then a jump: no call, no frame
    if (__builtin_expect(slot == nullptr || address == nullptr, 0))
        return countedFree(address);
    addToSum(slot->freed, chunkSize(address));
    g_freeFn.load(std::memory_order_relaxed)(address);
}

EMBERLINE_EXPORT void *calloc(size_t count, size_t size)
{
    if (__builtin_expect(g_resolved.load(std::memory_order_acquire) != 2, 0)) {
        // dlsym's own calloc while the real functions are being resolved (by this thread or another).
        if (g_resolved.load(std::memory_order_acquire) == 1) {
            size_t bytes = 0;
            if (__builtin_mul_overflow(count, size, &bytes))
                return nullptr;
            return bootstrapAlloc(bytes); // static storage: already zero
        }
        ensureReal();
    }
    size_t bytes = 0;
    if (__builtin_mul_overflow(count, size, &bytes))
        bytes = 0;
    return afterAlloc(g_real.calloc(count, size), bytes);
}

EMBERLINE_EXPORT void *realloc(void *address, size_t size)
{
    ensureReal();
    if (address == nullptr)
        return afterAlloc(g_real.realloc(nullptr, size), size);
    if (__builtin_expect(freeFiltered(uint64_t(address)), 0)) {
        if (isBootstrap(address)) {
            void *moved = g_real.malloc(size);
            const size_t left = size_t(g_bootstrap + sizeof g_bootstrap - static_cast<char *>(address));
            if (moved)
                memcpy(moved, address, size < left ? size : left);
            return afterAlloc(moved, size);
        }
        // As heaptrack counts it: a free of the old block and an allocation of the new size. The old block's free
        // is reported before the real call, so that its address, reused at once by another thread, is told apart.
        beforeFree(address);
    }
    countFreed(address); // before the call too: the old block's size is its own only until then
    if (size == 0) {
        // The C library frees the block; another allocator may give a block of its own.
        void *rest = g_real.realloc(address, 0);
        countAllocated(rest);
        return rest;
    }
    void *moved = g_real.realloc(address, size);
    if (moved == nullptr) {
        countAllocated(address); // it failed: the old block is still the program's
        return nullptr;
    }
    return afterAlloc(moved, size);
}

EMBERLINE_EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    ensureReal();
    const int rc = g_real.posixMemalign(out, alignment, size);
    if (rc == 0)
        afterAlloc(*out, size);
    return rc;
}

EMBERLINE_EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    ensureReal();
    return afterAlloc(g_real.alignedAlloc(alignment, size), size);
}

EMBERLINE_EXPORT void *memalign(size_t alignment, size_t size)
{
    ensureReal();
    return afterAlloc(g_real.memalign(alignment, size), size);
}

EMBERLINE_EXPORT void *valloc(size_t size)
{
    ensureReal();
    return afterAlloc(g_real.valloc(size), size);
}

EMBERLINE_EXPORT void *pvalloc(size_t size)
{
    ensureReal();
    return afterAlloc(g_real.pvalloc(size), size);
}

// A library opened with RTLD_DEEPBIND resolves malloc and free to its own dependencies first, around the hooks:
// the session says so.
EMBERLINE_EXPORT void *dlopen(const char *file, int flags)
{
    ensureReal();
#ifdef RTLD_DEEPBIND
    if ((flags & RTLD_DEEPBIND) != 0 && g_ring)
        g_ring->problems.fetch_or(ProblemDeepBind, std::memory_order_relaxed);
#endif
    return g_real.dlopen(file, flags);
}
