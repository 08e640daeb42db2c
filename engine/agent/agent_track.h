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
// Whether `address` is tracked now (the thread that tracked it asks, before its malloc returns).
bool isTracked(uint64_t address);
// After a sample's block was counted (its attached mark made, agent_heap.h): where the sample tracks it, its mark
// says so (kMarkSampled), so that its free asks the table; the free of a block whose mark is plain asks nothing more
// (releaseAttached, agent_core.h). The table itself is asked, not a note of the sample's: a signal handler's sample
// nested between the tracking and this would have taken the note.
void markSampled(void *address);

// --- Sampled blocks that carry their own mark -------------------------------------------------------------------
// Where the program's malloc family is the agent's own front end's (preloaded) and the C library's allocator serves
// it, a sampled block is allocated kWrapBytes (or its alignment) larger and handed out past a mark, so that a free
// tells it by the word it reads anyway (the heap count's chunk size), not by the filter: the filter's hash and
// summary line cost CPython's JSON some 1.2 points of its time (bench_agent_split.sh: +2.55% without that check
// against +3.80% with it). The C library keeps a chunk's size before every block it gives, a multiple of 16 with its
// flags in bits 0 to 2: bit 3 (kMarkedBit) is never set there, and is always set in a mark. A mark is two words
// before the block: the allocator's own block (the address to give back), then the mark itself, whose upper half is
// the ring tag of the process image that recorded the block's sample (0: none did: its free is not recorded). A
// forked child's new ring, and a later session's, have tags of their own: the frees of blocks an earlier one sampled
// are given back unrecorded. The agent's start-up storage marks its blocks too (never given back).
inline constexpr uint64_t kMarkedBit = 8;
inline constexpr size_t kWrapBytes = 16;
inline bool isMarked(const void *address)
{
    return (static_cast<const uint64_t *>(address)[-1] & kMarkedBit) != 0;
}
inline void *markedBlockOf(const void *address)
{
    return static_cast<void *const *>(address)[-2];
}
// `block` (the allocator's, null when it failed) handed out `offset` bytes on (at least kWrapBytes, a multiple of
// 16: the block's alignment kept), marked as recorded by no sample yet.
inline void *markBlock(void *block, size_t offset)
{
    if (!block)
        return nullptr;
    char *address = static_cast<char *>(block) + offset;
    reinterpret_cast<void **>(address)[-2] = block;
    reinterpret_cast<uint64_t *>(address)[-1] = kMarkedBit;
    return address;
}
// The current ring's tag (never 0), changed whenever the image's ring is made.
uint32_t ringTag();
void newRingTag();
// The block's sample recorded (the free must be too) or dropped.
inline void setMarkRecorded(void *address, bool recorded)
{
    static_cast<uint64_t *>(address)[-1] = kMarkedBit | (recorded ? uint64_t(ringTag()) << 32 : 0);
}
inline bool markRecordedHere(const void *address)
{
    const uint64_t tag = static_cast<const uint64_t *>(address)[-1] >> 32;
    return tag != 0 && tag == ringTag();
}

// How a sampled allocation is told at its free (ThreadState::sampleKind): by the free filter (a block of CPython's
// allocators, of an allocator's own C++ operator, or any where blocks are not marked), by its own mark, or not at
// all: a malloc-family block allocated unmarked while the agent marks (the one whose countdown started the agent),
// whose sample moves to the thread's next allocation.
enum SampleKind : uint8_t { SampleFiltered = 0, SampleMarked = 1, SampleUnmarked = 2 };
// The sample being written made known to its free, as the thread's sampleKind says: its mark set recorded, or the
// block tracked (false: the table had no room); and undone when its record found no room.
bool trackSample(void *address);
void forgetSample(void *address);

} // namespace emberline::agent
