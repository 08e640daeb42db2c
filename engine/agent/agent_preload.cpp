// libemberline_agent.so's preload front end: the program's allocation functions, interposed by LD_PRELOAD (inherited
// across fork and exec), each passing the call on to the next definition (the C library's, or another allocator's)
// and telling the core (agent_core.h) what happened: allocated() after an allocation, freeing() before a free. The
// C++ operators are agent_cxx.cpp's. The core starts at the program's first allocation.
//
// The calloc that dlsym makes while the next definitions are being looked up is served from a static buffer (the
// core is told that its blocks are not the allocator's).
//
// Thread: every thread of the program, concurrently.

#include "engine/agent/agent_core.h"
#include "engine/agent/agent_cpu.h"
#include "engine/agent/agent_writer.h"
#include "engine/agent/got/agent_got.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <atomic>

namespace emberline::agent {
namespace {

using MallocFn = void *(*)(size_t);
using FreeFn = void (*)(void *);
using CallocFn = void *(*)(size_t, size_t);
using ReallocFn = void *(*)(void *, size_t);
using MemalignFn = void *(*)(size_t, size_t);
using PosixMemalignFn = int (*)(void **, size_t, size_t);
using UsableSizeFn = size_t (*)(void *);
using DlopenFn = void *(*)(const char *, int);
using DlcloseFn = int (*)(void *);
using SigactionFn = int (*)(int, const struct sigaction *, struct sigaction *);
using SignalFn = sighandler_t (*)(int, sighandler_t);
using PthreadCreateFn = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

// The next definitions of everything the front end interposes.
struct NextFunctions {
    MallocFn malloc = nullptr;
    FreeFn free = nullptr;
    CallocFn calloc = nullptr;
    ReallocFn realloc = nullptr;
    MemalignFn memalign = nullptr;
    MemalignFn alignedAlloc = nullptr;
    PosixMemalignFn posixMemalign = nullptr;
    MallocFn valloc = nullptr;
    MallocFn pvalloc = nullptr;
    UsableSizeFn usableSize = nullptr;
    DlopenFn dlopen = nullptr;
    DlcloseFn dlclose = nullptr;
    SigactionFn sigaction = nullptr;
    SignalFn signal = nullptr;
    PthreadCreateFn pthreadCreate = nullptr;
    void *exec[kExecFunctions] = {}; // agent_exec.cpp's, in kExecNames' order
};
NextFunctions g_next;
std::atomic<int> g_resolved{0}; // 0: not yet, 1: resolving, 2: done

// The hot two are called through these, which start as functions that resolve the next ones first: the fast path
// then has no check of its own.
void *resolvingMalloc(size_t size);
void resolvingFree(void *address);
std::atomic<MallocFn> g_mallocFn{resolvingMalloc};
std::atomic<FreeFn> g_freeFn{resolvingFree};

// dlsym may call calloc (for its error state) before the next one is known: served from here, never freed.
alignas(64) char g_bootstrap[64 * 1024];
std::atomic<size_t> g_bootstrapUsed{0};

void *bootstrapAlloc(size_t size, size_t alignment = 16)
{
    size_t used = g_bootstrapUsed.load(std::memory_order_relaxed);
    for (;;) {
        // Room for a mark before each block (agent_track.h): a free that reads the chunk size finds it marked.
        const size_t start = (used + kWrapBytes + alignment - 1) & ~(alignment - 1);
        if (start + size > sizeof g_bootstrap)
            return nullptr;
        if (g_bootstrapUsed.compare_exchange_weak(used, start + size, std::memory_order_relaxed)) {
            // Its free must leave the fast path, to be recognized and not handed to the allocator.
            pinFilter(reinterpret_cast<uint64_t>(g_bootstrap + start));
            return markBlock(g_bootstrap + start - kWrapBytes, kWrapBytes);
        }
    }
}

template <typename Fn> Fn next(const char *name)
{
    return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// The next definitions: after the agent in the search order (preloaded: RTLD_NEXT), or, for an agent loaded into a
// running program (agent_attach.cpp), the program's own (RTLD_DEFAULT: the agent is not in the global scope then).
void *g_lookIn = RTLD_NEXT;

template <typename Fn> Fn nextIn(const char *name)
{
    return reinterpret_cast<Fn>(g_lookIn == RTLD_DEFAULT ? programDefinition(name) : dlsym(RTLD_NEXT, name));
}

void resolveNext()
{
    int expected = 0;
    if (!g_resolved.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        while (g_resolved.load(std::memory_order_acquire) != 2)
            sched_yield();
        return;
    }
    // First: dlsym's own blocks (the start-up storage) may be freed while the look-ups below still run.
    setForeignBlocks(g_bootstrap, g_bootstrap + sizeof g_bootstrap);
    g_next.malloc = nextIn<MallocFn>("malloc");
    g_next.free = nextIn<FreeFn>("free");
    g_next.calloc = nextIn<CallocFn>("calloc");
    g_next.realloc = nextIn<ReallocFn>("realloc");
    g_next.memalign = nextIn<MemalignFn>("memalign");
    g_next.alignedAlloc = nextIn<MemalignFn>("aligned_alloc");
    g_next.posixMemalign = nextIn<PosixMemalignFn>("posix_memalign");
    g_next.valloc = nextIn<MallocFn>("valloc");
    g_next.pvalloc = nextIn<MallocFn>("pvalloc");
    g_next.usableSize = nextIn<UsableSizeFn>("malloc_usable_size");
    g_next.dlopen = nextIn<DlopenFn>("dlopen");
    g_next.dlclose = nextIn<DlcloseFn>("dlclose");
    g_next.sigaction = nextIn<SigactionFn>("sigaction");
    g_next.signal = nextIn<SignalFn>("signal");
    g_next.pthreadCreate = nextIn<PthreadCreateFn>("pthread_create");
    for (int i = 0; i < kExecFunctions; ++i)
        g_next.exec[i] = nextIn<void *>(kExecNames[i]);
    // Marks on sampled blocks only where no free can pass the hooks: preloaded (a program the agent is loaded into
    // keeps calling the C library's free after a detach), and a C library without free_sized (glibc 2.39's, which
    // the hooks do not cover).
    const bool marks = g_lookIn != RTLD_DEFAULT && !libcHasFreeSized();
    setRealFunctions({g_next.malloc, g_next.free, g_next.sigaction, g_lookIn == RTLD_DEFAULT, marks});
    g_mallocFn.store(g_next.malloc, std::memory_order_release);
    g_freeFn.store(g_next.free, std::memory_order_release);
    g_resolved.store(2, std::memory_order_release);
    if (g_lookIn == RTLD_DEFAULT)
        forgetLookupError(); // definitionBehind's look-ups in modules that do not define the name
}

inline void ensureNext()
{
    if (__builtin_expect(g_resolved.load(std::memory_order_acquire) != 2, 0))
        resolveNext();
}

void *resolvingMalloc(size_t size)
{
    ensureNext();
    return g_next.malloc(size);
}

void resolvingFree(void *address)
{
    ensureNext();
    g_next.free(address);
}

// The next sigaction, signal, pthread_create or exec function: looked up on its own while the look-ups are under way (a
// signal handler's sigaction that lands in them on their own thread must not wait for them).
template <typename Fn> Fn nextOr(Fn resolved, const char *name)
{
    return g_resolved.load(std::memory_order_acquire) == 2 ? resolved : next<Fn>(name);
}

// Preloaded with the session's options in the environment, the agent starts here at the latest. Without them (loaded
// into a running program by dlopen, or preloaded by hand) it waits: for emberline_agent_attach, or for the first
// allocation to find it off.
__attribute__((constructor(101))) void preloadStart()
{
    const AgentScope scope; // the program's main starts with the errno it would have had
    AgentOptions options;
    if (!optionsFromEnvironment(options))
        return;
    ensureNext();
    agentStart(options);
    agentStartThreads();
}

__attribute__((destructor(101))) void preloadEnd()
{
    agentFinish(); // inside AgentScope
}

} // namespace

// For the exec hooks (agent_exec.cpp): the next exec function, resolved with the others, or looked up on its own while
// the look-ups are under way (resolved first, so that a vforked child's exec allocates nothing).
void *nextExec(int which)
{
    return g_resolved.load(std::memory_order_acquire) == 2 ? g_next.exec[which] : next<void *>(kExecNames[which]);
}

// For the C++ operators (agent_cxx.cpp): the next definition of `name`, where the C functions' are looked up
// (after the agent when preloaded, the program's own when loaded into a running program), those looked up first.
void *nextDefinition(const char *name)
{
    ensureNext();
    return nextIn<void *>(name);
}

bool resolveInjected()
{
    if (g_resolved.load(std::memory_order_acquire) == 2)
        return g_lookIn == RTLD_DEFAULT;
    g_lookIn = RTLD_DEFAULT;
    ensureNext();
    return g_next.malloc != nullptr && g_next.free != nullptr;
}

int injectedHooks(GotHook *out, int room);
int injectedCHooks(GotHook *out, int room);
int injectedCxxHooks(GotHook *out, int room); // agent_cxx.cpp

} // namespace emberline::agent

using namespace emberline::agent;

// --- The hooks ---------------------------------------------------------------------------------------------------
// Each one reads alike: the next definition's call, and the core told before a block goes back (freeing, or release
// around the call) or after one comes (allocated, or allocate around the call). The fast paths inline there add to the
// thread's countdown and heap slot, and read one line of the free filter.

// The hottest two start on a cache line of their own: where their branches fall against 32-byte boundaries cost a
// malloc+free pair some 0.3 ns (bench_agent), with the same instructions.
constexpr auto kNextMalloc = [](size_t n) { return g_mallocFn.load(std::memory_order_relaxed)(n); };
constexpr auto kNextFree = [](void *block) { g_freeFn.load(std::memory_order_relaxed)(block); };
EMBERLINE_EXPORT __attribute__((aligned(64))) void *malloc(size_t size)
{
    return allocate(size, kNextMalloc);
}

EMBERLINE_EXPORT __attribute__((aligned(64))) void free(void *address)
{
    release(address, kNextFree);
}

namespace {

// A request grown by a mark's room (agent_track.h), or past any allocator's reach where that overflows.
size_t grown(size_t size, size_t extra)
{
    size_t total = 0;
    return __builtin_add_overflow(size, extra, &total) ? ~size_t(0) : total;
}

// The room a block aligned to `alignment` keeps for its mark: the alignment, at least kWrapBytes; 0 (not marked: its
// sample moves on) for an alignment no power of two, or one whose room would waste more than a page.
size_t markRoom(size_t alignment)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096)
        return 0;
    return alignment < kWrapBytes ? kWrapBytes : alignment;
}

// The start-up storage's block moved to the allocator (realloc's): as much as the storage holds past it.
void *moveBootstrapBlock(void *address, size_t size)
{
    void *moved = g_next.malloc(size);
    const size_t left = size_t(g_bootstrap + sizeof g_bootstrap - static_cast<char *>(address));
    if (moved)
        memcpy(moved, address, size < left ? size : left);
    return allocated(moved, size);
}

// realloc of a marked block: the allocator's own realloc of the block under the mark, so that a block that grows
// (a list's array, a buffer) is grown in place or remapped by the allocator, not allocated anew and copied at every
// step (a fresh block's pages faulted in each time: four fifths of a CPython JSON program's page faults, and about 2%
// of its time, before). The old block's free is told first, as any free is (its address may be another thread's once
// the call returns). Its bytes stay past the mark, which the new block keeps: as a new sample where the countdown says
// so, else as a block no sample recorded (its free counts it off, unrecorded). Where blocks are no longer marked (the
// session ended, exact mode), the bytes move back to the block's start and it is a plain block again.
__attribute__((noinline)) void *reallocMarked(void *address, size_t size)
{
    if (foreignBlock(address))
        return moveBootstrapBlock(address, size);
    if (size == 0) {
        free(address); // realloc(p, 0) frees, as the C library's does
        return nullptr;
    }
    auto *block = static_cast<char *>(markedBlockOf(address));
    const size_t offset = size_t(static_cast<char *>(address) - block);
    const size_t held = g_next.usableSize(block) - offset;
    bool told = false;
    unmarkFreed(address, &told);
    const bool marking = hookFlagsSet() == 0;
    const bool sampled = marking && countDown(t_state, size);
    auto *moved = static_cast<char *>(g_next.realloc(block, grown(size, offset)));
    if (moved == nullptr) {
        // The old block is still the program's, its free told: its sample is lost (counted as dropped), its bytes
        // counted again, its free no longer recorded. (A countdown that ran out stays so for the next allocation.)
        setMarkRecorded(address, false);
        countAllocated(block);
        if (told && g_ring) {
            g_ring->allocsDropped.fetch_add(1, std::memory_order_relaxed);
            g_ring->bytesDropped.fetch_add(held, std::memory_order_relaxed);
        }
        return nullptr;
    }
    if (!marking) {
        memmove(moved, moved + offset, size < held ? size : held);
        return allocated(moved, size);
    }
    void *kept = markBlock(moved, offset);
    if (sampled) {
        sampleAs(kept, size, marksThisSample() ? SampleMarked : SampleUnmarked);
        countAllocated(moved);
        markSampled(kept);
    } else {
        countAllocatedUnmarked(moved);
    }
    return kept;
}

// realloc's sample where blocks are marked: the allocator's realloc of the block, kWrapBytes larger, its bytes moved
// past the mark (in place: no fresh block's pages, as a new block and a copy would take). A failed allocation leaves
// the old block the program's.
__attribute__((noinline)) void *reallocSampled(void *address, size_t size)
{
    const size_t held = g_next.usableSize(address);
    const bool marked = marksThisSample();
    auto *moved = static_cast<char *>(g_next.realloc(address, marked ? grown(size, kWrapBytes) : size));
    if (moved == nullptr) {
        unfreed(address); // the countdown stays run out for the next allocation
        return nullptr;
    }
    void *kept = moved;
    if (marked) {
        memmove(moved + kWrapBytes, moved, size < held ? size : held);
        kept = markBlock(moved, kWrapBytes);
    }
    sampleAs(kept, size, marked ? SampleMarked : SampleUnmarked);
    countAllocated(moved);
    markSampled(kept);
    return kept;
}

} // namespace

EMBERLINE_EXPORT void *calloc(size_t count, size_t size)
{
    if (__builtin_expect(g_resolved.load(std::memory_order_acquire) != 2, 0)) {
        // dlsym's own calloc while the next definitions are being looked up (by this thread or another).
        if (g_resolved.load(std::memory_order_acquire) == 1) {
            size_t bytes = 0;
            if (__builtin_mul_overflow(count, size, &bytes))
                return nullptr;
            return bootstrapAlloc(bytes); // static storage: already zero
        }
        ensureNext();
    }
    size_t bytes = 0;
    if (__builtin_mul_overflow(count, size, &bytes))
        return allocated(g_next.calloc(count, size), 0); // fails as the allocator fails it
    return allocateVia(bytes, kWrapBytes, [bytes](size_t extra) { return g_next.calloc(1, grown(bytes, extra)); });
}

// As heaptrack counts it: a free of the old block and an allocation of the new size. The old block's free is told
// before the call, so that its address, reused at once by another thread, is told apart.
EMBERLINE_EXPORT void *realloc(void *address, size_t size)
{
    ensureNext();
    if (address == nullptr)
        return allocateVia(size, kWrapBytes,
                           [size](size_t extra) { return g_next.realloc(nullptr, grown(size, extra)); });
    if (g_chunkSizes && isMarked(address))
        return reallocMarked(address, size);
    if (!freeing(address))
        return moveBootstrapBlock(address, size); // a block of the start-up storage: moved to the allocator
    if (size == 0) {
        // The C library frees the block; another allocator may give a block of its own.
        void *rest = g_next.realloc(address, 0);
        unfreed(rest);
        return rest;
    }
    const bool marking = hookFlagsSet() == 0;
    if (marking && countDown(t_state, size))
        return reallocSampled(address, size);
    void *moved = g_next.realloc(address, size);
    if (moved == nullptr) {
        unfreed(address); // it failed: the old block is still the program's
        return nullptr;
    }
    if (marking) {
        countAllocatedUnmarked(moved);
        return moved;
    }
    return allocated(moved, size);
}

EMBERLINE_EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    ensureNext();
    int rc = 0;
    void *address = allocateVia(size, markRoom(alignment), [&rc, alignment, size](size_t extra) {
        void *block = nullptr;
        rc = g_next.posixMemalign(&block, alignment, grown(size, extra));
        return rc == 0 ? block : nullptr;
    });
    if (rc == 0)
        *out = address;
    return rc;
}

EMBERLINE_EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    ensureNext();
    return allocateVia(size, markRoom(alignment),
                       [alignment, size](size_t extra) { return g_next.alignedAlloc(alignment, grown(size, extra)); });
}

EMBERLINE_EXPORT void *memalign(size_t alignment, size_t size)
{
    ensureNext();
    return allocateVia(size, markRoom(alignment),
                       [alignment, size](size_t extra) { return g_next.memalign(alignment, grown(size, extra)); });
}

EMBERLINE_EXPORT void *valloc(size_t size)
{
    ensureNext();
    return allocateVia(size, markRoom(4096), [size](size_t extra) { return g_next.valloc(grown(size, extra)); });
}

EMBERLINE_EXPORT void *pvalloc(size_t size)
{
    ensureNext();
    return allocateVia(size, markRoom(4096), [size](size_t extra) { return g_next.pvalloc(grown(size, extra)); });
}

// A marked block's usable size is past its mark.
EMBERLINE_EXPORT size_t malloc_usable_size(void *address)
{
    ensureNext();
    if (address != nullptr && g_chunkSizes && isMarked(address)) {
        if (foreignBlock(address))
            return 0;
        auto *block = static_cast<char *>(markedBlockOf(address));
        return g_next.usableSize(block) - size_t(static_cast<char *>(address) - block);
    }
    return g_next.usableSize ? g_next.usableSize(address) : 0;
}

// A library opened with RTLD_DEEPBIND resolves malloc and free to its own dependencies first, around the hooks: the
// session says so, and the agent takes its tables over (hooks/agent_deepbind.cpp). Both count a change of the program's
// modules as they begin (agent_tables.h): the stack walk copies until the session has read the maps again. Passed on as
// tail calls: glibc's dlopen and dlclose take the caller's return address for its search path and namespace.
EMBERLINE_EXPORT void *dlopen(const char *file, int flags)
{
    ensureNext();
    const bool deepBind = (flags & RTLD_DEEPBIND) != 0; // glibc's (the agent serves glibc's programs alone)
    if (g_ring) {
        if (deepBind)
            g_ring->problems.fetch_or(ProblemDeepBind, std::memory_order_relaxed);
        g_ring->mapsChanges.fetch_add(1, std::memory_order_acq_rel);
    }
    if (deepBind && deepBindBegins(file, __builtin_return_address(0)))
        return deepBindOpened(g_next.dlopen(file, flags));
    EMBERLINE_TAIL_CALL return g_next.dlopen(file, flags);
}

EMBERLINE_EXPORT int dlclose(void *handle)
{
    ensureNext();
    if (g_ring)
        g_ring->mapsChanges.fetch_add(1, std::memory_order_acq_rel);
    EMBERLINE_TAIL_CALL return g_next.dlclose(handle);
}

// The program installs a handler: when it is for the CPU sampler's signal, the sampler gives it up first (its timers
// are deleted), and the program gets the signal as if the agent had never used it.
EMBERLINE_EXPORT int sigaction(int signal, const struct sigaction *action, struct sigaction *old)
{
    const SigactionFn nextSigaction = nextOr(g_next.sigaction, "sigaction");
    if (!cpuOwnsSignal(signal))
        return nextSigaction(signal, action, old);
    int rc = 0;
    if (action != nullptr) { // else asked only: the program sees the default it would have without the agent
        cpuGiveUpSignal();
        struct sigaction ignored {};
        rc = nextSigaction(signal, action, &ignored);
    }
    if (old) {
        memset(old, 0, sizeof *old);
        old->sa_handler = SIG_DFL;
    }
    return rc;
}

EMBERLINE_EXPORT sighandler_t signal(int signal, sighandler_t handler)
{
    const SignalFn nextSignal = nextOr(g_next.signal, "signal");
    if (!cpuOwnsSignal(signal))
        return nextSignal(signal, handler);
    cpuGiveUpSignal();
    nextSignal(signal, handler);
    return SIG_DFL;
}

// Every pthread_create'd thread starts its CPU timer before its start routine runs.
EMBERLINE_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *), void *arg)
{
    const PthreadCreateFn nextCreate = nextOr(g_next.pthreadCreate, "pthread_create");
    void *args = cpuThreadStartArgs(routine, arg);
    if (!args)
        return nextCreate(thread, attr, routine, arg);
    const int rc = nextCreate(thread, attr, cpuThreadStart, args);
    if (rc != 0)
        cpuDropThreadStartArgs(args);
    return rc;
}

// --- The injected front end's hooks ------------------------------------------------------------------------------
// The same hooks, by hidden names of their own (agent_got.h), which agent_attach.cpp writes into the modules' global
// offset tables. There a hook flag is always set (the attached marks, frees filtered): malloc and free read the flags
// at once, without the fast pointer's test first.
extern "C" {
__attribute__((visibility("hidden"))) void *hook_malloc(size_t size)
{
    return allocateOff(size, kNextMalloc);
}
__attribute__((visibility("hidden"))) void hook_free(void *address)
{
    return address ? releaseOff(address, kNextFree) : kNextFree(address);
}
void *hook_calloc(size_t, size_t) EMBERLINE_HOOK_ALIAS(calloc);
void *hook_realloc(void *, size_t) EMBERLINE_HOOK_ALIAS(realloc);
int hook_posix_memalign(void **, size_t, size_t) EMBERLINE_HOOK_ALIAS(posix_memalign);
void *hook_aligned_alloc(size_t, size_t) EMBERLINE_HOOK_ALIAS(aligned_alloc);
void *hook_memalign(size_t, size_t) EMBERLINE_HOOK_ALIAS(memalign);
void *hook_valloc(size_t) EMBERLINE_HOOK_ALIAS(valloc);
void *hook_pvalloc(size_t) EMBERLINE_HOOK_ALIAS(pvalloc);
size_t hook_malloc_usable_size(void *) EMBERLINE_HOOK_ALIAS(malloc_usable_size);
void *hook_dlopen(const char *, int) EMBERLINE_HOOK_ALIAS(dlopen);
int hook_dlclose(void *) EMBERLINE_HOOK_ALIAS(dlclose);
int hook_sigaction(int, const struct sigaction *, struct sigaction *) EMBERLINE_HOOK_ALIAS(sigaction);
sighandler_t hook_signal(int, sighandler_t) EMBERLINE_HOOK_ALIAS(signal);
int hook_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
    EMBERLINE_HOOK_ALIAS(pthread_create);
int hook_execve(const char *, char *const[], char *const[]);
int hook_execv(const char *, char *const[]);
int hook_execvp(const char *, char *const[]);
int hook_execvpe(const char *, char *const[], char *const[]);
int hook_fexecve(int, char *const[], char *const[]);
int hook_execl(const char *, const char *, ...);
int hook_execlp(const char *, const char *, ...);
int hook_execle(const char *, const char *, ...);
}

int emberline::agent::injectedCHooks(GotHook *out, int room)
{
    ensureNext();
    const GotHook hooks[] = {
        {"malloc", reinterpret_cast<void *>(hook_malloc), reinterpret_cast<void *>(g_next.malloc), GotAllocation},
        {"free", reinterpret_cast<void *>(hook_free), reinterpret_cast<void *>(g_next.free), GotAllocation},
        {"calloc", reinterpret_cast<void *>(hook_calloc), reinterpret_cast<void *>(g_next.calloc), GotAllocation},
        {"realloc", reinterpret_cast<void *>(hook_realloc), reinterpret_cast<void *>(g_next.realloc), GotAllocation},
        {"posix_memalign", reinterpret_cast<void *>(hook_posix_memalign),
         reinterpret_cast<void *>(g_next.posixMemalign), GotAllocation},
        {"aligned_alloc", reinterpret_cast<void *>(hook_aligned_alloc), reinterpret_cast<void *>(g_next.alignedAlloc),
         GotAllocation},
        {"memalign", reinterpret_cast<void *>(hook_memalign), reinterpret_cast<void *>(g_next.memalign), GotAllocation},
        {"valloc", reinterpret_cast<void *>(hook_valloc), reinterpret_cast<void *>(g_next.valloc), GotAllocation},
        {"pvalloc", reinterpret_cast<void *>(hook_pvalloc), reinterpret_cast<void *>(g_next.pvalloc), GotAllocation},
        {"dlopen", reinterpret_cast<void *>(hook_dlopen), reinterpret_cast<void *>(g_next.dlopen), GotOther},
        {"dlclose", reinterpret_cast<void *>(hook_dlclose), reinterpret_cast<void *>(g_next.dlclose), GotOther},
        {"sigaction", reinterpret_cast<void *>(hook_sigaction), reinterpret_cast<void *>(g_next.sigaction), GotOther},
        {"signal", reinterpret_cast<void *>(hook_signal), reinterpret_cast<void *>(g_next.signal), GotOther},
        {"pthread_create", reinterpret_cast<void *>(hook_pthread_create),
         reinterpret_cast<void *>(g_next.pthreadCreate), GotOther},
        {"execve", reinterpret_cast<void *>(hook_execve), g_next.exec[0], GotOther},
        {"execv", reinterpret_cast<void *>(hook_execv), g_next.exec[1], GotOther},
        {"execvp", reinterpret_cast<void *>(hook_execvp), g_next.exec[2], GotOther},
        {"execvpe", reinterpret_cast<void *>(hook_execvpe), g_next.exec[3], GotOther},
        {"fexecve", reinterpret_cast<void *>(hook_fexecve), g_next.exec[4], GotOther},
        {"execl", reinterpret_cast<void *>(hook_execl), nullptr, GotOther},
        {"execlp", reinterpret_cast<void *>(hook_execlp), nullptr, GotOther},
        {"execle", reinterpret_cast<void *>(hook_execle), nullptr, GotOther},
    };
    int count = int(sizeof hooks / sizeof hooks[0]);
    if (count > room)
        count = room;
    for (int i = 0; i < count; ++i)
        out[i] = hooks[i];
    if (g_next.usableSize && count < room)
        out[count++] = {"malloc_usable_size", reinterpret_cast<void *>(hook_malloc_usable_size),
                        reinterpret_cast<void *>(g_next.usableSize), GotAllocation};
    return count;
}

int emberline::agent::injectedHooks(GotHook *out, int room)
{
    const int count = injectedCHooks(out, room);
    return count + injectedCxxHooks(out + count, room - count);
}
