#pragma once

// A thread's count of its allocations and its countdown to the next sampled one (agent.cpp's hooks and slow paths),
// and its heap counters (agent_protocol.h's HeapSlot; agent_heap.cpp).
//
// Thread: each thread its own (static TLS).

#include "engine/agent/agent_protocol.h"

#include <stddef.h>
#include <stdint.h>

namespace emberline::agent {

// Per-thread state, in static TLS (no allocation, usable from the first malloc of a thread however it was made).
//
// `state` holds the countdown to the thread's next sample, in bytes, above kCountBits bits that count its
// allocations since the slow path last took them into `allocations`: each allocation adds 1 - (size << kCountBits),
// one add for both (the count cannot reach the countdown's bits before the slow path takes it: that takes 16 million
// allocations without a byte between two samples). The thread's totals are exact: `allocations` plus the count bits,
// and `bytes + (armed - countdown)` bytes, where `armed` is what the agent last set the countdown to. A countdown
// armed at -1 (a new thread's, and exact mode's after every allocation) sends every allocation to the slow path,
// malloc(0) too.
constexpr int kCountBits = 24;
constexpr uint64_t kCountMask = (uint64_t(1) << kCountBits) - 1;
struct ThreadState {
    int64_t state;        // <= 0: the next allocation takes the slow path
    uint64_t allocations; // made by this thread in this process image, less the count in `state`
    int64_t armed;        // the countdown as the agent last set it
    uint64_t bytes;       // allocated up to the last time `armed` was set
    uint64_t rng;         // xorshift state (0: not seeded)
    uint32_t tid;         // 0: not known yet (also after fork)
    bool totalsKeySet;    // the thread's totals are written when it ends
    bool slotGiven;       // the thread has ended and given its heap slot back
    HeapSlot *slot;       // where the fast path counts the thread's heap (the C library's chunk sizes); null: it asks
                          // countHeapSlow (no slot yet, the agent's own work, another allocator's sizes)
    HeapSlot *ownSlot;    // the thread's slot (or one that counts nowhere); null: none taken yet
};
constexpr int64_t kArmedNow = -1;
constexpr int64_t kStateNow = int64_t(uint64_t(kArmedNow) << kCountBits);
extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// The allocator's malloc_usable_size (the one that serves malloc), or a function that says 0 when it has none.
using UsableFn = size_t (*)(void *);
extern UsableFn g_usable;

// How the heap counts measure a block: by the C library's own chunk size where malloc is the C library's (the size
// field before the block, which its malloc_usable_size reads too, and which a free reads anyway: one load of a line
// already in the cache, where malloc_usable_size also looks at the next chunk's header, another line), checked
// against malloc_usable_size as the agent starts; else by the allocator's malloc_usable_size. The same measure at a
// block's allocation and at its free, so that what stays counted is the live heap in that measure.
extern bool g_chunkSizes;
inline uint64_t chunkSize(const void *address)
{
    return reinterpret_cast<const uint64_t *>(address)[-1] & ~uint64_t(7); // the flag bits below the size
}
inline uint64_t blockSize(void *address)
{
    return __builtin_expect(g_chunkSizes, 1) ? chunkSize(address) : g_usable(address);
}

// A heap count the fast path could not make: no slot yet (it takes one), the agent's own work, a null address.
void countHeapSlow(void *address, bool freed);

// One add instruction: a signal handler on the same thread cannot fall between a load and a store of the sum, and
// the session reads it whole (an aligned 8-byte store).
inline void addToSum(uint64_t &sum, uint64_t n)
{
    asm volatile("addq %1, %0" : "+m"(sum) : "r"(n));
}

inline void countAllocated(void *address)
{
    HeapSlot *slot = t_state.slot;
    if (__builtin_expect(slot == nullptr || address == nullptr, 0))
        return countHeapSlow(address, false);
    addToSum(slot->allocated, chunkSize(address));
}

// Before the block goes back to the allocator (after, its size is no longer its own).
inline void countFreed(void *address)
{
    HeapSlot *slot = t_state.slot;
    if (__builtin_expect(slot == nullptr || address == nullptr, 0))
        return countHeapSlow(address, true);
    addToSum(slot->freed, chunkSize(address));
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

// One allocation of `size` bytes on the thread's count and countdown; true when the countdown ran out.
inline bool countDown(ThreadState &t, size_t size)
{
    t.state = int64_t(uint64_t(t.state) + 1 - (uint64_t(size) << kCountBits));
    return t.state <= 0;
}

} // namespace emberline::agent
