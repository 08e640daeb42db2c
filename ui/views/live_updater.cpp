#include "ui/views/live_updater.h"

#include "engine/common/clock.h"
#include "ui/logging.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <malloc.h>

namespace emberline::ui {

// The last frame table and the table sizes it was built from: the merged profile's locations, functions and
// mappings only grow, so while their counts stay the same the frame table (and the frame ids the views hold)
// stays valid.
struct FrameCache {
    std::shared_ptr<const engine::FrameTable> frames;
    std::shared_ptr<const std::vector<QString>> names;
    size_t locations = 0;
    size_t functions = 0;
    size_t mappings = 0;
};

namespace {

constexpr size_t kTimelineBuckets = 400;
// How long after a flush is merged its twin buffer is brought up to date (LiveProfile::catchUp).
constexpr int kCatchUpDelayMs = 300;
// Flushes shorter than this (a session stopped early) do not make the timeline's buckets finer.
constexpr int64_t kShortestFlushNs = 1'000'000'000;

struct Ingested {
    LiveState state;
    QString error;
};

// The session's threads as the explorer's ThreadIndex, from what the snapshot already tracks (parsing every
// aggregated sample's labels again would cost O(samples) per flush).
std::shared_ptr<const engine::ThreadIndex> threadIndex(const engine::LiveSnapshot &snap)
{
    std::vector<engine::ThreadInfo> threads;
    threads.reserve(snap.threads.size());
    for (const engine::LiveThread &t : snap.threads)
        threads.push_back(engine::ThreadInfo{t.name, t.tid, t.hits});
    return std::make_shared<const engine::ThreadIndex>(std::move(threads), snap.sampleThread(), snap.columns);
}

Ingested ingest(engine::LiveProfile &live, FrameCache &cache, const std::shared_ptr<const engine::Flush> &flushPtr)
{
    QElapsedTimer timer;
    timer.start();
    const int64_t cpuStartNs = engine::clockNs(CLOCK_THREAD_CPUTIME_ID);
    const engine::Flush &flush = *flushPtr;
    Ingested out;
    if (auto st = live.add(flushPtr); !st) {
        out.error = QString::fromStdString(st.error().message);
        return out;
    }
    const qint64 mergeMs = timer.elapsed();
    out.state.snapshot = live.snapshot();
    const engine::Profile &profile = *out.state.snapshot->profile;
    if (!cache.frames || cache.locations != profile.locations().size() ||
        cache.functions != profile.functions().size() || cache.mappings != profile.mappings().size()) {
        auto frames = std::make_shared<const engine::FrameTable>(profile);
        auto names = FlameGraphLayout::frameNames(*frames);
        cache = {std::move(frames), std::move(names), profile.locations().size(), profile.functions().size(),
                 profile.mappings().size()};
    }
    out.state.frames = cache.frames;
    out.state.frameNames = cache.names;
    out.state.threads = threadIndex(*out.state.snapshot);
    const qint64 tablesMs = timer.elapsed();
    // Every flush frees the previous snapshot's tables and the flush itself, spread over the allocator's
    // per-thread arenas; give those pages back, or the resident size keeps the high-water mark of every arena.
    // Here, while the GUI thread waits for this merge: malloc_trim locks every arena in turn, the GUI thread's
    // too, and a worker preempted while it holds that lock at any other moment stalls the GUI thread for as long
    // as the worker waits for a core (measured: stalls of 65–130 ms with the trim done between flushes).
    ::malloc_trim(0);
    qCDebug(lcUiAnalysis) << "merged flush" << flush.sequence << "in" << timer.elapsed() << "ms (merge" << mergeMs
                          << "ms, snapshot and tables" << tablesMs - mergeMs << "ms, trim"
                          << timer.elapsed() - tablesMs << "ms;"
                          << (engine::clockNs(CLOCK_THREAD_CPUTIME_ID) - cpuStartNs) / 1'000'000 << "ms on CPU);"
                          << out.state.snapshot->profile->sampleCount() << "aggregated samples,"
                          << out.state.snapshot->timelineBytes() << "timeline bytes";
    return out;
}

std::shared_ptr<const LiveViewData> deriveView(const QString &path, int frequency, LiveState state, LiveScope scope,
                                               engine::LiveSelection selection, std::shared_ptr<LiveTrees> trees)
{
    const engine::LiveSnapshot &snap = *state.snapshot;
    if (scope == LiveScope::LastFlush && !snap.chunks.empty()) {
        selection.startNs = snap.chunks.back()->startNs;
        selection.endNs = snap.chunks.back()->endNs;
    }
    auto data = std::make_shared<LiveViewData>();
    auto loaded = std::make_shared<LoadedProfile>();
    loaded->path = path;
    loaded->profile = snap.profile;
    loaded->frames = state.frames;
    loaded->frameNames = state.frameNames;
    loaded->liveTrees = std::move(trees);
    loaded->live = state.snapshot;
    loaded->threads = state.threads;
    loaded->aggregated = true;
    std::vector<float> weights = engine::selectionWeights(snap, selection);
    if (weights.empty()) {
        loaded->totals = snap.totals;
    } else {
        loaded->totals = weightedTotals(*snap.profile, weights);
        loaded->sampleWeights = std::make_shared<const std::vector<float>>(std::move(weights));
    }
    // About twenty samples of a busy thread per bucket at the session's frequency, and at least two buckets
    // per flush however long the session grows (more buckets than kTimelineBuckets then).
    const int64_t minBucket = frequency > 0 ? 20'000'000'000 / frequency : 0;
    const int64_t span = snap.endNs - snap.startNs;
    size_t buckets = kTimelineBuckets;
    if (!snap.chunks.empty()) {
        const auto length = [](const auto &chunk) { return chunk->endNs - chunk->startNs; };
        // The first and the last flush may be cut short by the session's start and stop.
        const int64_t flushNs =
            std::max({length(snap.chunks.front()), length(snap.chunks.back()), kShortestFlushNs});
        buckets = std::max<size_t>(buckets, static_cast<size_t>(span / std::max<int64_t>(flushNs / 2, 1)) + 1);
    }
    const int64_t bucket = engine::chooseBucketNs(span, buckets, minBucket);
    data->activity = std::make_shared<const engine::ThreadActivity>(engine::bucketActivity(snap, bucket));
    data->loaded = std::move(loaded);
    data->state = std::move(state);
    data->scope = scope;
    data->selection = std::move(selection);
    return data;
}

} // namespace

LiveUpdater::LiveUpdater(QString sessionPath, int frequency, QObject *parent)
    : QObject(parent), m_path(std::move(sessionPath)), m_frequency(frequency),
      m_live(std::make_shared<engine::LiveProfile>()), m_frameCache(std::make_shared<FrameCache>()),
      m_trees(std::make_shared<LiveTrees>())
{
    m_ingestPool.setMaxThreadCount(1); // flushes are merged in order, by one thread
}

LiveUpdater::~LiveUpdater()
{
    // Queued merges own what they use (shared pointers); waiting keeps their watchers' results from arriving
    // at a destroyed object. A merge takes a fraction of a flush period.
    m_ingestPool.waitForDone();
}

void LiveUpdater::addFlush(std::shared_ptr<const engine::Flush> flush)
{
    ++m_pendingFlushes;
    auto *watcher = new QFutureWatcher<Ingested>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        --m_pendingFlushes;
        Ingested result = watcher->result();
        if (!result.error.isEmpty()) {
            qCWarning(lcUiAnalysis) << "cannot merge a flush:" << result.error;
            Q_EMIT mergeFailed(result.error);
            return;
        }
        m_state = std::move(result.state);
        Q_EMIT stateChanged();
        derive();
        // By then the views have shown this state and let go of the previous one, whose buffer can take this
        // flush off the next one's path.
        QTimer::singleShot(kCatchUpDelayMs, this, [this] {
            m_ingestPool.start([live = m_live] {
                if (auto st = live->catchUp(); !st)
                    qCWarning(lcUiAnalysis) << "live profile:" << QString::fromStdString(st.error().message);
            });
        });
    });
    watcher->setFuture(QtConcurrent::run(&m_ingestPool, [live = m_live, cache = m_frameCache, flush = std::move(flush)] {
        return ingest(*live, *cache, flush);
    }));
}

void LiveUpdater::setScope(LiveScope scope, int64_t rangeStartNs, int64_t rangeEndNs)
{
    m_scope = scope;
    m_rangeStart = rangeStartNs;
    m_rangeEnd = rangeEndNs;
    derive();
}

void LiveUpdater::setHiddenThreads(std::vector<uint32_t> hidden)
{
    m_hidden = std::move(hidden);
    derive();
}

void LiveUpdater::derive()
{
    if (!m_state.snapshot)
        return;
    engine::LiveSelection selection;
    selection.hiddenThreads = m_hidden;
    if (m_scope == LiveScope::SelectedRange) {
        selection.startNs = m_rangeStart;
        selection.endNs = m_rangeEnd;
    }
    const uint64_t generation = ++m_generation;
    m_deriving = true;
    auto *watcher = new QFutureWatcher<std::shared_ptr<const LiveViewData>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_generation)
            return; // overtaken by a newer flush, scope or thread choice
        m_deriving = false;
        Q_EMIT viewReady(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([path = m_path, frequency = m_frequency, state = m_state, scope = m_scope,
                                          selection, trees = m_trees] {
        return deriveView(path, frequency, state, scope, selection, trees);
    }));
}

} // namespace emberline::ui
