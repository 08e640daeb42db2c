#pragma once

// The agent's side of its ring (agent_protocol.h), shared by the hooks (agent.cpp) and the ring's writer
// (agent_ring.cpp). Everything here is hidden inside libemberline_agent.so.
//
// Thread: every thread of the program, concurrently; lock-free.

#include "engine/agent/agent_protocol.h"

#include <atomic>
#include <stddef.h>
#include <stdint.h>

namespace emberline::agent {

// Tracked (sampled and still live) allocations: buckets of eight slots, one cache line each, a count of occupants
// per bucket, and the free filter: a bit per bucket that is set whenever its count is not zero, in two levels. A
// free first reads the summary, one cache line of a bit per word of the bucket bits (set while the word is not
// zero), and leaves at once when its bit is clear; else it reads its bucket's bit (4 KiB for every bucket), and
// leaves the fast path only when that is set too. Both are static, so that they are there before the agent starts.
// The summary's one line stays in the first-level cache of a program with a large working set, where the 4 KiB of
// bucket bits did not: a compiler's frees waited on that load more than on anything else of theirs. While few blocks
// are tracked (a few dozen at the default interval on a heap of some MiB), most summary bits are clear.
// Everything a free must see sets its bit: a tracked block, a block of the agent's own start-up storage (pinned:
// its bit is never cleared), and, in exact mode, where every free is recorded, all of them.
//
// The bits never miss a tracked block: a bucket's count and bits change together under g_trackLock (tracking and
// the untracking of a tracked block are rare: one per sample), and a tracked block's bits are set before its malloc
// returns. A signal handler that interrupts its own thread's locked work does not wait for the lock: it does not
// track (its sample is counted as dropped), and it untracks without clearing the bit (a bit set on an empty
// bucket only costs a look into the bucket).
constexpr unsigned kBucketBits = 15;
constexpr size_t kBuckets = size_t(1) << kBucketBits;
constexpr int kSlotsPerBucket = 8;
struct alignas(64) Bucket {
    std::atomic<uint64_t> slots[kSlotsPerBucket];
};
extern Bucket *g_buckets;                  // kBuckets, anonymous memory
extern std::atomic<uint16_t> *g_bucketUse; // kBuckets
extern std::atomic<uint64_t> g_bucketBits[kBuckets / 64];
constexpr size_t kSummaryWords = kBuckets / 64 / 64;
static_assert(kSummaryWords * sizeof(uint64_t) == 64, "the summary is one cache line");
extern std::atomic<uint64_t> g_filterSummary[kSummaryWords]; // bit w: g_bucketBits[w] is not zero
extern std::atomic<int> g_trackLock;

inline size_t bucketOf(uint64_t address)
{
    return size_t(((address >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - kBucketBits));
}

// Whether a free of `address` leaves the fast path: the summary's bit, then (when that is set) the bucket's.
inline bool freeFiltered(uint64_t address)
{
    const size_t b = bucketOf(address);
    const size_t w = b >> 6;
    if (__builtin_expect(((g_filterSummary[w >> 6].load(std::memory_order_relaxed) >> (w & 63)) & 1) == 0, 1))
        return false;
    return (g_bucketBits[w].load(std::memory_order_relaxed) >> (b & 63)) & 1;
}

// Sets the filter's bit of `address` for good (the agent's start-up storage, which a free must recognize).
void pinFilter(uint64_t address);
// The filter as a process starts: every bit set when every free is recorded (exact mode), else only the pinned ones.
void resetFilter(bool everyFree);

extern RingHeader *g_ring; // this process image's ring; null without one
extern uint64_t g_interval;
extern uint64_t g_ringBytes;
extern char g_directory[512];
extern std::atomic<bool> g_sessionGone;

uint64_t nowNs();
// Fresh (zero) tracking tables: a forked child starts with none of its parent's tracked blocks (its caller resets
// the free filter).
bool mapTables();
// Creates this process image's ring in g_directory; `parentPid` for a forked child.
bool createRing(uint32_t parentPid);
// Tracks a sampled allocation at `address` (its free must be recorded); false when its bucket is full or this thread
// interrupted its own change of the table (a signal handler).
bool track(uint64_t address);
// True when `address` was tracked; it is not any more.
bool untrack(uint64_t address);
// A sampled allocation (every allocation when `exact`) and a free of one, written to the ring.
// `wait`: exact mode outside a signal handler nested in the agent may wait for room; a nested call never does (the
// record it interrupted holds the ring's order until it is published).
// `allocations` and `bytes`: the thread's totals so far (AllocRecord::threadAllocations, threadBytes).
void writeAlloc(void *address, size_t size, bool exact, bool wait, uint32_t tid, uint64_t allocations, uint64_t bytes);
// The thread's totals at its end or its process image's (TotalsRecord); never waits.
void writeTotals(uint32_t tid, uint64_t allocations, uint64_t bytes);
void writeFree(void *address, bool exact, bool wait, uint32_t tid);

// Whether the session still reads the ring (a visit in the last 100 ms, or its process still exists).
bool sessionAlive(uint64_t now);
// What a record other than an allocation's or a free's keeps free after it: room for the free of every tracked
// allocation, so that a CPU sample or a thread's totals never take the place a free must find (frees are never lost).
inline uint64_t keptForFrees()
{
    return g_ring->tracked.load(std::memory_order_relaxed) * kFreeRecordBytes;
}
// Reserves a record of `bytes` (keeping `keep` bytes free after it); waits for room only when `wait` and this
// thread holds no unpublished record. Null when there is no room.
RecordHeader *reserveWaiting(uint32_t bytes, uint64_t keep, bool wait);
void publish(RecordHeader *record, RecordType type);
// Set while this thread holds a reserved record not yet published.
extern __thread bool t_holding;
// Copies up to `want` bytes of this thread's stack from `sp`, never past its end (learning its bounds first).
uint32_t copyStack(uint64_t sp, uint8_t *out, uint32_t want);
// The same without learning the bounds (which allocates): safe in a signal handler.
uint32_t copyStackInHandler(uint64_t sp, uint8_t *out, uint32_t want);
// Learns this thread's stack bounds now (outside signal handlers).
void learnThreadStack();
// The bytes from `sp` to the top of this thread's stack, where its bounds are known (every frame lives there),
// else 0. Safe in a signal handler.
uint64_t liveStackBytes(uint64_t sp);
// The agent's own memory, from the C library directly (never recorded).
void *mallocInternal(size_t size);
void freeInternal(void *address);

// The heap counters (agent_heap.cpp): the allocator's malloc_usable_size looked up beside `realMalloc` (and the C
// library's chunk sizes checked with a few blocks of `realMalloc` and `realFree`); whether
// there is one; counting started (or not) once the agent knows; a thread's slot given back at its end; a forked
// child's thread without its parent's slot.
void resolveUsable(void *(*realMalloc)(size_t), void (*realFree)(void *));
bool heapSizesKnown();
void startHeapCounting(bool counting);
void giveHeapSlotBack();
void heapForkChild();
// agent.cpp: this thread's id (cached), and its end watched (a thread-specific key whose destructor writes its
// totals and gives its heap slot back).
uint32_t currentThreadId();
void watchThreadEnd();

// The in-process sampler (agent_cpu.cpp): its period (0: off), its start in a process image, after the ring is made,
// and its restart in a forked child.
extern uint64_t g_cpuPeriodNs;
void cpuStart();
void cpuForkChild();

// > 0 while the agent makes calls that allocate (the dynamic linker's lookups, pthread_getattr_np): their
// allocations are the agent's own and pass through untraced.
extern __thread uint32_t t_internal;

// Brackets such calls: t_internal is up while they run, and the thread's count of allocations and its countdown
// are put back as they were, and its heap counts nothing (the program's totals leave the agent's own allocations out;
// one that a signal handler makes meanwhile is left out with them).
class InternalWork {
public:
    InternalWork();
    ~InternalWork();
    InternalWork(const InternalWork &) = delete;
    InternalWork &operator=(const InternalWork &) = delete;

private:
    int64_t m_countdown; // with the count bits (agent.cpp's ThreadState::state)
    uint64_t m_allocations;
    HeapSlot *m_slot; // the thread's heap slot, put aside (null) while the work runs
};

} // namespace emberline::agent
