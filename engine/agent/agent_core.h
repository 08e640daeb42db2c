#pragma once

// The agent's core: what a front end calls. The preload front end (agent_preload.cpp, agent_cxx.cpp: the program's
// allocation functions interposed by LD_PRELOAD) is the one today; a front end that loads the agent into a running
// program will call the same. engine/agent/DESIGN.md says what each context may do, and why.
//
//   start      agentStart(options) once per process image (the first allocation, or the constructor), then
//              agentStartThreads() where the C library is whole (the constructor): fork handling, the CPU sampler
//   allocate   allocated(address, size) after every allocation the program makes (null when it failed); malloc
//              itself: allocate(size, next)
//   free       freeing(address) before every block goes back to the allocator (false: it is not the allocator's);
//              free itself: release(address, next)
//   CPU sample the CPU timers' handler (agent_cpu.cpp), started by agentStartThreads()
//   threads    a thread's end writes its totals (a key's destructor); cpuThreadStart wraps a new thread's start
//   stop       agentFinish() as the image ends (its totals, the ring marked finished); agentStop() lets everything
//              go (timers deleted, the ring unmapped, every hook passing through)
//
// x86-64 and glibc only: the registers and the stack are read as x86-64 lays them out, the heap counts read glibc's
// chunk headers (checked as the agent starts; another allocator is asked through malloc_usable_size).
//
// Thread: every thread of the program, concurrently; the fast paths inline here take no lock, allocate nothing and
// make no system call.

#include "engine/agent/agent_heap.h"
#include "engine/agent/agent_protocol.h"
#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_track.h"
#include "engine/agent/agent_writer.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

// A hook the front end exports (the agent's one visible kind of symbol; everything else is hidden).
#define EMBERLINE_EXPORT extern "C" __attribute__((visibility("default")))
// A call passed on as the hook's own tail call, where the callee reads its caller's return address (glibc's dlopen,
// dlclose and dlsym: the search path, the namespace, where RTLD_NEXT starts): clang is told it must be one; GCC (before
// 15, no such attribute) makes it at the agent's -O2 (EMBERLINE_AGENT_FLAGS).
#if defined(__clang__)
#define EMBERLINE_TAIL_CALL [[clang::musttail]]
#else
#define EMBERLINE_TAIL_CALL
#endif

namespace emberline::agent {

// What the core needs of the functions the front end interposes: the allocator's (the agent's own memory, the heap
// counts' check) and the C library's sigaction (the CPU sampler's handler). Set before the first allocation reaches
// the core.
struct RealFunctions {
    void *(*malloc)(size_t) = nullptr;
    void (*free)(void *) = nullptr;
    int (*sigaction)(int, const struct sigaction *, struct sigaction *) = nullptr;
    // Where the allocator's malloc_usable_size is looked up: after the agent (false: preloaded, and a test that links
    // the core), or in the program's own scope (the agent loaded into a running program). A flag, not dlsym's
    // handle: RTLD_NEXT is no constant expression, and an object that holds it is initialized by a constructor,
    // which runs after the program's first allocation has set it.
    bool programScope = false;
    // The hooks are every function of the program's malloc family, frees included (the preload front end, where no
    // free of the C library's could bypass them): sampled blocks may carry their own marks (agent_track.h).
    bool marksAllowed = false;
};
void setRealFunctions(const RealFunctions &real);
const RealFunctions &realFunctions();
// A range of memory the front end hands out itself (its start-up storage): freeing() says false for its blocks.
void setForeignBlocks(const void *begin, const void *end);
bool foreignBlock(const void *address);

struct AgentOptions {
    const char *directory = nullptr; // where the ring is created (the session's folder)
    uint64_t allocInterval = 0;      // mean bytes between sampled allocations; 1: every one (exact); 0: memory off
    uint64_t cpuPeriodNs = 0;        // the in-process sampler's period; 0: off
    bool cpuPerfEvents = false;      // its clock: per-thread perf events where allowed (kEnvCpuClock), else timers
    bool pythonAllocators = false;   // CPython's own allocators counted at their calls (kEnvPythonAllocators)
    uint64_t ringBytes = kDefaultRingDataBytes;
};
// The options the session put in the program's environment (agent_protocol.h's kEnv*); false: the agent stays off.
bool optionsFromEnvironment(AgentOptions &options);
// The same options, each named as in the environment, from `lookup` (null: not given).
using OptionLookup = const char *(*)(const char *name, void *context);
bool optionsFrom(AgentOptions &options, OptionLookup lookup, void *context);

// Starts the agent in this process image once: the ring, the tracking tables, the mode. False when it is off (no
// options, no ring). A call while another start is under way waits for it with `wait`, else says false at once (a
// hook's: the thread that starts it may be this very one, in a signal handler, or gone, in a forked child).
bool agentStart(const AgentOptions &options, bool wait = true);
// Once the C library is whole: fork handling and the CPU sampler.
void agentStartThreads();
void agentFinish();
// Everything let go: timers deleted, the ring unmapped, the mode off, the calling thread's state anew. For a process
// whose other threads no longer call the agent (a test between two starts): their state still points into the ring.
void agentStop();
// Whether the agent has started in this image (with a ring or not); whether it has a ring now.
bool agentStarted();
bool agentActive();

// For a front end that loads the agent into a running program (agent_attach.cpp). agentRestart starts it with
// `options` where it is started but off (never started, or retired); false when it is active or starting.
// agentRetire lets the session's ring go while other threads may still be inside a hook: timers deleted, the mode
// off, the ring and the unwind tables left to anonymous pages at the same addresses (a late write lands there, never
// in a file, never a fault; the next agentRestart unmaps them), every counting thread sent to the slow path at its
// next allocation.
bool agentRestart(const AgentOptions &options);
void agentRetire();
// Asked on every slow path of an allocation outside a nested handler while memory is profiled (null: nothing to
// ask), with the return address of the allocation's call where the hook knows it (0: not known); true when the
// front end retired the agent there.
extern bool (*g_slowPathCheck)(uint64_t caller);

// Sampled blocks are no longer marked in this image (a library opened with RTLD_DEEPBIND may call the C library's free
// around the hooks): frees ask the filter again, and a block marked before is still told by its mark.
void refuseMarks();
// A launched program's dlopen with RTLD_DEEPBIND from `caller` (hooks/agent_deepbind.cpp). deepBindBegins, before the
// call, refuses marks and says whether the agent makes the call itself; it then hands dlopen's result to
// deepBindOpened, which takes the new modules' tables over.
bool deepBindBegins(const char *file, const void *caller);
void *deepBindOpened(void *handle);

// The agent's own memory, from the allocator directly (never counted, never recorded).
void *mallocInternal(size_t size);
void freeInternal(void *address);

// --- The fast paths ----------------------------------------------------------------------------------------------

// Memory is not profiled (CPU alone, the agent off, or retired after a detach): every hook passes its call on and
// counts nothing, no countdown, no heap count; a free still asks the filter (the front end's own blocks). Set as the
// agent starts, restarts, retires or stops, read relaxed: a hook that sees a change late is a hook that was under way
// at it.
inline constexpr uint8_t &g_passThrough = g_hookFlags.passThrough; // agent_heap.h's HookFlags
inline bool passingThrough()
{
    return __builtin_expect(__atomic_load_n(&g_passThrough, __ATOMIC_RELAXED) != 0, 0);
}

inline int64_t countdownOf(const ThreadState &t)
{
    return t.state >> kCountBits; // arithmetic: the count bits below stay out
}

// The countdown armed anew at `bytes` (the count bits taken into `allocations` first).
inline void arm(ThreadState &t, int64_t bytes)
{
    t.allocations += uint64_t(t.state) & kCountMask;
    t.state = int64_t(uint64_t(bytes) << kCountBits);
    t.armed = bytes;
}

inline uint64_t totalAllocations(const ThreadState &t)
{
    return t.allocations + (uint64_t(t.state) & kCountMask);
}

inline uint64_t totalBytes(const ThreadState &t)
{
    return t.bytes + uint64_t(t.armed - countdownOf(t));
}

// One allocation of `size` bytes on the thread's count and countdown; true when the countdown ran out (the state at
// most 0). One subtraction in place, whose flags say so: a signal handler on the same thread cannot fall between a
// load and a store of the state, and the fast path neither keeps the state in a register nor tests it again (three
// instructions fewer than a load, an add and a store).
inline bool countDown(ThreadState &t, size_t size)
{
    bool ranOut = false;
    asm("subq %2, %0" : "+m"(t.state), "=@ccle"(ranOut) : "r"((uint64_t(size) << kCountBits) - 1));
    return ranOut;
}

// The slow paths (agent_core.cpp), each inside an AgentScope: the countdown ran out (sample, draw the next point,
// start the agent at the program's first allocation), and a free the filter let through (record it when the session
// must see it; false for a foreign block).
void onCountdown(void *address, size_t size, const ProgramCall *call = nullptr);
bool freeSlow(void *address);

// An allocation the program made (`address` null when it failed), `size` bytes asked for; returns `address`.
inline void *allocated(void *address, size_t size)
{
    if (passingThrough())
        return address;
    if (__builtin_expect(countDown(t_state, size), 0)) {
        onCountdown(address, size);
        countAllocated(address);
        markSampled(address);
        return address;
    }
    countAllocated(address);
    return address;
}

// A block about to go back to the allocator: true when it should (false: one of the front end's own blocks).
inline bool freeing(void *address)
{
    if (__builtin_expect(freeFiltered(uint64_t(address)), 0))
        return freeSlow(address);
    if (!passingThrough())
        countFreed(address);
    return true;
}

// Whether this call's sampled block is allocated marked: marking on, the program's own call (not the agent's work,
// nor one nested in an allocator's operator or CPython's allocator, whose blocks that call's free gives back).
inline bool marksThisSample()
{
    return marksSamples() && t_state.inCxx == 0 && t_state.internal == 0;
}

// The sample of `address` (marked or not, as `kind` says) told to the core: onCountdown with the thread's kind set.
inline void sampleAs(void *address, size_t size, SampleKind kind, const ProgramCall *call = nullptr)
{
    const uint8_t outer = t_state.sampleKind; // a signal handler's allocation nested in a sample's
    t_state.sampleKind = kind;
    onCountdown(address, size, call);
    t_state.sampleKind = outer;
}

// malloc's and free's own forms, for the hottest two hooks (`next` calls the next definition): the countdown is
// taken before the allocator's call, so that the fast path keeps nothing across it, and a free that the filter
// lets through leaves by a tail call. allocated() and freeing() cost a pair about 0.3 ns more (bench_agent).
// allocateSlow's caller is the program (allocate() leaves by a tail call): its frame pointer, which reading it makes
// it keep, tells where the program called. A sampled block is allocated marked where the agent marks (the countdown
// ran out before the call: the call asks for the mark's room too).
template <typename Next> __attribute__((noinline)) void *allocateSlow(size_t size, Next next)
{
    const bool marked = marksThisSample();
    void *address =
        marked ? markBlock(next(size + kWrapBytes < size ? ~size_t(0) : size + kWrapBytes), kWrapBytes) : next(size);
    const auto *frame = static_cast<const uint64_t *>(__builtin_frame_address(0));
    const ProgramCall call{reinterpret_cast<uint64_t>(__builtin_return_address(0)),
                           reinterpret_cast<uint64_t>(frame) + 16, frame[0]};
    // The first allocation starts the agent here, before it is counted.
    sampleAs(address, size, marked ? SampleMarked : SampleUnmarked, &call);
    countAllocated(marked && address ? markedBlockOf(address) : address);
    markSampled(address);
    return address;
}
// Marks to make (an attached program), or frees to filter: apart from the fast path, which then reads no mark.
template <typename Next> __attribute__((noinline)) void *allocateMarked(size_t size, Next next)
{
    if (__builtin_expect(countDown(t_state, size), 0))
        return allocateSlow(size, next);
    void *address = next(size);
    countAllocated(address);
    return address;
}
// An allocation the fast path does not count from its request (agent_heap.h: predictedChunk): a thread without a
// slot yet, a large request.
template <typename Next> __attribute__((noinline)) void *allocateMeasured(size_t size, Next next)
{
    void *address = next(size);
    countAllocatedUnmarked(address);
    return address;
}
// Malloc's probe (agent_heap.h: probeNow): measures the block the C library gave and adds what the prediction would
// have missed for it and for the predicted ones since the last probe (the estimate of theirs).
template <typename Next> __attribute__((noinline)) void *allocateProbed(size_t size, Next next)
{
    void *address = next(size);
    countAllocatedUnmarked(address);
    countPredictionMisses(address, size);
    return address;
}
// malloc without the thread's fast pointer (ThreadState::fast): the flags read, the pointer set again where it may be.
template <typename Next> __attribute__((noinline)) void *allocateOff(size_t size, Next next)
{
    if (const uint32_t flags = hookFlagsSet(); __builtin_expect(flags != 0, 0)) {
        if ((flags & 0xff) != 0) // passThrough (HookFlags' first byte), from the same load
            return next(size);
        return allocateMarked(size, next);
    }
    refreshFast();
    if (__builtin_expect(countDown(t_state, size), 0))
        return allocateSlow(size, next);
    HeapSlot *slot = t_state.slot;
    if (__builtin_expect(slot == nullptr || size >= kPredictedBelow, 0))
        return allocateMeasured(size, next);
    if (__builtin_expect(probeNow(t_state), 0))
        return allocateProbed(size, next);
    addToSum(slot->allocated, predictedChunk(size));
    return next(size);
}
// The thread's fast pointer first, which stands for "a slot, and no flag set" (no flag read here): the fast path
// counts the block from its request before the allocator's call and leaves by a tail call.
template <typename Next> inline void *allocate(size_t size, Next next)
{
    HeapSlot *fast = __atomic_load_n(&t_state.fast, __ATOMIC_RELAXED);
    if (__builtin_expect(fast == nullptr, 0))
        return allocateOff(size, next);
    if (__builtin_expect(countDown(t_state, size), 0))
        return allocateSlow(size, next);
    if (__builtin_expect(size >= kPredictedBelow, 0))
        return allocateMeasured(size, next);
    if (__builtin_expect(probeNow(t_state), 0))
        return allocateProbed(size, next);
    addToSum(fast->allocated, predictedChunk(size));
    return next(size);
}

// The free of a marked block (a sample's, or one of the start-up storage's): its free recorded where this ring
// recorded its sample, its heap bytes counted off; the allocator's block to give back (null: the start-up storage's,
// never given back); `told`, where given, says whether the free was recorded.
void *unmarkFreed(void *address, bool *told = nullptr);
template <typename Next> __attribute__((noinline)) void releaseMarked(void *address, Next next)
{
    if (void *block = unmarkFreed(address))
        next(block);
}
template <typename Next> __attribute__((noinline)) void releaseSlow(void *address, Next next)
{
    if (freeSlow(address))
        next(address);
}
// A free with a flag set, or without a slot: a mark is looked for wherever the C library's chunk sizes are read (a
// block sampled while marking may be freed after it stopped), then the filter asked.
template <typename Next> __attribute__((noinline)) void releaseFiltered(void *address, Next next)
{
    if (address != nullptr && g_chunkSizes && isMarked(address))
        return releaseMarked(address, next);
    if (freeFiltered(uint64_t(address)))
        return releaseSlow(address, next);
    if (!passingThrough())
        countFreed(address);
    next(address);
}
// An attached program's free while only its marks are on (sampled mode, memory profiled): a block whose mark is this
// session's plain one was allocated since the attach and never sampled (a sample's mark says so: markSampled), so it
// is counted off with no question to the free filter; every other block (before the attach, sampled, or with no mark
// table) takes releaseFiltered.
inline constexpr uint32_t kOnlyFiltered = uint32_t(1) << 16; // HookFlags: filtered set, passThrough and reserved not
inline bool onlyAttachedMarks(uint32_t flags)
{
    return (flags & ~uint32_t(0xff00)) == kOnlyFiltered && (flags & 0xff00) != 0;
}
template <typename Next> __attribute__((noinline)) void releaseAttached(uint32_t flags, void *address, Next next)
{
    HeapSlot *slot = t_state.slot;
    const uint8_t mark = uint8_t(flags >> 8);
    if (onlyAttachedMarks(flags) && address != nullptr && slot != nullptr && slot != &t_nowhere) {
        if (uint8_t *byte = markByteOf(uint64_t(address)); byte && __atomic_load_n(byte, __ATOMIC_RELAXED) == mark) {
            __atomic_store_n(byte, uint8_t(0), __ATOMIC_RELAXED);
            addToSum(slot->freed, chunkSize(address));
            return next(address);
        }
    }
    return releaseFiltered(address, next);
}
// With no flag set (the agent marks its samples), a free reads the block's chunk size, which tells a marked block too,
// counts it in `slot` and leaves by a tail call.
template <typename Next> inline void releaseCounted(HeapSlot *slot, void *address, Next next)
{
    const uint64_t field = static_cast<const uint64_t *>(address)[-1];
    if (__builtin_expect((field & kMarkedBit) != 0, 0))
        return releaseMarked(address, next);
    addToSum(slot->freed, field & ~uint64_t(7));
    next(address);
}
// free without the thread's fast pointer: the flags read, the pointer set again where it may be.
template <typename Next> __attribute__((noinline)) void releaseOff(void *address, Next next)
{
    const uint32_t flags = hookFlagsSet();
    if (flags == 0)
        refreshFast();
    HeapSlot *slot = t_state.slot;
    if (__builtin_expect(slot == nullptr, 0) || __builtin_expect(flags != 0, 0)) {
        // Told apart here, so that a free passed through (memory off: CPU profiling alone) jumps straight on.
        if (onlyAttachedMarks(flags))
            return releaseAttached(flags, address, next);
        return releaseFiltered(address, next);
    }
    releaseCounted(slot, address, next);
}
template <typename Next> inline void release(void *address, Next next)
{
    if (__builtin_expect(address == nullptr, 0))
        return next(address); // nothing to count, nothing to ask the filter (it holds no null block)
    HeapSlot *fast = __atomic_load_n(&t_state.fast, __ATOMIC_RELAXED);
    if (__builtin_expect(fast == nullptr, 0))
        return releaseOff(address, next);
    releaseCounted(fast, address, next);
}

// The other allocation hooks' form where sampled blocks are marked (the agent's own front end): the countdown before
// the call, whose sample is allocated `offset` bytes larger (kWrapBytes, or the alignment asked for, a power of two;
// 0 where it cannot be marked: its sample moves to the thread's next allocation) through `call(extra)`, which
// allocates the request and `extra` bytes more. Elsewhere allocated() after the call.
template <typename Call> __attribute__((noinline)) void *allocateSampled(size_t size, size_t offset, Call call)
{
    const bool marked = offset != 0 && marksThisSample();
    void *address = marked ? markBlock(call(offset), offset) : call(0);
    sampleAs(address, size, marked ? SampleMarked : SampleUnmarked);
    countAllocated(marked && address ? markedBlockOf(address) : address);
    markSampled(address);
    return address;
}
template <typename Call> inline void *allocateVia(size_t size, size_t offset, Call call)
{
    if (__builtin_expect(hookFlagsSet() != 0, 0)) // not marking
        return allocated(call(0), size);
    if (__builtin_expect(countDown(t_state, size), 0))
        return allocateSampled(size, offset, call);
    void *address = call(0);
    countAllocatedUnmarked(address);
    return address;
}

// A call of CPython's own allocators (agent_pymem.h): on the countdown and sampled as any allocation, its free
// recorded where the session must see it; never in the heap counts, which count malloc's heap (a Python allocator's
// block lies in its own arenas, or in a malloc block counted there).
void pythonFreeSlow(void *address);
inline void pythonAllocated(void *address, size_t size)
{
    if (__builtin_expect(countDown(t_state, size), 0)) {
        t_state.notMalloc = true; // no chunk header before it to read
        onCountdown(address, size);
        t_state.notMalloc = false;
    }
}
inline void pythonFreeing(void *address)
{
    if (__builtin_expect(freeFiltered(uint64_t(address)), 0))
        pythonFreeSlow(address);
}

// A block that freeing() was told of stays the program's after all (a realloc that failed).
inline void unfreed(void *address)
{
    countAllocated(address);
}

// The thread's countdown to its next sample and its count of allocations, kept around a call that allocates through
// the hooks on behalf of one counted call (an allocator's own operator new).
struct AllocationCount {
    int64_t state;
    uint64_t allocations;
};
inline AllocationCount allocationCount()
{
    return {t_state.state, t_state.allocations};
}
inline void setAllocationCount(AllocationCount count)
{
    t_state.state = count.state;
    t_state.allocations = count.allocations;
}

// The thread's end is watched (a thread-specific key whose destructor writes its totals and gives its heap slot back).
void watchThreadEnd();

} // namespace emberline::agent
