// The live stage on a memory session's hand-made flushes: the views' in-use values are the newest snapshot (the call
// tree kept up to date flush by flush drops what was freed), a time range or the last flush shows its own memory, and
// comparing in-use space with the previous or a pinned flush is the live heap's diff between the two snapshots.
#include "engine/stage/live_stage.h"
#include "tests/engine/stage/last_update.h"

#include "tests/engine/live/synthetic_memory_flush.h"

#include <QTest>

#include <mutex>

using namespace emberline;
using namespace emberline::engine;
using emberline::test::heapStoryFlush;
using emberline::test::LastUpdate;
using emberline::test::syntheticMemoryFlush;

namespace live_stage_memory_test {

constexpr int64_t kSecond = 1'000'000'000;
enum Type { CpuSamples, CpuTime, AllocSamples, AllocSpace, InuseObjects, InuseSpace };

int64_t selfOf(const LiveUpdate &u, const char *name)
{
    for (const FunctionTable::Row &row : u.analysis->functions->rows())
        if (u.loaded->frames->frame(row.frame).name == name)
            return row.self;
    return 0;
}

DiffFunction functionOf(const Comparison &c, const char *name)
{
    for (const DiffFunction &row : c.functions)
        if (c.frames->frame(row.frame).name == name)
            return row;
    return DiffFunction{0, 0, 0, 0, 0};
}

std::shared_ptr<const LiveUpdate> answer(LiveStage &stage, LastUpdate &last, LiveViewRequest request)
{
    const uint64_t generation = stage.setView(std::move(request));
    stage.waitUntilIdle();
    auto u = last.get();
    return u && u->generation == generation ? u : nullptr;
}

} // namespace live_stage_memory_test

using namespace live_stage_memory_test;

class TestLiveStageMemory : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void wholeSessionShowsTheNewestSnapshot()
    {
        LastUpdate last;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, last.callback());
        LiveViewRequest inuse;
        inuse.sampleType = InuseSpace;
        stage.setView(inuse);
        // One update per flush, so that the second one updates the call tree from the stacks that changed.
        stage.addFlush(heapStoryFlush(1));
        stage.waitUntilIdle();
        auto u = last.get();
        QVERIFY(u && u->analysis);
        QCOMPARE(u->analysis->tree->total(), int64_t(300));
        QCOMPARE(selfOf(*u, "b"), int64_t(100));
        stage.addFlush(heapStoryFlush(2));
        stage.waitUntilIdle();
        u = last.get();
        // b was freed: a tree that kept it (or summed the snapshots, 630 B) shows memory no longer in use.
        QCOMPARE(u->analysis->tree->total(), int64_t(330));
        QCOMPARE(selfOf(*u, "a"), int64_t(30));
        QCOMPARE(selfOf(*u, "b"), int64_t(0));
        QCOMPARE(selfOf(*u, "c"), int64_t(300));
        QCOMPARE(u->loaded->totals[InuseSpace], int64_t(330));
        QCOMPARE(u->loaded->totals[AllocSpace], int64_t(650));
        // The thread timeline and heatmap count the CPU samples alone.
        QCOMPARE(u->heatmap->total(), int64_t(20));
    }

    void aRangeShowsTheSnapshotOfItsLastFlush()
    {
        LastUpdate last;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, last.callback());
        for (int n = 1; n <= 3; ++n)
            stage.addFlush(heapStoryFlush(n));
        stage.waitUntilIdle();
        LiveViewRequest range;
        range.scope = LiveScope::SelectedRange;
        range.rangeStartNs = 1 * kSecond;
        range.rangeEndNs = 2'500'000'000; // flush 1's end only
        range.sampleType = InuseSpace;
        auto u = answer(stage, last, range);
        QVERIFY(u && u->analysis);
        QCOMPARE(u->analysis->tree->total(), int64_t(300));
        QCOMPARE(selfOf(*u, "b"), int64_t(100)); // freed since, but in use at the range's end
        QCOMPARE(u->loaded->totals[InuseSpace], int64_t(300));
        QCOMPARE(u->loaded->totals[AllocSpace], int64_t(300));
        // CPU samples go by their own times: flush 2's, 2.01–2.1 s, are in the range too.
        QCOMPARE(u->loaded->totals[CpuSamples], int64_t(20));

        range.rangeEndNs = 3 * kSecond; // flushes 1 and 2: allocations add up, in use as of flush 2's end
        range.sampleType = AllocSpace;
        u = answer(stage, last, range);
        QCOMPARE(u->analysis->tree->total(), int64_t(650));
        QCOMPARE(u->loaded->totals[InuseSpace], int64_t(330));

        LiveViewRequest lastFlush;
        lastFlush.scope = LiveScope::LastFlush;
        lastFlush.sampleType = InuseSpace;
        u = answer(stage, last, lastFlush);
        QCOMPARE(u->analysis->tree->total(), int64_t(1030));
        QCOMPARE(selfOf(*u, "c"), int64_t(0));
        QCOMPARE(u->loaded->totals[AllocSpace], int64_t(1000));
    }

    void comparingInUseSpaceIsTheHeapDiff()
    {
        LastUpdate last;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, last.callback());
        LiveViewRequest previous;
        previous.sampleType = InuseSpace;
        previous.compare.mode = LiveCompareMode::PreviousFlush;
        stage.setView(previous);
        stage.addFlush(heapStoryFlush(1));
        stage.addFlush(heapStoryFlush(2));
        stage.waitUntilIdle();
        auto u = last.get();
        QVERIFY(u && u->comparison.comparison);
        const Comparison *c = u->comparison.comparison.get();
        QCOMPARE(c->baseTotal, int64_t(300));
        QCOMPARE(c->newTotal, int64_t(330));
        QCOMPARE(functionOf(*c, "a").selfChange(), int64_t(-170));
        QCOMPARE(functionOf(*c, "b").selfChange(), int64_t(-100));
        QCOMPARE(functionOf(*c, "c").selfChange(), int64_t(300));

        // The whole session against pinned flush 1, after flush 3: what grew since flush 1's end.
        LiveViewRequest pinned;
        pinned.sampleType = InuseSpace;
        pinned.compare.mode = LiveCompareMode::Baseline;
        pinned.compare.baseline.kind = LiveBaseline::Kind::Flush;
        pinned.compare.baseline.flushSequence = 1;
        stage.addFlush(heapStoryFlush(3));
        u = answer(stage, last, pinned);
        QVERIFY(u && u->comparison.comparison);
        c = u->comparison.comparison.get();
        QCOMPARE(c->baseTotal, int64_t(300));
        QCOMPARE(c->newTotal, int64_t(1030));
        QCOMPARE(functionOf(*c, "d").selfChange(), int64_t(1000));
        QCOMPARE(functionOf(*c, "c").selfChange(), int64_t(0));
        QCOMPARE(functionOf(*c, "b").selfChange(), int64_t(-100));

        // Normalized, the sides are derived from the weights and overlays rather than kept: the same values.
        pinned.compare.normalize = true;
        pinned.compare.baseline.kind = LiveBaseline::Kind::TimeRange;
        pinned.compare.baseline.startNs = 1 * kSecond;
        pinned.compare.baseline.endNs = 2 * kSecond;
        u = answer(stage, last, pinned);
        QVERIFY(u && u->comparison.comparison);
        QCOMPARE(u->comparison.comparison->baseRawTotal, int64_t(300));
    }
};

QTEST_GUILESS_MAIN(TestLiveStageMemory)
#include "tst_live_stage_memory.moc"
