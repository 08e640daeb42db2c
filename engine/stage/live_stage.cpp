#include "engine/stage/live_stage.h"

#include "engine/common/clock.h"
#include "engine/common/logging.h"
#include "engine/common/thread_priority.h"
#include "engine/model/python_frame.h"

#include <QElapsedTimer>

#include <algorithm>
#include <chrono>

namespace emberline::engine {

// The last frame table and the table sizes it was built from: the merged profile's locations, functions and
// mappings only grow, so while their counts stay the same the frame table (and the frame ids the views hold)
// stays valid.
struct LiveStage::FrameCache {
    std::shared_ptr<const FrameTable> frames;
    std::shared_ptr<const std::vector<QString>> names;
    std::shared_ptr<const ThreadIndex> threads;
    bool interpreterFrames = false;
    size_t locations = 0;
    size_t functions = 0;
    size_t mappings = 0;
};

namespace {

constexpr size_t kTimelineBuckets = 400;
// Flushes shorter than this (a session stopped early) do not make the timeline's buckets finer.
constexpr int64_t kShortestFlushNs = 1'000'000'000;

// The session's threads as the explorer's ThreadIndex, from what the snapshot already tracks (parsing every
// aggregated sample's labels again would cost O(samples) per flush).
std::shared_ptr<const ThreadIndex> threadIndex(const LiveSnapshot &snap)
{
    std::vector<ThreadInfo> threads;
    threads.reserve(snap.threads.size());
    for (const LiveThread &t : snap.threads)
        threads.push_back(ThreadInfo{t.name, t.tid, t.hits});
    return std::make_shared<const ThreadIndex>(std::move(threads), snap.sampleThread());
}

// About twenty samples of a busy thread per bucket at the session's frequency, and at least two buckets per flush
// however long the session grows (more buckets than kTimelineBuckets then).
int64_t timelineBucketNs(const LiveSnapshot &snap, int frequency)
{
    const int64_t minBucket = frequency > 0 ? 20'000'000'000 / frequency : 0;
    const int64_t span = snap.endNs - snap.startNs;
    size_t buckets = kTimelineBuckets;
    if (!snap.chunks.empty()) {
        const auto length = [](const auto &chunk) { return chunk->endNs - chunk->startNs; };
        // The first and the last flush may be cut short by the session's start and stop.
        const int64_t flushNs = std::max({length(snap.chunks.front()), length(snap.chunks.back()), kShortestFlushNs});
        buckets = std::max<size_t>(buckets, static_cast<size_t>(span / std::max<int64_t>(flushNs / 2, 1)) + 1);
    }
    return chooseBucketNs(span, buckets, minBucket);
}

} // namespace

LiveStage::LiveStage(Options options, Publish publish)
    : m_options(std::move(options)), m_publish(std::move(publish)), m_frameCache(std::make_unique<FrameCache>()),
      m_trees(std::make_shared<LiveTrees>())
{
    m_worker.start({.batch = [this](std::vector<Job> &jobs) { runJobs(jobs); }});
}

LiveStage::~LiveStage()
{
    m_worker.stop(WorkerStop::Discard);
}

void LiveStage::addFlush(std::shared_ptr<const Flush> flush)
{
    m_worker.post(Job{std::move(flush), clockNs(CLOCK_MONOTONIC), std::nullopt, 0});
}

uint64_t LiveStage::setView(LiveViewRequest request)
{
    std::lock_guard lock(m_viewMutex);
    const uint64_t generation = ++m_generation;
    m_worker.post(Job{nullptr, 0, std::move(request), generation});
    return generation;
}

void LiveStage::stop()
{
    m_worker.requestStop(WorkerStop::Discard);
}

void LiveStage::waitUntilIdle()
{
    m_worker.waitIdle();
}

void LiveStage::runJobs(std::vector<Job> &jobs)
{
    // What the stage derives is what the window waits for, as it waits for the GUI thread: among a target's busy
    // threads it runs as high as that thread (ui/jobs/thread_scheduling.h).
    if (!m_raised) {
        m_raised = true;
        raiseCallingThread();
    }
    std::vector<std::shared_ptr<const Flush>> flushes;
    int64_t receivedNs = 0;
    for (Job &job : jobs) {
        if (job.flush) {
            flushes.push_back(std::move(job.flush));
            receivedNs = job.receivedNs;
        }
        if (job.request) {
            m_request = std::move(*job.request);
            m_requestGeneration = job.generation;
        }
    }
    process(std::move(flushes), m_request, m_requestGeneration, receivedNs);
}

void LiveStage::process(std::vector<std::shared_ptr<const Flush>> flushes, const LiveViewRequest &request,
                        uint64_t generation, int64_t receivedNs)
{
    QElapsedTimer timer;
    timer.start();
    const int64_t cpuStartNs = clockNs(CLOCK_THREAD_CPUTIME_ID);
    auto update = std::make_shared<LiveUpdate>();
    update->generation = generation;
    update->request = request;

    // 1. The flushes into the live aggregate, and the tables every view of it shares.
    for (const auto &flush : flushes) {
        if (auto st = m_live.add(flush); !st)
            update->error = st.error().message;
    }
    // The snapshot keeps the values per stack of the type the views show (the others are read from the samples
    // when asked for), so that a flush copies only those while the views hold them.
    // Without new flushes it is the same snapshot, or one of the same flushes when the views changed type.
    if (m_snapshot || !flushes.empty())
        m_snapshot = m_live.snapshot(request.sampleType >= 0 ? request.sampleType : LiveProfile::kDefaultType);
    if (!flushes.empty()) {
        update->flushReceivedNs = receivedNs; // when the newest of these flushes arrived
        const Profile &profile = *m_snapshot->profile;
        FrameCache &cache = *m_frameCache;
        if (!cache.frames || cache.locations != profile.locations().size() ||
            cache.functions != profile.functions().size() || cache.mappings != profile.mappings().size()) {
            cache.frames = std::make_shared<const FrameTable>(profile);
            cache.names = frameDisplayNames(*cache.frames);
            cache.interpreterFrames = hasInterpreterFunctions(profile);
            cache.locations = profile.locations().size();
            cache.functions = profile.functions().size();
            cache.mappings = profile.mappings().size();
        }
        cache.threads = threadIndex(*m_snapshot);
        // Every flush frees the previous snapshot's tables and the flush itself, spread over the allocator's
        // per-thread arenas: their pages go back to the system once the process has grown past the trimmer's
        // slack, and are otherwise reused by the next flush's work without a page fault.
        if (m_heapTrimmer.afterWork())
            qCDebug(lcModel, "gave the allocator's free pages back: %.1f MiB resident",
                    static_cast<double>(HeapTrimmer::residentBytes()) / (1024.0 * 1024.0));
    }
    update->flushes = std::move(flushes);
    const qint64 mergeMs = timer.elapsed();
    if (!m_snapshot) {
        m_publish(std::move(update)); // nothing merged yet: only the flushes (or the error) to report
        return;
    }

    // 2. The scope's profile and the timeline's buckets.
    const LiveSnapshot &snap = *m_snapshot;
    LiveSelection selection;
    selection.hiddenThreads = request.hiddenThreads;
    if (request.scope == LiveScope::SelectedRange) {
        selection.startNs = request.rangeStartNs;
        selection.endNs = request.rangeEndNs;
    } else if (request.scope == LiveScope::LastFlush && !snap.chunks.empty()) {
        selection.startNs = snap.chunks.back()->startNs;
        selection.endNs = snap.chunks.back()->endNs;
    }
    auto loaded = std::make_shared<LoadedProfile>();
    loaded->path = m_options.sessionPath;
    loaded->profile = snap.profile;
    loaded->frames = m_frameCache->frames;
    loaded->frameNames = m_frameCache->names;
    loaded->threads = m_frameCache->threads;
    loaded->interpreterFrames = m_frameCache->interpreterFrames;
    loaded->liveTrees = m_trees;
    loaded->live = m_snapshot;
    loaded->aggregated = true;
    std::vector<float> weights = selectionWeights(snap, m_live.sampleHits(), selection);
    if (weights.empty()) {
        loaded->totals = snap.totals;
    } else {
        loaded->totals = weightedTotals(*snap.profile, weights);
        loaded->sampleWeights = std::make_shared<const std::vector<float>>(std::move(weights));
    }
    // Memory over a time range is what its flushes allocated and held, not a share of the aggregate (which holds
    // the newest in-use snapshot only).
    if (!selection.coversAllTime()) {
        loaded->sampleOverlay = request.scope == LiveScope::LastFlush
                                    ? flushMemoryOverlay(snap, *snap.chunks.back(), selection.hiddenThreads)
                                    : memoryOverlay(snap, selection);
        if (loaded->sampleOverlay)
            loaded->sampleOverlay->replaceTotals(loaded->totals);
    }
    update->activity = std::make_shared<const ThreadActivity>(
        bucketActivity(snap, m_live.sampleHits(), timelineBucketNs(snap, m_options.frequency)));
    update->heatmap = m_heatmap.update(snap, request.hiddenThreads);
    update->selection = std::move(selection);
    update->loaded = loaded;
    update->snapshot = m_snapshot;
    const qint64 deriveMs = timer.elapsed();
    // The timelines, the heatmap and the memory chart need no call tree: the GUI thread lays them out and paints them
    // while this thread derives it.
    if (!update->flushes.empty()) {
        auto first = std::make_shared<LiveUpdate>(*update);
        first->analysisFollows = true;
        m_publish(std::move(first));
        update->flushes.clear();
        update->error.clear();
        update->timelineSent = true;
    }

    // 3. The call tree and the function table for the sample type the views show, or the comparison.
    derive(*update, loaded);
    qCDebug(lcModel) << "live update" << generation << "in" << timer.elapsed() << "ms (merge" << mergeMs << "ms, derive"
                     << deriveMs - mergeMs << "ms, analysis or comparison" << timer.elapsed() - deriveMs << "ms;"
                     << (clockNs(CLOCK_THREAD_CPUTIME_ID) - cpuStartNs) / 1'000'000 << "ms on CPU);"
                     << snap.profile->sampleCount() << "aggregated samples";
    m_publish(std::move(update));
}

void LiveStage::derive(LiveUpdate &update, const std::shared_ptr<const LoadedProfile> &loaded)
{
    const LiveViewRequest &request = update.request;
    const int sampleType =
        request.sampleType >= 0 ? request.sampleType : std::max(0, loaded->profile->defaultSampleTypeIndex());
    if (request.compare.mode == LiveCompareMode::Off) {
        AnalysisRequest analysisRequest;
        analysisRequest.loaded = loaded;
        analysisRequest.sampleType = sampleType;
        update.analysis = analyze(analysisRequest, nullptr);
        return;
    }
    auto comparison = compareLive(*m_snapshot, m_live.sampleHits(), loaded, request.compare, request.hiddenThreads,
                                  sampleType, &m_flushSides);
    if (!comparison) {
        update.compareError = comparison.error().message;
        return;
    }
    update.comparison = std::move(comparison).value();
    if (update.comparison.newLabel.empty()) {
        switch (request.scope) {
        case LiveScope::WholeSession:
            update.comparison.newLabel = "whole session";
            break;
        case LiveScope::LastFlush:
            update.comparison.newLabel = m_snapshot->chunks.empty()
                                             ? std::string("last flush")
                                             : "flush " + std::to_string(m_snapshot->chunks.back()->sequence);
            break;
        case LiveScope::SelectedRange:
            update.comparison.newLabel =
                sessionRangeLabel(*m_snapshot, update.selection.startNs, update.selection.endNs);
            break;
        }
    }
}

} // namespace emberline::engine
