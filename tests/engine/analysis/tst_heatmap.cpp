// The sub-second heatmap's bucketing (engine/analysis/heatmap.h) against hand-made timestamps whose cells are known:
// bucket boundaries, samples before the start, empty seconds, profiles without timestamps, the thread filter and
// sample types, cell ranges as time ranges, and a live session's heatmap grown flush by flush (LiveHeatmap).

#include "tests/engine/live/synthetic_flush.h"
#include "tests/engine/test_support.h"

#include "engine/analysis/heatmap.h"
#include "engine/live/live_profile.h"
#include "engine/model/sample_filter.h"
#include "engine/stage/live_heatmap.h"

#include <QTest>

using namespace emberline;
using namespace emberline::engine;

namespace {

constexpr int64_t kStart = 1'700'000'000'000'000'000; // a whole second
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;

// Samples (thread, time after kStart, cpu-time): main(1) 5 ms 7, worker(2) 25 ms 11, main(1) 1.5 s 13,
// worker(2) 3.02 s 17, one without labels 19.
Profile timedProfile(bool withTimestamps = true)
{
    test::ProfileBuilder b({{"cpu-samples", "count"}, {"cpu-time", "nanoseconds"}});
    const uint32_t loc = b.location({b.function("work", "work.c")});
    auto labels = [&](int64_t tid, const char *name, int64_t offsetNs) {
        std::vector<Label> l{b.numLabel("thread id", tid), b.strLabel("thread name", name)};
        if (withTimestamps)
            l.push_back(b.numLabel("end_timestamp_ns", kStart + offsetNs));
        return l;
    };
    b.sample({loc}, {1, 7}, labels(1, "main", 5 * kMs));
    b.sample({loc}, {1, 11}, labels(2, "worker", 25 * kMs));
    b.sample({loc}, {1, 13}, labels(1, "main", 1500 * kMs));
    b.sample({loc}, {1, 17}, labels(2, "worker", 3020 * kMs));
    b.sample({loc}, {1, 19});
    Profile p = b.take();
    p.timeNanos = kStart;
    return p;
}

// Every cell of a heatmap, for comparing two of them.
std::vector<int64_t> cellsOf(const Heatmap &h)
{
    std::vector<int64_t> cells;
    for (size_t c = 0; c < h.columns(); ++c) {
        const auto column = h.column(c);
        cells.insert(cells.end(), column.begin(), column.end());
    }
    return cells;
}

// The heatmap of flushes built directly from their samples' own end_timestamp_ns labels, one per sample.
Heatmap fromLabels(const std::vector<std::shared_ptr<const Flush>> &flushes, int64_t skipTid = -1)
{
    Heatmap h(flushes.front()->startNs);
    for (const auto &flush : flushes) {
        const Profile &p = *flush->profile;
        const std::vector<int64_t> times = sampleTimestamps(p);
        const StringId tidKey = p.findString("thread id");
        for (size_t i = 0; i < p.sampleCount(); ++i) {
            int64_t tid = 0;
            for (const Label &l : p.sampleLabels(i))
                tid = l.key == tidKey ? l.num : tid;
            if (tid != skipTid)
                h.add(times[i], 1);
        }
    }
    h.extendTo(flushes.back()->endNs);
    return h;
}

} // namespace

class TestHeatmap : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A sample exactly on a bucket's start belongs to that bucket, one a nanosecond earlier to the one before; a
    // second's last nanosecond is its bottom row and the next second starts a new column. If this fails, samples
    // land one cell off at the boundaries and the picture shifts by 20 ms.
    void bucketBoundaries()
    {
        Heatmap h(kStart);
        QCOMPARE(h.rows(), 50);
        QCOMPARE(h.rowNs(), 20 * kMs);
        h.add(kStart, 1);                            // column 0, row 0
        h.add(kStart + 20 * kMs - 1, 2);             // still row 0
        h.add(kStart + 20 * kMs, 4);                 // row 1
        h.add(kStart + kSecond - 1, 8);              // row 49
        h.add(kStart + kSecond, 16);                 // column 1, row 0
        h.add(kStart + 2 * kSecond + 990 * kMs, 32); // column 2, row 49
        QCOMPARE(h.columns(), size_t(3));
        QCOMPARE(h.value(0, 0), int64_t(3));
        QCOMPARE(h.value(0, 1), int64_t(4));
        QCOMPARE(h.value(0, 49), int64_t(8));
        QCOMPARE(h.value(1, 0), int64_t(16));
        QCOMPARE(h.value(2, 49), int64_t(32));
        QCOMPARE(h.value(1, 1), int64_t(0));
        QCOMPARE(h.maxValue(), int64_t(32));
        QCOMPARE(h.total(), int64_t(63));
        QCOMPARE(h.timedSamples(), uint64_t(6));
    }

    // A sample before the start is counted, not placed, and does not grow the grid; one more than a day after the
    // start is counted too. If this fails, early samples wrap into the wrong cells or a bogus timestamp allocates
    // an enormous grid.
    void samplesOutsideTheGrid()
    {
        Heatmap h(kStart);
        h.add(kStart - 1, 5);
        QCOMPARE(h.beforeStart(), uint64_t(1));
        QCOMPARE(h.columns(), size_t(0));
        QVERIFY(!h.hasTimestamps());
        h.add(kStart + static_cast<int64_t>(Heatmap::kMaxColumns) * kSecond, 5);
        QCOMPARE(h.pastLimit(), uint64_t(1));
        QCOMPARE(h.columns(), size_t(0));
        QCOMPARE(h.total(), int64_t(0));
    }

    // Seconds without samples between two busy ones are empty columns, and extendTo adds trailing empty seconds.
    // If this fails, a pause in the program disappears from the picture and later seconds shift left.
    void gapOfEmptySeconds()
    {
        Heatmap h(kStart);
        h.add(kStart + 500 * kMs, 1);
        h.add(kStart + 4 * kSecond + 500 * kMs, 1);
        QCOMPARE(h.columns(), size_t(5));
        for (size_t c = 1; c <= 3; ++c) {
            for (int r = 0; r < h.rows(); ++r)
                QCOMPARE(h.value(c, r), int64_t(0));
        }
        QCOMPARE(h.value(0, 25), int64_t(1));
        QCOMPARE(h.value(4, 25), int64_t(1));
        h.extendTo(kStart + 7 * kSecond); // up to the last nanosecond of second 6
        QCOMPARE(h.columns(), size_t(7));
        h.extendTo(kStart + 7 * kSecond + 1);
        QCOMPARE(h.columns(), size_t(8));
    }

    // Other row counts divide the second evenly.
    void otherRowCounts()
    {
        Heatmap h(kStart, 10);
        QCOMPARE(h.rowNs(), 100 * kMs);
        h.add(kStart + 250 * kMs, 3);
        QCOMPARE(h.value(0, 2), int64_t(3));
    }

    // A profile: samples counted by default, a sample type's values on request, the thread filter honoured, the
    // sample without a timestamp counted apart. If this fails, the heatmap disagrees with the views it filters.
    void profileSamplesTypesAndThreads()
    {
        const Profile p = timedProfile();
        const ThreadIndex threads(p);
        auto counts = profileHeatmap(p, &threads, {});
        QVERIFY(counts.ok());
        QCOMPARE(counts->startNs(), kStart);
        QCOMPARE(counts->columns(), size_t(4));
        QCOMPARE(counts->value(0, 0), int64_t(1));
        QCOMPARE(counts->value(0, 1), int64_t(1));
        QCOMPARE(counts->value(1, 25), int64_t(1));
        QCOMPARE(counts->value(3, 1), int64_t(1));
        QCOMPARE(counts->total(), int64_t(4));
        QCOMPARE(counts->untimed(), uint64_t(1));

        HeatmapRequest cpu;
        cpu.sampleType = 1;
        auto values = profileHeatmap(p, &threads, cpu);
        QVERIFY(values.ok());
        QCOMPARE(values->value(0, 0), int64_t(7));
        QCOMPARE(values->value(3, 1), int64_t(17));
        QCOMPARE(values->maxValue(), int64_t(17));

        HeatmapRequest workerOnly;
        for (uint32_t t = 0; t < threads.threads().size(); ++t) {
            if (threads.threads()[t].name == "worker")
                workerOnly.threads.push_back(t);
        }
        QCOMPARE(workerOnly.threads.size(), size_t(1));
        auto worker = profileHeatmap(p, &threads, workerOnly);
        QVERIFY(worker.ok());
        QCOMPARE(worker->total(), int64_t(2));
        QCOMPARE(worker->value(0, 0), int64_t(0));
        QCOMPARE(worker->value(0, 1), int64_t(1));
        QCOMPARE(worker->value(3, 1), int64_t(1));
    }

    // A profile whose samples carry no timestamps has nothing to show, and says so.
    void profileWithoutTimestamps()
    {
        const Profile p = timedProfile(false);
        const ThreadIndex threads(p);
        auto h = profileHeatmap(p, &threads, {});
        QVERIFY(h.ok());
        QVERIFY(!h->hasTimestamps());
        QCOMPARE(h->columns(), size_t(0));
        QCOMPARE(h->untimed(), uint64_t(5));
    }

    // Timestamps two days apart are refused with a clear error instead of a grid of 170,000 seconds.
    void timestampsSpreadTooFar()
    {
        test::ProfileBuilder b({{"cpu-samples", "count"}});
        const uint32_t loc = b.location({b.function("f")});
        b.sample({loc}, {1}, {b.numLabel("end_timestamp_ns", kStart)});
        b.sample({loc}, {1}, {b.numLabel("end_timestamp_ns", kStart + kSecond * 2 * 86'400)});
        const Profile p = b.take();
        auto h = profileHeatmap(p, nullptr, {});
        QVERIFY(!h.ok());
        QCOMPARE(h.error().code, Error::Code::Limit);
        QVERIFY(h.error().message.find("48 hours") != std::string::npos);
    }

    // Dragging from one cell to another, in either direction, is the time from the earlier cell's start to the
    // later cell's end (column-major time order); sums over such a range are exact. If this fails, the range that
    // filters the views differs from the highlighted cells.
    void cellRangesAreTimeRanges()
    {
        Heatmap h(kStart);
        for (int64_t t = 0; t < 3 * kSecond; t += 10 * kMs)
            h.add(kStart + t, 1); // two per cell
        const HeatmapCell a{0, 48};
        const HeatmapCell b{1, 2};
        const TimeRange forward = h.rangeBetween(a, b);
        QCOMPARE(forward.startNs, kStart + 960 * kMs);
        QCOMPARE(forward.endNs, kStart + kSecond + 60 * kMs);
        QCOMPARE(h.rangeBetween(b, a), forward);
        QCOMPARE(h.sumIn(forward), int64_t(2 * 5)); // rows 48, 49 of second 0 and rows 0-2 of second 1
        QCOMPARE(h.rangeBetween(a, a), (TimeRange{kStart + 960 * kMs, kStart + 980 * kMs}));
        QVERIFY(Heatmap::isBetween({0, 49}, b, a));
        QVERIFY(Heatmap::isBetween({1, 0}, a, b));
        QVERIFY(!Heatmap::isBetween({0, 47}, a, b));
        QVERIFY(!Heatmap::isBetween({1, 3}, a, b));
        QCOMPARE(h.cellAt(kStart + kSecond + 59 * kMs), (HeatmapCell{1, 2}));
        QCOMPARE(h.cellAt(kStart + 100 * kSecond), (HeatmapCell{2, 49})); // clamped to the last cell
        QCOMPARE(h.sumIn({kStart, kStart + 3 * kSecond}), h.total());
    }

    // A live session's heatmap grows with each flush by bucketing only the new flush, and equals the heatmap of
    // the flushes' own sample timestamps; hiding a thread buckets it again without that thread. If this fails,
    // the live heatmap drifts from the samples, or every flush re-walks the whole session.
    void liveHeatmapGrowsFlushByFlush()
    {
        std::vector<std::shared_ptr<const Flush>> flushes = {
            test::syntheticFlush(1, kStart, 100, 7),
            test::syntheticFlush(2, kStart + kSecond, 100, 9),
            test::syntheticFlush(3, kStart + 2 * kSecond, 150, 7),
        };
        LiveProfile live;
        LiveHeatmap heatmap;
        std::shared_ptr<const Heatmap> previous;
        for (size_t i = 0; i < flushes.size(); ++i) {
            QVERIFY(live.add(flushes[i]).ok());
            const auto snapshot = live.snapshot();
            const auto shown = heatmap.update(*snapshot, {});
            QVERIFY(shown != previous);
            const Heatmap expected = fromLabels({flushes.begin(), flushes.begin() + static_cast<long>(i) + 1});
            QCOMPARE(shown->columns(), expected.columns());
            QCOMPARE(cellsOf(*shown), cellsOf(expected));
            QCOMPARE(heatmap.update(*snapshot, {}), shown); // nothing new: the same grid
            previous = shown;
        }
        QCOMPARE(previous->total(), int64_t(350));
        QCOMPARE(heatmap.rebucketedChunks(), uint64_t(0));
        QCOMPARE(previous->startNs(), kStart);

        const auto snapshot = live.snapshot();
        uint32_t thread7 = kNoIndex;
        for (uint32_t t = 0; t < snapshot->threads.size(); ++t)
            thread7 = snapshot->threads[t].tid == 7 ? t : thread7;
        QVERIFY(thread7 != kNoIndex);
        const auto without7 = heatmap.update(*snapshot, {thread7});
        QCOMPARE(without7->total(), int64_t(100));
        QCOMPARE(cellsOf(*without7), cellsOf(fromLabels(flushes, 7)));
        QCOMPARE(heatmap.rebucketedChunks(), uint64_t(3));
    }
};

QTEST_GUILESS_MAIN(TestHeatmap)
#include "tst_heatmap.moc"
