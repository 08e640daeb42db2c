#pragma once

#include "engine/live/live_profile.h"
#include "engine/model/sample_overlay.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

namespace emberline::engine {

// Which part of a live session a view shows: a time range and the threads left out.
struct LiveSelection {
    int64_t startNs = std::numeric_limits<int64_t>::min();
    int64_t endNs = std::numeric_limits<int64_t>::max();
    std::vector<uint32_t> hiddenThreads; // LiveThread ordinals
    bool coversAllTime() const
    {
        return startNs == std::numeric_limits<int64_t>::min() && endNs == std::numeric_limits<int64_t>::max();
    }
};

// Per aggregated sample, the share of its value that falls inside the selection: the timeline entries in the
// range over all of its entries (exact when the sample's value is the same for each entry, as cpu-samples is),
// 0 for hidden threads. Empty when the selection keeps everything. `hits`: each aggregated sample's timeline
// entries (LiveProfile::sampleHits, as of the snapshot).
std::vector<float> selectionWeights(const LiveSnapshot &snapshot, std::span<const uint32_t> hits,
                                    const LiveSelection &selection);

// The values of the session's memory types (LiveSnapshot::memoryTypes) within the selection, which the weights
// cannot give: what was allocated, summed over the flushes that end in the range (after its start, up to its end
// included), and what was in use at the end of the last of them. A memory sample's time is its flush's end, so a
// range that holds no flush's end holds no memory. 0 for hidden threads. Null when the session has no memory types.
std::shared_ptr<const SampleOverlay> memoryOverlay(const LiveSnapshot &snapshot, const LiveSelection &selection);
// The same for one flush of the session: what it allocated and what was in use at its end.
std::shared_ptr<const SampleOverlay> flushMemoryOverlay(const LiveSnapshot &snapshot, const TimelineChunk &chunk,
                                                        const std::vector<uint32_t> &hiddenThreads);

// CPU time per thread in fixed buckets of the session's time. Buckets that are whole multiples of the flushes'
// 50 ms bins are sums of those bins (each sample's own CPU time; cost independent of the sample count); other
// widths walk the timeline entries (each weighted by its aggregated sample's CPU time per entry).
struct ThreadActivity {
    int64_t startNs = 0;
    int64_t bucketNs = 0;
    size_t bucketCount = 0;
    std::vector<std::vector<int64_t>> cpuNs;    // [thread][bucket]
    std::vector<std::vector<uint32_t>> samples; // [thread][bucket]

    // Share of one core, in percent, of a thread in a bucket.
    double cpuPercent(size_t thread, size_t bucket) const;
    // Bucket index of a time, clamped to the buckets; 0 when there are none.
    size_t bucketAt(int64_t timeNs) const;
    int64_t bucketStart(size_t bucket) const { return startNs + static_cast<int64_t>(bucket) * bucketNs; }
};

// `hits` as for selectionWeights; read only for widths that are not whole bins.
ThreadActivity bucketActivity(const LiveSnapshot &snapshot, std::span<const uint32_t> hits, int64_t bucketNs);

// The finest bucket width of a fixed ladder (50 ms … 10 min) that cuts the span into at most maxBuckets
// buckets and is at least minBucketNs wide (enough samples per bucket for a steady line). With a few hundred buckets
// this stays finer than the flush period for sessions of an hour and more (10 s flushes: 5 s buckets at 30 minutes with
// 400 buckets).
int64_t chooseBucketNs(int64_t spanNs, size_t maxBuckets, int64_t minBucketNs = 0);

} // namespace emberline::engine
