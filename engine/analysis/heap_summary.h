#pragma once

#include "engine/live/live_snapshot.h"
#include "engine/model/frame_table.h"
#include "engine/model/profile.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emberline::engine {

// Allocations of one block size class (blockSizeClass: 2^(k-1) < size <= 2^k), from the samples' block size label
// (kBlockBytesLabel): heaptrack's histogram of allocation sizes.
struct SizeClassRow {
    uint8_t sizeClass = 0;
    int64_t allocObjects = 0;
    int64_t allocBytes = 0;
    int64_t shortLivedObjects = 0; // freed within 1 ms, when the profile tells lifetimes
};

// A memory profile's values per interned stack: allocations over its span, in use at its end (a live session's
// newest flush, a file's snapshot, a session's leaks). A type the profile lacks is empty.
struct MemoryByStack {
    std::vector<int64_t> allocObjects; // alloc-samples, alloc_objects
    std::vector<int64_t> allocBytes;   // alloc-space, alloc_space
    std::vector<int64_t> inuseObjects; // inuse-objects, inuse_objects
    std::vector<int64_t> inuseBytes;   // inuse-space, inuse_space
    // The allocations freed within 1 ms (the samples labelled kShortLivedValue), when the profile tells lifetimes.
    std::vector<int64_t> shortLivedObjects;
    bool lifetimes = false; // the profile tells lifetimes (tellsLifetimes): shortLivedObjects is meant
    // The allocations by size class, smallest first (allocationsBySize); empty when no sample tells its size.
    std::vector<SizeClassRow> sizes;
};

// The index of a memory sample type by its name as Emberline writes it (dashed) or as Go does (underscored); -1 when
// the profile has neither.
int memoryTypeIndex(const Profile &profile, std::string_view dashed, std::string_view underscored);
// The column of a live snapshot's flush memory (TimelineChunk::memory) that holds the in-use bytes; -1 when none.
int inUseBytesColumn(const LiveSnapshot &snapshot);
// Whether a profile carries any memory sample type (isMemorySampleType).
bool hasMemoryTypes(const Profile &profile);
// Whether a profile's allocations are labelled by lifetime (kLifetimesComment: Emberline's memory sessions).
bool tellsLifetimes(const Profile &profile);
// The samples labelled short-lived (kLifetimeLabel = kShortLivedValue), as a mask over the profile's samples (1 =
// one); every 0 when none is.
std::vector<uint8_t> shortLivedSamples(const Profile &profile);
// Each sample's size class (blockSizeClass of its kBlockBytesLabel), -1 for one without the label.
std::vector<int8_t> sampleSizeClasses(const Profile &profile);
// Each sample's value of one sample type, as `visit(sample, value)`: a profile's own values, or a live scope's
// (forEachShownValue).
using SampleValues =
    std::function<void(int sampleType, const std::function<void(uint32_t sample, int64_t value)> &visit)>;
// The sample values of a profile as it is.
SampleValues valuesOf(const Profile &profile, const std::atomic<bool> *cancel = nullptr);
// The allocations of each size class that some sample tells, smallest first: the alloc-samples and alloc-space of
// the samples of each class (and of those in `shortLived`, a mask as shortLivedSamples gives, when not empty). One
// pass over the samples per type.
std::vector<SizeClassRow> allocationsBySize(const Profile &profile, const SampleValues &values,
                                            const std::vector<uint8_t> &shortLived);
// The memory types of a profile per stack, from its samples (names dashed, as Emberline writes them, or underscored,
// as Go does).
MemoryByStack memoryByStack(const Profile &profile, const std::atomic<bool> *cancel = nullptr);

// A live session's fullest flush (of the whole session, or of a range: fullestFlushIn): the flush whose end held the
// most in-use space, and what each stack held then. Not the live heap's high-water mark
// (MemorySummary::highWaterBytes), which the session reads between flushes too.
struct FullestFlush {
    int64_t timeNs = 0; // the flush's end
    uint32_t flushSequence = 0;
    int64_t bytes = 0;
    std::vector<int64_t> inuseBytes; // per interned stack of the snapshot's profile
    std::vector<int64_t> inuseObjects;
};
std::optional<FullestFlush> fullestFlush(const LiveSnapshot &snapshot);

// An allocator's own frame, which no allocation is blamed on: malloc and its family, operator new and new[], Go's
// runtime allocators, and anything in Emberline's agent (libemberline_agent.so).
bool isAllocatorFrame(const Frame &frame);

// One function of a summary's list: the leaf-most frame of its stacks that is not an allocator's.
struct HeapSummaryRow {
    std::string function;
    int64_t value = 0; // what the list ranks by (see HeapSummary)
    int64_t allocObjects = 0;
    int64_t allocBytes = 0;
    int64_t inuseObjects = 0; // at the end (or, in the peak list, at the fullest flush)
    int64_t inuseBytes = 0;
    size_t stacks = 0; // distinct stacks blamed on it
    // The stack that gives the most to `value`: the function, then its callers outward (at most kPathFrames).
    std::vector<std::string> path;
    static constexpr size_t kPathFrames = 12;
};

// What heaptrack's summary tells of a memory profile, by function: what the fullest flush held, what stays in use at
// the end (leaks), what allocates most often, and what allocates often but keeps little (short-lived allocations).
struct HeapSummary {
    std::optional<FullestFlush> fullestFlush; // the "Peak" list's flush; its per-stack values are left out (empty)
    int64_t allocObjects = 0;
    int64_t allocBytes = 0;
    int64_t inuseObjects = 0;
    int64_t inuseBytes = 0;
    std::vector<HeapSummaryRow> peak;        // value: in-use bytes at the fullest flush (empty without one)
    std::vector<HeapSummaryRow> leaks;       // value: in-use bytes at the end
    std::vector<HeapSummaryRow> allocations; // value: allocations (objects) over the span
    // value: allocations freed within 1 ms of being made (a profile that tells lifetimes), else allocations not in
    // use at the end (allocated - in use)
    std::vector<HeapSummaryRow> temporary;
    bool temporaryByLifetime = false; // which of the two `temporary` ranks by
    std::vector<SizeClassRow> sizes;  // MemoryByStack::sizes
};

// The summary of a memory profile over `frames` (a FrameTable of `profile`): each list is the `top` functions of
// most value, largest first; rows of value 0 are left out.
//
// Thread: any; reads immutable inputs.
HeapSummary summarizeHeap(const Profile &profile, const FrameTable &frames, const MemoryByStack &values,
                          const FullestFlush *peak = nullptr, size_t top = 25);

// One function's in-use bytes at the end of each flush: the stacks blamed on it (as summarizeHeap blames them).
struct FunctionOverTime {
    std::string function;
    std::vector<std::pair<int64_t, int64_t>> points; // (flush end, in-use bytes), one per flush
};
// The in-use bytes of each of `functions` (by name, as HeapSummaryRow::function) at the end of each of `flushes` (a
// live session's chunks, in order), in the order `functions` are given; empty when the snapshot has no in-use type.
//
// Thread: any; reads immutable inputs.
std::vector<FunctionOverTime> inUseOverFlushes(const LiveSnapshot &snapshot, const FrameTable &frames,
                                               const std::vector<const TimelineChunk *> &flushes,
                                               const std::vector<std::string> &functions,
                                               const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
