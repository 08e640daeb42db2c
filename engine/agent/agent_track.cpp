// The agent's table of tracked allocations (sampled blocks still live) and the free filter that lets every other
// free pass with one read (agent_track.h says how they fit together).
//
// Thread: every thread of the program, concurrently; lock-free but for the rare changes of a bucket's count.

#include "engine/agent/agent_track.h"
#include "engine/agent/agent_heap.h"
#include "engine/agent/agent_thread.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

namespace emberline::agent {

Bucket *g_buckets = nullptr;
std::atomic<uint16_t> *g_bucketUse = nullptr;
alignas(64) std::atomic<uint64_t> g_bucketBits[kBuckets / 64];
alignas(64) std::atomic<uint64_t> g_filterSummary[kSummaryWords];
std::atomic<int> g_trackLock{0};

namespace {
std::atomic<uint32_t> g_ringTag{1};
} // namespace

uint32_t ringTag()
{
    return g_ringTag.load(std::memory_order_relaxed);
}

void newRingTag()
{
    uint32_t next = g_ringTag.load(std::memory_order_relaxed) + 1;
    g_ringTag.store(next == 0 ? 1 : next, std::memory_order_relaxed);
}

namespace {

// Whether this process image has mapped its tables' pages: at its first tracked allocation, all at once (one system
// call, about half a millisecond for the 2 MiB). Faulted in one by one, at random places, they would cost the program
// hundreds of page faults, which are dear in a virtual machine.
std::atomic<bool> g_tablesMapped{false};

void mapTablePages()
{
    madvise(g_buckets, kBuckets * sizeof(Bucket), MADV_POPULATE_WRITE); // before Linux 5.14: they fault as before
    madvise(g_bucketUse, kBuckets * sizeof(uint16_t), MADV_POPULATE_WRITE);
    g_tablesMapped.store(true, std::memory_order_relaxed);
}

// Takes g_trackLock unless this thread already holds it (a signal handler interrupted it there): false then.
bool lockTracking()
{
    if (t_state.trackLocked)
        return false;
    while (g_trackLock.exchange(1, std::memory_order_acquire) != 0)
        __builtin_ia32_pause();
    t_state.trackLocked = true;
    return true;
}

void unlockTracking()
{
    t_state.trackLocked = false;
    g_trackLock.store(0, std::memory_order_release);
}

// Pinned addresses: their bits stay set whatever their buckets' counts (a handful: the start-up storage's blocks).
constexpr int kMaxPinned = 64;
std::atomic<uint64_t> g_pinned[kMaxPinned];
std::atomic<int> g_pinnedCount{0};

bool bucketPinned(size_t b)
{
    const int n = g_pinnedCount.load(std::memory_order_acquire);
    for (int i = 0; i < n && i < kMaxPinned; ++i)
        if (bucketOf(g_pinned[i].load(std::memory_order_relaxed)) == b)
            return true;
    return false;
}

// The bucket's bit, then its word's summary bit (a free that sees the summary's bit then finds the bucket's).
void setBit(size_t b)
{
    const size_t w = b >> 6;
    g_bucketBits[w].fetch_or(uint64_t(1) << (b & 63), std::memory_order_acq_rel);
    g_filterSummary[w >> 6].fetch_or(uint64_t(1) << (w & 63), std::memory_order_acq_rel);
}

// The bucket's bit cleared, and its word's summary bit with it when that was the word's last. Set again if the word
// has a bit once more (a pinned address's, set outside the lock): the summary never stays clear over a set bit.
void clearBit(size_t b)
{
    const size_t w = b >> 6;
    const uint64_t bit = uint64_t(1) << (b & 63);
    if ((g_bucketBits[w].fetch_and(~bit, std::memory_order_acq_rel) & ~bit) != 0)
        return;
    const uint64_t summaryBit = uint64_t(1) << (w & 63);
    g_filterSummary[w >> 6].fetch_and(~summaryBit, std::memory_order_acq_rel);
    if (g_bucketBits[w].load(std::memory_order_acquire) != 0)
        g_filterSummary[w >> 6].fetch_or(summaryBit, std::memory_order_acq_rel);
}

// Under g_trackLock: the bucket's bit follows its count (and stays for a pinned address).
void lowerCount(size_t b)
{
    if (g_bucketUse[b].fetch_sub(1, std::memory_order_acq_rel) == 1 && !bucketPinned(b))
        clearBit(b);
}

} // namespace

void pinFilter(uint64_t address)
{
    const int i = g_pinnedCount.fetch_add(1, std::memory_order_acq_rel);
    if (i < kMaxPinned)
        g_pinned[i].store(address, std::memory_order_release);
    // Past the list's end the bit is still set, only not kept through a bucket's last untrack: the start-up storage
    // hands out far fewer blocks than that.
    setBit(bucketOf(address));
}

void resetFilter(bool everyFree)
{
    // Written only where it changes: a new process image's filter is all clear already, and its page stays the
    // shared zero page until a sample sets a bit.
    const uint64_t value = everyFree ? ~uint64_t(0) : 0;
    for (auto &word : g_bucketBits) {
        if (word.load(std::memory_order_relaxed) != value)
            word.store(value, std::memory_order_relaxed);
    }
    for (auto &word : g_filterSummary) // after the bucket bits: a set summary bit finds its word set
        if (word.load(std::memory_order_relaxed) != value)
            word.store(value, std::memory_order_release);
    const int n = g_pinnedCount.load(std::memory_order_acquire);
    for (int i = 0; i < n && i < kMaxPinned; ++i)
        setBit(bucketOf(g_pinned[i].load(std::memory_order_relaxed)));
}

bool track(uint64_t address)
{
    if (!g_tablesMapped.load(std::memory_order_relaxed))
        mapTablePages();
    if (!lockTracking())
        return false;
    const size_t b = bucketOf(address);
    g_bucketUse[b].fetch_add(1, std::memory_order_acq_rel);
    setBit(b);
    bool taken = false;
    for (auto &slot : g_buckets[b].slots) {
        uint64_t empty = 0;
        if (slot.load(std::memory_order_relaxed) == 0 &&
            slot.compare_exchange_strong(empty, address, std::memory_order_acq_rel)) {
            taken = true;
            break;
        }
    }
    if (!taken)
        lowerCount(b);
    unlockTracking();
    return taken;
}

void markSampled(void *address)
{
    const uint8_t mark = __atomic_load_n(&g_markNow, __ATOMIC_RELAXED);
    if (mark == 0 || address == nullptr || !freeFiltered(uint64_t(address)) || !isTracked(uint64_t(address)))
        return;
    uint8_t *byte = markByteOf(uint64_t(address));
    if (byte && __atomic_load_n(byte, __ATOMIC_RELAXED) == mark)
        __atomic_store_n(byte, uint8_t(mark | kMarkSampled), __ATOMIC_RELAXED);
}

bool isTracked(uint64_t address)
{
    const size_t b = bucketOf(address);
    if (g_bucketUse[b].load(std::memory_order_acquire) == 0)
        return false;
    for (const auto &slot : g_buckets[b].slots)
        if (slot.load(std::memory_order_relaxed) == address)
            return true;
    return false;
}

// True when `address` was tracked; it is not any more.
bool untrack(uint64_t address)
{
    const size_t b = bucketOf(address);
    if (g_bucketUse[b].load(std::memory_order_acquire) == 0)
        return false;
    for (auto &slot : g_buckets[b].slots) {
        uint64_t expected = address;
        if (slot.load(std::memory_order_relaxed) == address &&
            slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
            if (lockTracking()) {
                lowerCount(b);
                unlockTracking();
            } else {
                // Nested in this thread's own locked work: the count goes down, the bit stays (harmless).
                g_bucketUse[b].fetch_sub(1, std::memory_order_acq_rel);
            }
            return true;
        }
    }
    return false;
}

// Maps the bucket tables (fresh zero pages: a forked child starts with none of its parent's tracked blocks).
//
// In small pages, never a transparent huge page (MADV_HUGEPAGE): with the table in one, a compiler's run in a
// virtual machine took some 5% longer (g++ -O2 on a short file, 24 rotated rounds: +6.2% against +0.8% without it,
// both beside a session that sampled nothing), whatever the program did, while what the huge page saves is a few
// TLB misses per sample.
bool mapTables()
{
    constexpr size_t kBucketBytes = kBuckets * sizeof(Bucket);
    // Fresh pages over the old ones in a forked child.
    void *buckets = mmap(g_buckets, kBucketBytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (g_buckets ? MAP_FIXED : 0), -1, 0);
    void *use = mmap(g_bucketUse, kBuckets * sizeof(uint16_t), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (g_bucketUse ? MAP_FIXED : 0), -1, 0);
    if (buckets == MAP_FAILED || use == MAP_FAILED)
        return false;
    g_buckets = static_cast<Bucket *>(buckets);
    g_bucketUse = static_cast<std::atomic<uint16_t> *>(use);
    g_tablesMapped.store(false, std::memory_order_relaxed);
    // A forked child is single-threaded: a lock its parent's other threads held is nobody's here.
    g_trackLock.store(0, std::memory_order_relaxed);
    return true;
}

void giveTablePagesBack()
{
    if (!g_buckets)
        return;
    g_tablesMapped.store(false, std::memory_order_relaxed);
    madvise(g_buckets, kBuckets * sizeof(Bucket), MADV_DONTNEED);
    madvise(g_bucketUse, kBuckets * sizeof(uint16_t), MADV_DONTNEED);
}

bool trackSample(void *address)
{
    if (t_state.sampleKind == SampleMarked) {
        setMarkRecorded(address, true);
        return true;
    }
    return track(uint64_t(address));
}

void forgetSample(void *address)
{
    if (t_state.sampleKind == SampleMarked)
        setMarkRecorded(address, false);
    else
        untrack(uint64_t(address));
}

} // namespace emberline::agent
