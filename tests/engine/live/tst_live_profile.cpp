// The live accumulator (LiveProfile) and its derivations (selection weights, activity buckets) on synthetic
// flushes, where every number is known.
#include "tests/engine/live/synthetic_flush.h"

#include "engine/live/live_profile.h"
#include "engine/live/live_selection.h"
#include "engine/model/sample_filter.h"

#include <QTest>

using namespace emberline::engine;
using emberline::test::syntheticFlush;

class TestLiveProfile : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Two synthetic flushes (thread 7 then thread 9, 100 samples each, two stacks): the aggregated profile has
    // 4 samples (2 stacks x 2 threads) without timestamps or thread names (the threads' names are kept once each), the timeline has 200 entries at 6 bytes each, and a
    // range over the first flush weighs thread 7 fully and thread 9 not at all. If this fails, the time-range
    // views or the memory bound of live sessions are wrong.
    void liveProfileAggregatesAndSelectsByTime()
    {
        LiveProfile live;
        const int64_t t0 = 1'700'000'000'000'000'000;
        QVERIFY(live.add(*syntheticFlush(1, t0, 100, 7)).ok());
        QVERIFY(live.add(*syntheticFlush(2, t0 + 1'000'000'000, 100, 9)).ok());
        const auto snap = live.snapshot();
        QCOMPARE(snap->profile->sampleCount(), size_t(4));
        for (size_t i = 0; i < snap->profile->sampleCount(); ++i)
            QCOMPARE(snap->profile->sampleLabels(i).size(), size_t(1)); // thread id; no timestamp, no name
        QCOMPARE(snap->timelineSamples(), size_t(200));
        QCOMPARE(snap->threads.size(), size_t(2));
        QCOMPARE(snap->threads[0].name, std::string("worker-7"));
        QCOMPARE(snap->chunks[1]->samples, uint64_t(100));

        LiveSelection first;
        first.startNs = t0;
        first.endNs = t0 + 1'000'000'000;
        const auto weights = selectionWeights(*snap, first);
        for (size_t i = 0; i < weights.size(); ++i)
            QCOMPARE(weights[i], snap->sampleThread()[i] == 0 ? 1.0f : 0.0f);

        LiveSelection half = first; // the first half of flush 1: 50 of its 100 samples
        half.endNs = t0 + 500'000'000;
        const auto halfWeights = selectionWeights(*snap, half);
        double kept = 0;
        for (size_t i = 0; i < halfWeights.size(); ++i)
            kept += halfWeights[i] * snap->sampleHits()[i];
        QCOMPARE(qRound(kept), 50);

        LiveSelection hidden;
        hidden.hiddenThreads = {1};
        const auto hiddenWeights = selectionWeights(*snap, hidden);
        for (size_t i = 0; i < hiddenWeights.size(); ++i)
            QCOMPARE(hiddenWeights[i], snap->sampleThread()[i] == 1 ? 0.0f : 1.0f);
    }

    // Snapshots share their profile's sample chunks with the live aggregate, which copies a chunk before it
    // writes one a snapshot still holds: a snapshot held across later flushes must stay as it was, and every snapshot's columns must agree
    // with its profile and timeline. If this fails, a view reads columns of another flush than its profile's
    // (wrong threads, CPU or range weights), or a held snapshot changes under a view.
    void snapshotsStayConsistentWhileTheAggregateGrows()
    {
        const auto check = [](const LiveSnapshot &snap) {
            const Profile &p = *snap.profile;
            QCOMPARE(snap.sampleThread().size(), p.sampleCount());
            QCOMPARE(snap.sampleHits().size(), p.sampleCount());
            QCOMPARE(snap.sampleCpuNs().size(), p.sampleCount());
            QCOMPARE(snap.totals, p.totals());
            std::vector<uint32_t> hits(p.sampleCount(), 0);
            for (const auto &chunk : snap.chunks) {
                for (uint32_t agg : chunk->sample)
                    hits.at(agg)++;
            }
            const StringId tidKey = p.findString("thread id");
            for (size_t i = 0; i < p.sampleCount(); ++i) {
                QCOMPARE(snap.sampleHits()[i], hits[i]);
                QCOMPARE(snap.sampleCpuNs()[i], p.sampleValues(i)[1]);
                QCOMPARE(snap.threads.at(snap.sampleThread()[i]).tid, p.sampleLabels(i)[0].num);
                QCOMPARE(p.sampleLabels(i)[0].key, tidKey);
            }
            // The session's values per stack, kept flush by flush, are the aggregated profile's.
            for (int t = 0; t < int(p.sampleTypes().size()); ++t) {
                const std::span<const int64_t> kept = snap.stackValues(t);
                const std::vector<int64_t> computed = valuesPerStack(p, t, {});
                QVERIFY(std::equal(kept.begin(), kept.end(), computed.begin(), computed.end()));
            }
            QVERIFY(snap.stackValues(int(p.sampleTypes().size())).empty());
        };
        // Every stack whose value changed since the previous snapshot is named as changed since its flush count.
        // (Values copied, not the snapshot held.)
        const auto checkChanged = [](uint32_t wasFlushes, const std::vector<int64_t> &was, const LiveSnapshot &after) {
            const std::vector<uint32_t> changed = after.stacksChangedSince(wasFlushes);
            QVERIFY(!changed.empty());
            const std::span<const int64_t> now = after.stackValues(0);
            for (uint32_t s = 0; s < now.size(); ++s) {
                if (s >= was.size() || was[s] != now[s])
                    QVERIFY2(std::binary_search(changed.begin(), changed.end(), s), qPrintable(QString::number(s)));
            }
            QVERIFY(after.stacksChangedSince(after.flushes).empty());
        };
        LiveProfile live;
        const int64_t t0 = 1'700'000'000'000'000'000;
        std::vector<std::pair<std::shared_ptr<const LiveSnapshot>, size_t>> held; // with its sample count then
        std::vector<int64_t> previous; // the last snapshot's values per stack
        for (uint32_t f = 1; f <= 9; ++f) {
            const int64_t tid = 7 + f % 3;
            QVERIFY(live.add(syntheticFlush(f, t0 + f * 1'000'000'000LL, 20 + int(f) * 7, tid)).ok());
            auto snap = live.snapshot();
            check(*snap);
            if (f > 1)
                checkChanged(f - 1, previous, *snap);
            previous.assign(snap->stackValues(0).begin(), snap->stackValues(0).end());
            if (f % 3 != 1) // most snapshots are dropped before the next flush; some are held (shared chunks copied)
                held.emplace_back(snap, snap->timelineSamples());
            if (f == 5)
                held.erase(held.begin()); // a held one let go: the aggregate writes its chunks in place again
        }
        for (const auto &[snap, samples] : held) {
            QCOMPARE(snap->timelineSamples(), samples);
            check(*snap);
        }
        QCOMPARE(live.snapshot()->timelineSamples(), size_t(9 * 20 + 7 * 45));
    }

    // CPU per thread in 250 ms buckets: thread 7 is on CPU 100% in the first second, thread 9 in the second.
    // If this fails, the CPU timeline shows wrong values.
    void activityBucketsGiveCpuPerThread()
    {
        LiveProfile live;
        const int64_t t0 = 1'700'000'000'000'000'000;
        QVERIFY(live.add(*syntheticFlush(1, t0, 100, 7)).ok());
        QVERIFY(live.add(*syntheticFlush(2, t0 + 1'000'000'000, 100, 9)).ok());
        const ThreadActivity a = bucketActivity(*live.snapshot(), 250'000'000);
        QCOMPARE(a.bucketCount, size_t(8));
        QCOMPARE(qRound(a.cpuPercent(0, 1)), 100);
        QCOMPARE(qRound(a.cpuPercent(1, 1)), 0);
        QCOMPARE(qRound(a.cpuPercent(1, 6)), 100);
        QCOMPARE(a.bucketAt(t0 + 600'000'000), size_t(2));
        QCOMPARE(chooseBucketNs(2'000'000'000, 400, 0), int64_t(50'000'000));
        QCOMPARE(chooseBucketNs(2'000'000'000, 400, 200'000'000), int64_t(250'000'000));
        QCOMPARE(chooseBucketNs(1800'000'000'000, 400, 0), int64_t(5'000'000'000)); // 30 minutes: 5 s < a flush
    }
};

QTEST_GUILESS_MAIN(TestLiveProfile)
#include "tst_live_profile.moc"
