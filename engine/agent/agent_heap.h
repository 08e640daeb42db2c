#pragma once

// The heap counters (agent_protocol.h's HeapSlot): every block the program allocates and frees, sampled or not,
// counted by the heap bytes it takes, so that the session knows the live heap exactly at every flush. The fast path
// is inline here (one add to the thread's own cache line); the rest is agent_heap.cpp's.
//
// Thread: every thread of the program, each on its own slot.

#include "engine/agent/agent_thread.h"

#include <stddef.h>
#include <stdint.h>

#include <atomic>

namespace emberline::agent {

// The allocator's malloc_usable_size (the one that serves malloc), or a function that says 0 when it has none.
using UsableFn = size_t (*)(void *);
extern UsableFn g_usable;

// How the heap counts measure a block (its heap bytes): by the C library's own chunk size, header included, where
// malloc is the C library's (the size field before the block, which its malloc_usable_size reads too, and which a
// free reads anyway: one load of a line already in the cache, where malloc_usable_size also looks at the next
// chunk's header, another line), checked against malloc_usable_size as the agent starts; else by the allocator's
// malloc_usable_size. The same measure at a block's allocation and at its free, so that what stays counted is the
// live heap in that measure.
extern bool g_chunkSizes;
inline uint64_t chunkSize(const void *address)
{
    return reinterpret_cast<const uint64_t *>(address)[-1] & ~uint64_t(7); // the flag bits below the size
}
inline uint64_t heapBytesOf(void *address)
{
    return __builtin_expect(g_chunkSizes, 1) ? chunkSize(address) : g_usable(address);
}

// The chunk the C library's malloc gives a request of `size` by its rules (the request and the size field, rounded up
// to 16 bytes, at least 32), which malloc's fast path counts before its call so that it can leave by a tail call
// (reading the chunk after the call cost CPython JSON some 1.4 points more of its time: bench_agent_split.sh). The
// rules miss two cases, which the free then counts by the block's real chunk: a free chunk handed out whole because
// splitting it would leave too little (16 bytes more; some 0.4% of CPython's allocations), and a block mapped on its
// own (page-rounded: only requests below kPredictedBelow are predicted, far below the C library's threshold for
// mapping unless a program lowers it). A failed allocation is predicted too. So one allocation in kProbeEvery is
// measured after its call, and what the rules missed for it counts for the kProbeEvery - 1 predicted before it: an
// unbiased estimate (the probes are chosen by count, not by anything the allocator does), its error some 1.8 MB after
// an hour of 17 million allocations a second with 0.4% of them missed.
inline constexpr size_t kPredictedBelow = 4096;
inline constexpr int64_t kProbeEvery = 64;
inline uint64_t predictedChunk(size_t size)
{
    const uint64_t chunk = (uint64_t(size) + 8 + 15) & ~uint64_t(15);
    return chunk < 32 ? 32 : chunk;
}
// One tick of the thread's probe clock (ThreadState::probeTick), on every allocation the fast path would predict:
// true on every kProbeEvery-th, whose block is measured instead. One add to a byte of its own, whose flags say so
// (the state's count bits, tested for it before, were read back right after their store).
static_assert(256 % kProbeEvery == 0);
inline bool probeNow(ThreadState &t)
{
    bool due = false;
    asm("addb %2, %0" : "+m"(t.probeTick), "=@ccz"(due) : "i"(256 / kProbeEvery));
    return due;
}
// After a probe's call: what the rules missed for its block, kProbeEvery - 1 times over (agent_heap.cpp).
void countPredictionMisses(void *address, size_t size);

// Where a thread counts when its counts go nowhere (agent_heap.cpp): a slot of its own that nobody reads. The fast
// path tells it by its address, not by a load of its owner.
extern constinit thread_local HeapSlot t_nowhere __attribute__((tls_model("initial-exec")));

// A heap count the fast path could not make: no slot yet (it takes one), the agent's own work, a null address.
// `bytes`: the block's heap bytes where the allocator's measure does not apply (0: that measure).
void countHeapSlow(void *address, bool freed, uint64_t bytes = 0);

// One add instruction: a signal handler on the same thread cannot fall between a load and a store of the sum, and
// the session reads it whole (an aligned 8-byte store).
inline void addToSum(uint64_t &sum, uint64_t n)
{
    asm volatile("addq %1, %0" : "+m"(sum) : "r"(n));
}

// The marks of an attached program's blocks (startAttachedMarks below): a byte per 32-byte granule, in tables of
// 4 GiB of address each, mapped as the heap reaches them; this session's mark, 0 when not marking.
inline constexpr unsigned kMarkGranuleShift = 5;
inline constexpr unsigned kMarkTableShift = 32;
inline constexpr size_t kMarkTables = size_t(1) << (47 - kMarkTableShift); // the user half of the address space
extern std::atomic<uint8_t *> g_markTables[kMarkTables];

// The flags every hook reads before its fast path, side by side so that one 32-bit load tells whether any is set
// (hookFlagsSet): memory not profiled in this image (`passThrough`, agent_core.h), this session's mark for an
// attached program's blocks (`markNow`, 0 when not marking), and whether frees must ask the free filter
// (`filtered`: 0 only while sampled blocks carry their own marks, agent_track.h's kMarkedBit; 1 before the agent
// starts, in exact mode, in an attached program, under another allocator). Each is written alone, as a byte.
struct alignas(4) HookFlags {
    uint8_t passThrough;
    uint8_t markNow;
    uint8_t filtered;
    uint8_t reserved;
};
// Hidden in its declaration too: a declaration of default visibility is read through the global offset table, an
// instruction more on every malloc and free.
extern HookFlags g_hookFlags __attribute__((visibility("hidden")));
inline constexpr uint8_t &g_markNow = g_hookFlags.markNow;
using HookFlagsWord = uint32_t __attribute__((may_alias));
// One load of all four flags (a relaxed load: a hook that sees a change late is one that was under way at it).
inline uint32_t hookFlagsSet()
{
    uint32_t flags = 0;
    asm volatile("movl %1, %0" : "=r"(flags) : "m"(g_hookFlags));
    return flags;
}
// The thread's fast-path pointer (ThreadState::fast) set to its slot where it may be: a slot of its own, counting on,
// no hook flag set, not inside the agent's work or an allocator's operator (agent_heap.cpp). Called by the hooks' other
// paths when they find no flag set.
void refreshFast();
// After a flag was stored that may have set one: every thread sent off the fast paths (their pointers cleared).
void hookFlagsRaised();

// Whether the sampled blocks of the malloc family are marked (allocated larger, past their mark) now.
inline bool marksSamples()
{
    return __atomic_load_n(&g_hookFlags.filtered, __ATOMIC_RELAXED) == 0;
}
// The table for addresses `table` << kMarkTableShift on, mapped; null (the counts no longer whole) without room.
uint8_t *makeMarkTable(uint64_t table);

// A sampled block's mark (markSampled): the session's mark with this bit set. A session's mark is below it.
inline constexpr uint8_t kMarkSampled = 0x80;

// The mark byte of `address` in the tables; null where its table is not mapped (no block since the attach there).
inline uint8_t *markByteOf(uint64_t a)
{
    const uint64_t table = a >> kMarkTableShift;
    if (__builtin_expect(table >= kMarkTables, 0))
        return nullptr;
    uint8_t *marks = g_markTables[table].load(std::memory_order_acquire);
    if (__builtin_expect(marks == nullptr, 0))
        return nullptr;
    return marks + ((a & ((uint64_t(1) << kMarkTableShift) - 1)) >> kMarkGranuleShift);
}

// Whether the call counts: an allocation marks its block (false when its mark has no room), a free counts when it
// finds this session's mark (plain, or a sampled block's), which it clears. One thread at a time touches a block's
// mark: its free comes before the allocator may hand its address out again. A failed realloc's block, which its free
// had cleared, is marked again as a new one.
inline bool markedCall(void *address, bool freed, uint8_t mark)
{
    const uint64_t a = uint64_t(address);
    const uint64_t table = a >> kMarkTableShift;
    if (__builtin_expect(table >= kMarkTables, 0))
        return false;
    uint8_t *marks = g_markTables[table].load(std::memory_order_acquire);
    if (__builtin_expect(marks == nullptr, 0)) {
        if (freed || (marks = makeMarkTable(table)) == nullptr)
            return false; // a block from before the attach; or no room
    }
    uint8_t *byte = marks + ((a & ((uint64_t(1) << kMarkTableShift) - 1)) >> kMarkGranuleShift);
    if (freed) {
        if ((__atomic_load_n(byte, __ATOMIC_RELAXED) & uint8_t(~kMarkSampled)) != mark)
            return false; // allocated before the attach
        __atomic_store_n(byte, uint8_t(0), __ATOMIC_RELAXED);
        return true;
    }
    __atomic_store_n(byte, mark, __ATOMIC_RELAXED);
    return true;
}

// One block's heap bytes added to the thread's sum of allocations or of frees. `Marks`: look at the attached marks
// (g_markNow); the fast paths, which have seen no flag set (hookFlagsSet), leave them out.
template <bool Freed, bool Marks> inline void countHeap(void *address)
{
    HeapSlot *slot = t_state.slot;
    if (__builtin_expect(slot == nullptr || address == nullptr, 0))
        return countHeapSlow(address, Freed);
    if constexpr (Marks) {
        if (const uint8_t mark = __atomic_load_n(&g_markNow, __ATOMIC_RELAXED); __builtin_expect(mark != 0, 0)) {
            if (slot == &t_nowhere)
                return countHeapSlow(address, Freed); // counting nowhere (maybe since before the attach): asks again
            if (!markedCall(address, Freed, mark))
                return;
        }
    }
    addToSum(Freed ? slot->freed : slot->allocated, chunkSize(address));
}

inline void countAllocated(void *address)
{
    countHeap<false, true>(address);
}
// Before the block goes back to the allocator (after, its size is no longer its own).
inline void countFreed(void *address)
{
    countHeap<true, true>(address);
}
// The same, where the hook's caller has seen no flag set.
inline void countAllocatedUnmarked(void *address)
{
    countHeap<false, false>(address);
}
inline void countFreedUnmarked(void *address)
{
    countHeap<true, false>(address);
}

// A block of `bytes` that is no malloc block (CPython's arenas, which it maps itself), counted in the heap all the
// same.
inline void countHeapBytes(void *address, uint64_t bytes, bool freed)
{
    HeapSlot *slot = t_state.slot;
    if (__builtin_expect(slot == nullptr || address == nullptr, 0))
        return countHeapSlow(address, freed, bytes);
    addToSum(freed ? slot->freed : slot->allocated, bytes);
}

// The allocator's malloc_usable_size looked up beside `realMalloc` (and the C library's chunk sizes checked with a
// few blocks of `realMalloc` and `realFree`); whether there is one; counting started (or not) once the agent knows;
// a thread's slot given back at its end; a forked child's thread without its parent's slot.
void resolveUsable(void *(*realMalloc)(size_t), void (*realFree)(void *), void *lookIn);

// The loaded module that holds `address`: where its mapping starts and its path ("" for the program itself); false
// for an address in none. Asked of the dynamic linker's sorted table (_dl_find_object), where dladdr scans the
// module's symbol table for the nearest symbol: some 25 microseconds in the C library, at every process start.
struct ModuleOfAddress {
    uintptr_t start = 0;
    const char *path = "";
};
bool moduleOfAddress(const void *address, ModuleOfAddress &module);
// After one of the agent's own look-ups failed: the dynamic linker's record of the failure (its text, and the
// thread's record that holds it, both allocated inside the look-up) freed now, by the work that allocated them. Left
// there, the program's next dlerror() would report a symbol it never asked for, and the next dynamic-linker call the
// program makes would free blocks the agent never saw allocated.
void forgetLookupError();
// Whether the C library has free_sized (glibc 2.39 on), whose frees the hooks do not see (no marks there).
bool libcHasFreeSized();
bool heapSizesKnown();
void startHeapCounting(bool counting);
void giveHeapSlotBack();
void heapForkChild();
// A thread that counts nowhere since an earlier start of counting (the agent was off, or counted no memory) is sent
// to the slow path to take a slot (onCountdown: every off thread comes there a MiB later).
void heapRecheck();
// Every thread that holds a heap slot is sent to the slow path at its next allocation, without one, its counts of
// allocations zeroed (agentRetire).
void heapResetThreads();

// The blocks allocated since the agent was loaded into a running program (agent_attach.cpp), told apart from those
// allocated before it, so that the heap counts stay whole there: an attached program frees blocks that no count saw.
// Each allocation marks the block with the session's mark (a byte per 32 bytes of address: the C library's smallest
// chunk, so that two blocks never share one), and only a free that finds that mark, clearing it, counts. The marks
// live in tables of 4 GiB of address each (128 MiB of marks, reserved as needed and touched where the heap is: a
// thirty-second of the heap's span), kept for the program's life and given back page by page when counting stops; a
// new session's new mark leaves an earlier session's marks behind without a pass over them. Only where the heap
// counts read the C library's chunk sizes (other allocators' blocks can lie 8 bytes apart).
// Starts marking with a new mark: whether it can (the C library's chunk sizes, room for the first table).
bool startAttachedMarks();
bool attachedMarksOn();

} // namespace emberline::agent
