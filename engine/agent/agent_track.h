#pragma once

// The agent's table of tracked allocations (sampled blocks still live, whose frees the session must see) and the
// free filter that lets every other free pass with one read (agent_track.cpp).
//
// Thread: every thread of the program, concurrently; lock-free but for the rare changes of a bucket's count.

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

// Fresh (zero) tracking tables: a forked child starts with none of its parent's tracked blocks (its caller resets
// the free filter).
bool mapTables();
// The tables' pages given back at a session's end (zero pages again when touched, as fresh ones): a detached program
// keeps none of the 2 MiB. Safe beside a hook still under way: a table read as zeros tracks nothing.
void giveTablePagesBack();
// Tracks a sampled allocation at `address` (its free must be recorded); false when its bucket is full or this thread
// interrupted its own change of the table (a signal handler).
bool track(uint64_t address);
// True when `address` was tracked; it is not any more.
bool untrack(uint64_t address);

} // namespace emberline::agent
