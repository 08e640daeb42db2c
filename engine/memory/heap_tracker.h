#pragma once

#include "engine/memory/live_blocks.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

// The live heap of a launched program as its sampled allocations tell it: every sampled block still live (by
// process image and address) with its stack and weight, what was allocated per stack since the last flush, and
// what each process image still held when it ended (its leaks). Values are estimates of the program's own
// counts and bytes: each sample carries the weight of allocation_weight.h, applied here once.
//
// `stack` is the caller's id for an unwound stack (stable for as long as the caller keeps blocks with it).
//
// Lifetimes: a block freed within kShortLivedNs of its allocation, in the flush that allocated it, is short-lived:
// that flush's allocations tell it apart (StackMemory::shortLived), as heaptrack's temporary allocations. A block
// allocated in one flush and freed in the next, however soon, is not (a millisecond at a flush's end: a hundredth
// of a per cent of a ten-second flush). Times are the agent's (CLOCK_MONOTONIC); 0 is no time, and no lifetime.
//
// Thread: the session thread.
class HeapTracker {
public:
    explicit HeapTracker(uint64_t interval);

    static constexpr uint64_t kShortLivedNs = 1'000'000;

    // `heapBytes`: the heap bytes the block takes, the C library's chunk size with its header (0: not known).
    void allocate(uint64_t image, uint32_t pid, uint32_t tid, uint64_t address, uint64_t size, uint32_t stack,
                  uint64_t timeNs = 0, uint64_t heapBytes = 0);
    void free(uint64_t image, uint64_t address, uint64_t timeNs = 0);
    // The block at (image, address) will be allocated or freed soon: its slot of the live table is fetched ahead.
    void prefetch(uint64_t image, uint64_t address) const { m_live.prefetch(image, address); }
    // Process image `image` of process `pid` started. With `unsampledStack` set (the caller's id of a stack that names
    // the row: exporter's "[heap no sample saw]"), an image whose exact live heap is known and that no live sample
    // stands for (a heap smaller than the interval, or whose sampled blocks were all freed) gets a row of its own in
    // inUse() and leaks(), and its bytes in live(): the agent's exact count, in the allocator's sizes, no objects.
    void startImage(uint64_t image, uint32_t pid);
    void setUnsampledStack(uint32_t stack) { m_unsampledStack = stack; }
    // The image ended (exit, exec, gone): what it still held becomes its leaks (calibrated as inUse() says, when
    // `exactHeapBytes` tells what the image held then).
    void endImage(uint64_t image, std::optional<int64_t> exactHeapBytes = std::nullopt);

    // Calibration to the live heap's exact size. The agent counts the heap bytes (chunk size, header included) of every
    // block the program allocates and frees (agent_protocol.h's HeapSlot), so the session knows each process image's
    // live heap exactly in the allocator's sizes; the samples estimate the same quantity (their heap bytes, weighted).
    // Where the two are known, every live sample of the image is weighed once more by their ratio g = exact / estimate:
    // a calibration (a ratio estimator, as survey sampling calls it), which puts the image's live heap, in the sizes
    // the program asked for, within the spread of requested against heap bytes of its blocks (a few per cent of the
    // sampling's own error) rather than within the sampling's error. The sampling weight of allocation_weight.h is
    // applied as ever; g replaces the implicit 1 of an image with no exact count, and a flush's allocations are never
    // calibrated. Exact mode (interval 1) needs none.
    using ExactHeapBytes = std::unordered_map<uint64_t, int64_t>; // per image: its live heap's heap bytes, exactly
    struct LiveEstimate {
        double bytes = 0;
        double objects = 0;
        // The half-width of the bytes' 95% range (samplingMargin of `variance`). A calibrated image's variance is
        // that of sum(w (size - rho heapBytes)) over its live samples (rho = its estimated bytes over its estimated
        // heap bytes: the ratio estimator's variance, linearized), times g^2. Its error comes mostly from the
        // smallest blocks, whose heap bytes are furthest from what was asked: where they hold little of the heap
        // and are seldom sampled, a flush without one of them states a range too narrow for their share, and the
        // range holds the truth about 9 times in 10 rather than 19 in 20 (tst_heap_tracker; on CPython's heaps
        // bench_inuse.sh counts how often).
        double margin = 0;
        double variance = 0;
    };
    // The live heap now, calibrated where `exact` tells an image's, of every image or of `image` alone. Its bytes and
    // objects cost a look per image; its margin a look at every live sample of the calibrated images.
    LiveEstimate live(const ExactHeapBytes &exact, std::optional<uint64_t> image = std::nullopt) const;
    // Its bytes alone.
    double liveBytes(const ExactHeapBytes &exact) const;

    // Estimated objects and bytes of one stack in one thread (the thread that allocated) of one process.
    struct StackMemory {
        uint32_t pid = 0;
        uint32_t tid = 0;
        uint32_t stack = 0;
        bool shortLived = false; // allocations only: those freed within kShortLivedNs (a row of their own)
        // Allocations and leaks: the blocks' size class (blockSizeClass), a row of its own per class; 0 in the in-use
        // snapshot, which is by stack alone.
        uint8_t sizeClass = 0;
        double objects = 0;
        double bytes = 0;
    };
    // What was allocated since the last call, per (pid, tid, stack), lifetime (short-lived or not) and size class: a
    // flush's alloc-samples and alloc-space.
    std::vector<StackMemory> takeAllocated();
    // What is live now, per (pid, tid, stack): a flush's inuse-objects and inuse-space, a full snapshot; calibrated
    // where `exact` tells an image's live heap.
    std::vector<StackMemory> inUse(const ExactHeapBytes &exact = {}) const;
    // What ended images still held, per (pid, tid, stack) and size class, summed over the session.
    std::vector<StackMemory> leaks() const;

    struct Counters {
        uint64_t allocations = 0;  // samples taken in
        uint64_t frees = 0;        // frees of a live sampled block
        uint64_t unknownFrees = 0; // frees of an address with no live sampled block (exact mode: never
                                   // allocated, or freed twice)
        uint64_t reallocated = 0;  // an address allocated again while live: its free was not seen
        uint64_t shortLived = 0;   // samples freed within kShortLivedNs in the flush that allocated them
        uint64_t imagesEnded = 0;
        double allocatedBytes = 0; // estimated, over the session
        double allocatedObjects = 0;
        double liveBytes = 0;      // estimated, now
        double highWaterBytes = 0; // the largest liveBytes so far
        double leakedBytes = 0;    // estimated, held by images when they ended
        double leakedObjects = 0;
        // The sampling variances of allocatedBytes, liveBytes and leakedBytes (allocation_weight.h), in bytes
        // squared; 0 when every allocation is recorded.
        double allocatedBytesVariance = 0;
        double liveBytesVariance = 0;
        double leakedBytesVariance = 0;
    };
    const Counters &counters() const { return m_counters; }
    std::size_t liveBlocks() const { return m_live.size(); }

private:
    struct Block {
        uint64_t image = 0;
        uint32_t pid = 0;
        uint32_t tid = 0;
        uint32_t stack = 0;
        double objects = 0;
        double bytes = 0;
        double variance = 0;  // of bytes, by sampling
        uint64_t allocNs = 0; // when it was allocated (0: not known)
        uint64_t flush = 0;   // the flush that allocated it (m_flush then)
        uint8_t sizeClass = 0;
        double heapBytes = 0; // the heap bytes it stands for (the chunk size, weighted as `bytes`)
    };
    // Per image, the sums over its live samples that its calibration takes.
    struct ImageLive {
        double objects = 0;
        double bytes = 0;
        double heapBytes = 0;
        double variance = 0;
        std::size_t blocks = 0;
    };
    // The calibration factor of `image` (1 where none applies).
    double calibration(uint64_t image, const ExactHeapBytes &exact) const;
    // The exact live heap of `image` when no live sample stands for it (see startImage), else 0.
    double unsampled(uint64_t image, int64_t exact) const;
    // A (pid, tid, stack) triple, and for allocations their lifetime and size class; thread ids are unique across
    // the processes of one system.
    struct SiteKey {
        uint32_t pid = 0;
        uint32_t tid = 0;
        uint32_t stack = 0;
        bool shortLived = false;
        uint8_t sizeClass = 0;
        bool operator==(const SiteKey &) const = default;
    };
    struct SiteHash {
        std::size_t operator()(const SiteKey &k) const
        {
            return std::size_t(((uint64_t(k.tid) << 32) | k.stack) * 0x9E3779B97F4A7C15ull ^ k.pid ^
                               (uint64_t(k.shortLived) << 63) ^ (uint64_t(k.sizeClass) << 56));
        }
    };
    using BySite = std::unordered_map<SiteKey, StackMemory, SiteHash>;
    enum class BySize { No, Yes };
    static void add(BySite &sites, const Block &block, BySize bySize, bool shortLived = false);
    // A live block is no longer live (freed, allocated over or leaked): the live counters let it go.
    void forget(const Block &block);
    static std::vector<StackMemory> listed(const BySite &bySite);

    uint64_t m_interval;
    LiveBlocks<Block> m_live;
    std::unordered_map<uint64_t, ImageLive> m_images;
    BySite m_allocated;   // since the last takeAllocated()
    uint64_t m_flush = 0; // takeAllocated() calls so far
    BySite m_leaks;
    Counters m_counters;
    std::unordered_map<uint64_t, uint32_t> m_imagePids; // started images, not yet ended
    std::optional<uint32_t> m_unsampledStack;
};

} // namespace emberline::engine
