#include "engine/live/live_selection.h"

#include <algorithm>
#include <array>

namespace emberline::engine {

std::vector<float> selectionWeights(const LiveSnapshot &snapshot, std::span<const uint32_t> hitsOf,
                                    const LiveSelection &selection)
{
    if (selection.coversAllTime() && selection.hiddenThreads.empty())
        return {};
    const ChunkedColumn<uint32_t> &threadOf = snapshot.sampleThread();
    const size_t n = std::min(hitsOf.size(), threadOf.size());
    std::vector<uint8_t> hidden(snapshot.threads.size(), 0);
    for (uint32_t t : selection.hiddenThreads) {
        if (t < hidden.size())
            hidden[t] = 1;
    }
    std::vector<float> weights(n, 0.0f);
    if (selection.coversAllTime()) {
        for (size_t i = 0; i < n; ++i) {
            const uint32_t thread = threadOf[i];
            weights[i] = thread < hidden.size() && hidden[thread] ? 0.0f : 1.0f;
        }
        return weights;
    }
    std::vector<uint32_t> inRange(n, 0);
    for (const auto &chunk : snapshot.chunks) {
        if (chunk->endNs < selection.startNs || chunk->startNs > selection.endNs)
            continue; // entries are clamped into their flush's span
        chunk->forEach([&](int64_t t, uint32_t agg) {
            if (t >= selection.startNs && t <= selection.endNs && agg < n)
                inRange[agg]++;
        });
    }
    for (size_t i = 0; i < n; ++i) {
        const uint32_t thread = threadOf[i];
        if (inRange[i] == 0 || hitsOf[i] == 0 || (thread < hidden.size() && hidden[thread]))
            continue;
        weights[i] = static_cast<float>(static_cast<double>(inRange[i]) / hitsOf[i]);
    }
    return weights;
}

namespace {

// The memory rows of `chunks` (in session order) as an overlay: allocations summed, the in-use values of the last.
std::shared_ptr<const SampleOverlay> memoryOf(const LiveSnapshot &snapshot,
                                              const std::vector<const TimelineChunk *> &chunks,
                                              const std::vector<uint32_t> &hiddenThreads)
{
    if (snapshot.memoryTypes.empty())
        return nullptr;
    const ChunkedColumn<uint32_t> &threadOf = snapshot.sampleThread();
    std::vector<uint8_t> hidden(snapshot.threads.size(), 0);
    for (uint32_t t : hiddenThreads) {
        if (t < hidden.size())
            hidden[t] = 1;
    }
    SampleOverlayBuilder builder(snapshot.memoryTypes);
    std::vector<int64_t> row(snapshot.memoryTypes.size());
    for (size_t c = 0; c < chunks.size(); ++c) {
        const bool last = c + 1 == chunks.size();
        chunks[c]->memory.forEach([&](uint32_t sample, std::span<const int64_t> values) {
            const uint32_t thread = sample < threadOf.size() ? threadOf[sample] : kNoIndex;
            if (thread < hidden.size() && hidden[thread])
                return;
            bool any = false;
            for (size_t k = 0; k < row.size() && k < values.size(); ++k) {
                row[k] = snapshot.memorySnapshots[k] && !last ? 0 : values[k];
                any = any || row[k] != 0;
            }
            if (any)
                builder.add(sample, row);
        });
    }
    return std::make_shared<const SampleOverlay>(builder.finish());
}

} // namespace

std::shared_ptr<const SampleOverlay> memoryOverlay(const LiveSnapshot &snapshot, const LiveSelection &selection)
{
    std::vector<const TimelineChunk *> chunks;
    for (const auto &chunk : snapshot.chunks) {
        if (chunk->endNs > selection.startNs && chunk->endNs <= selection.endNs)
            chunks.push_back(chunk.get());
    }
    return memoryOf(snapshot, chunks, selection.hiddenThreads);
}

std::shared_ptr<const SampleOverlay> flushMemoryOverlay(const LiveSnapshot &snapshot, const TimelineChunk &chunk,
                                                        const std::vector<uint32_t> &hiddenThreads)
{
    return memoryOf(snapshot, {&chunk}, hiddenThreads);
}

double ThreadActivity::cpuPercent(size_t thread, size_t bucket) const
{
    if (thread >= cpuNs.size() || bucket >= bucketCount || bucketNs <= 0)
        return 0;
    return 100.0 * static_cast<double>(cpuNs[thread][bucket]) / static_cast<double>(bucketNs);
}

size_t ThreadActivity::bucketAt(int64_t timeNs) const
{
    if (bucketCount == 0 || bucketNs <= 0 || timeNs <= startNs)
        return 0;
    return std::min(bucketCount - 1, static_cast<size_t>((timeNs - startNs) / bucketNs));
}

namespace {

// Sums each flush's fixed bins into the buckets: O(threads x bins), however many samples the session holds.
void addBinnedActivity(const LiveSnapshot &snapshot, ThreadActivity &activity)
{
    const auto binsPerBucket = static_cast<size_t>(activity.bucketNs / TimelineChunk::kActivityBinNs);
    const size_t threads = activity.cpuNs.size();
    for (const auto &chunk : snapshot.chunks) {
        for (size_t t = 0; t < std::min(threads, chunk->binThreads); ++t) {
            for (size_t b = 0; b < chunk->binCount; ++b) {
                const size_t cell = t * chunk->binCount + b;
                if (chunk->binSamples[cell] == 0)
                    continue;
                const size_t bucket = std::min((chunk->firstBin + b) / binsPerBucket, activity.bucketCount - 1);
                activity.cpuNs[t][bucket] += chunk->binCpuNs[cell];
                activity.samples[t][bucket] += chunk->binSamples[cell];
            }
        }
    }
}

} // namespace

ThreadActivity bucketActivity(const LiveSnapshot &snapshot, std::span<const uint32_t> hitsOf, int64_t bucketNs)
{
    ThreadActivity activity;
    activity.startNs = snapshot.startNs;
    activity.bucketNs = std::max<int64_t>(bucketNs, 1'000'000);
    const int64_t span = std::max<int64_t>(snapshot.endNs - snapshot.startNs, 0);
    activity.bucketCount = static_cast<size_t>((span + activity.bucketNs - 1) / activity.bucketNs);
    const size_t threads = snapshot.threads.size();
    activity.cpuNs.assign(threads, std::vector<int64_t>(activity.bucketCount, 0));
    activity.samples.assign(threads, std::vector<uint32_t>(activity.bucketCount, 0));
    if (activity.bucketCount == 0)
        return activity;
    if (activity.bucketNs % TimelineChunk::kActivityBinNs == 0) {
        addBinnedActivity(snapshot, activity);
        return activity;
    }
    const ChunkedColumn<uint32_t> &threadOf = snapshot.sampleThread();
    const size_t known = std::min(hitsOf.size(), threadOf.size());
    for (const auto &chunk : snapshot.chunks) {
        chunk->forEach([&](int64_t timeNs, uint32_t agg) {
            if (agg >= known)
                return;
            const uint32_t thread = threadOf[agg];
            if (thread >= threads)
                return;
            const size_t bucket = activity.bucketAt(timeNs);
            const uint32_t hits = std::max<uint32_t>(hitsOf[agg], 1);
            activity.cpuNs[thread][bucket] += snapshot.sampleCpuNs(agg) / hits;
            activity.samples[thread][bucket]++;
        });
    }
    return activity;
}

int64_t chooseBucketNs(int64_t spanNs, size_t maxBuckets, int64_t minBucketNs)
{
    static constexpr std::array<int64_t, 14> kLadderMs{50,    100,   250,   500,   1000,   2000,   5000,
                                                       10000, 15000, 30000, 60000, 120000, 300000, 600000};
    maxBuckets = std::max<size_t>(maxBuckets, 1);
    for (int64_t ms : kLadderMs) {
        const int64_t ns = ms * 1'000'000;
        const bool fits = spanNs <= 0 || static_cast<size_t>((spanNs + ns - 1) / ns) <= maxBuckets;
        if (fits && ns >= minBucketNs)
            return ns;
    }
    return kLadderMs.back() * 1'000'000;
}

} // namespace emberline::engine
