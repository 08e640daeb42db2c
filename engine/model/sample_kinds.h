#pragma once

#include <cstdint>
#include <string_view>

namespace emberline::engine {

// What a sample type's values mean over time, from its name (pprof gives no other hint).
//
// Most types count events (CPU samples, CPU time, bytes allocated): a profile over a longer span holds more, and two
// spans' values add up. A snapshot type holds a state at one moment instead: the memory live at a flush's end
// (Emberline's `inuse-objects`, `inuse-space`; Go heap profiles' `inuse_objects`, `inuse_space`). Each flush of a
// memory session carries the full snapshot again, so its values replace the previous flush's; summing them over
// flushes counts every live allocation once per flush.
bool isSnapshotSampleType(std::string_view type);

// The types of a memory profile: allocations during a span (`alloc-samples`, `alloc-space`; Go's `alloc_objects`,
// `alloc_space`) and the snapshot types. A session's memory samples carry no moment of their own (their time is their
// flush's end), so a live session keeps their values per flush rather than on its timeline of samples.
bool isMemorySampleType(std::string_view type);

// The label Emberline puts on the allocations freed within a millisecond of being made, in the flush that made them
// (heaptrack's temporary allocations; `go tool pprof -tagfocus 'lifetime=freed within 1 ms'` shows them alone). A
// memory profile with this key tells lifetimes; one without it (Go's, older sessions) does not.
inline constexpr std::string_view kLifetimeLabel = "lifetime";
inline constexpr std::string_view kShortLivedValue = "freed within 1 ms";
// The comment of a profile whose allocations are labelled by lifetime (a memory session's flushes and profile.pprof),
// even when none was short-lived.
inline constexpr std::string_view kLifetimesComment =
    "allocations freed within 1 ms are labelled lifetime=freed within 1 ms";

// The numeric label of a memory sample's block size, in bytes, as Go's heap profiles name it: Go's is each block's
// size; Emberline's allocations and leaks come in rows by stack and power-of-two size class (2^(k-1) < size <=
// 2^k), each labelled with its blocks' mean size, so that the label always falls in its row's class. `go tool pprof
// -tags` shows the distribution; the memory summary's Sizes list is made from it.
inline constexpr std::string_view kBlockBytesLabel = "bytes";
// The size class of a block of `size` bytes: the k with 2^(k-1) < size <= 2^k; sizes up to 8 bytes are class 3,
// malloc(0)'s class 0.
inline uint8_t blockSizeClass(uint64_t size)
{
    if (size == 0)
        return 0;
    if (size <= 8)
        return 3;
    return uint8_t(64 - __builtin_clzll(size - 1)); // ceil(log2(size))
}

} // namespace emberline::engine
