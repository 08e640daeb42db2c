// A memory session's flushes in the live aggregate (LiveProfile): what was allocated adds up flush by flush, what is
// in use is the newest flush's snapshot (each flush carries the whole live heap again), memory samples stay off the
// timeline of samples, and a time range or one flush gets its own memory (memoryOverlay).
#include "tests/engine/live/synthetic_flush.h"
#include "tests/engine/live/synthetic_memory_flush.h"

#include "engine/live/live_profile.h"
#include "engine/live/live_selection.h"
#include "engine/model/sample_filter.h"
#include "engine/stage/live_heatmap.h"

#include <QTest>

#include <map>

using namespace emberline::engine;
using emberline::test::heapStoryFlush;
using emberline::test::MemoryRow;
using emberline::test::syntheticMemoryFlush;

namespace live_memory_test {

constexpr int64_t kSecond = 1'000'000'000;
enum Type { CpuSamples, CpuTime, AllocSamples, AllocSpace, InuseObjects, InuseSpace };

std::string leafOf(const Profile &p, uint32_t stack)
{
    const uint32_t location = p.stacks().stack(stack)[0];
    return p.str(p.functions()[p.locations()[location].lines[0].functionIndex].name);
}

// Per leaf function, the values of one type: from the aggregate's samples and from the kept values per stack (the two
// must agree), leaves of value 0 left out.
std::map<std::string, int64_t> byLeaf(const LiveSnapshot &snap, int type)
{
    const Profile &p = *snap.profile;
    std::map<std::string, int64_t> fromSamples, fromStacks;
    const std::vector<int64_t> perStack = valuesPerStack(p, type, {});
    for (uint32_t s = 0; s < perStack.size(); ++s) {
        if (perStack[s] != 0)
            fromSamples[leafOf(p, s)] += perStack[s];
    }
    const std::span<const int64_t> kept = snap.stackValues(type);
    for (uint32_t s = 0; s < kept.size(); ++s) {
        if (kept[s] != 0)
            fromStacks[leafOf(p, s)] += kept[s];
    }
    if (fromSamples != fromStacks)
        qWarning("the samples and the values per stack disagree");
    return fromSamples == fromStacks ? fromSamples : std::map<std::string, int64_t>{};
}

std::map<std::string, int64_t> byLeaf(const LiveSnapshot &snap, const SampleOverlay &overlay, int type)
{
    std::map<std::string, int64_t> out;
    const std::vector<int64_t> perStack = overlay.valuesPerStack(*snap.profile, type, {});
    for (uint32_t s = 0; s < perStack.size(); ++s) {
        if (perStack[s] != 0)
            out[leafOf(*snap.profile, s)] += perStack[s];
    }
    return out;
}

using Leaves = std::map<std::string, int64_t>;

} // namespace live_memory_test

using namespace live_memory_test;

class TestLiveMemory : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void inUseIsTheNewestSnapshotAndAllocationsAddUp()
    {
        LiveProfile live;
        QVERIFY(live.add(heapStoryFlush(1)));
        QVERIFY(live.add(heapStoryFlush(2)));
        auto snap = live.snapshot();
        // Summed, in-use would be 630 B: every flush's live heap counted again.
        QCOMPARE(byLeaf(*snap, InuseSpace), (Leaves{{"a", 30}, {"c", 300}}));
        QCOMPARE(byLeaf(*snap, InuseObjects), (Leaves{{"a", 1}, {"c", 3}}));
        QCOMPARE(byLeaf(*snap, AllocSpace), (Leaves{{"a", 250}, {"b", 100}, {"c", 300}}));
        QCOMPARE(byLeaf(*snap, AllocSamples), (Leaves{{"a", 3}, {"b", 1}, {"c", 3}}));
        QCOMPARE(snap->totals, (std::vector<int64_t>{20, 200'000'000, 7, 650, 4, 330}));
        QCOMPARE(snap->memoryTypes, (std::vector<int>{AllocSamples, AllocSpace, InuseObjects, InuseSpace}));
        QCOMPARE(snap->memorySnapshots, (std::vector<uint8_t>{0, 0, 1, 1}));

        // A snapshot taken before keeps its values while the next flush replaces them (copy on write).
        QVERIFY(live.add(heapStoryFlush(3)));
        auto next = live.snapshot();
        QCOMPARE(byLeaf(*next, InuseSpace), (Leaves{{"a", 30}, {"d", 1000}}));
        QCOMPARE(next->totals[InuseSpace], int64_t(1030));
        QCOMPARE(next->totals[AllocSpace], int64_t(1650));
        QCOMPARE(byLeaf(*snap, InuseSpace), (Leaves{{"a", 30}, {"c", 300}}));
        // A snapshot of the shown type alone holds the same values.
        QCOMPARE(byLeaf(*live.snapshot(InuseSpace), InuseSpace), (Leaves{{"a", 30}, {"d", 1000}}));
    }

    void memorySamplesAreKeptPerFlushNotOnTheTimeline()
    {
        LiveProfile live;
        QVERIFY(live.add(heapStoryFlush(1)));
        QVERIFY(live.add(heapStoryFlush(2)));
        auto snap = live.snapshot();
        // Only the CPU samples are entries: memory samples at each flush's end would show as a burst of samples there.
        QCOMPARE(snap->timelineSamples(), size_t(20));
        QCOMPARE(snap->chunks[0]->memory.rows(), size_t(2));
        QCOMPARE(snap->chunks[1]->memory.rows(), size_t(2));
        QCOMPARE(snap->threads.at(0).hits, uint64_t(20));
        LiveHeatmap heatmap;
        QCOMPARE(heatmap.update(*snap, {})->total(), int64_t(20));
        const ThreadActivity activity = bucketActivity(*snap, live.sampleHits(), kSecond);
        uint32_t samples = 0;
        for (uint32_t n : activity.samples.at(0))
            samples += n;
        QCOMPARE(samples, 20u);
        // A flush's rows, as packed: leaf b of flush 1 holds 1 object of 100 B.
        std::map<std::string, std::vector<int64_t>> rows;
        snap->chunks[0]->memory.forEach([&](uint32_t sample, std::span<const int64_t> values) {
            rows[leafOf(*snap->profile, snap->profile->sampleStackId(sample))].assign(values.begin(), values.end());
        });
        QCOMPARE(rows["b"], (std::vector<int64_t>{1, 100, 1, 100}));
        QCOMPARE(rows["a"], (std::vector<int64_t>{2, 200, 2, 200}));
    }

    void aTimeRangeHoldsItsFlushesMemory()
    {
        LiveProfile live;
        for (int n = 1; n <= 3; ++n)
            QVERIFY(live.add(heapStoryFlush(n)));
        auto snap = live.snapshot();
        LiveSelection first;
        first.startNs = 1 * kSecond;
        first.endNs = 2 * kSecond;
        auto overlay = memoryOverlay(*snap, first);
        QVERIFY(overlay);
        QCOMPARE(byLeaf(*snap, *overlay, InuseSpace), (Leaves{{"a", 200}, {"b", 100}}));
        QCOMPARE(byLeaf(*snap, *overlay, AllocSpace), (Leaves{{"a", 200}, {"b", 100}}));

        // Flushes 1 and 2 end in the range: their allocations add up; in use is as of flush 2's end.
        LiveSelection two;
        two.startNs = 1'500'000'000;
        two.endNs = 3 * kSecond;
        overlay = memoryOverlay(*snap, two);
        QCOMPARE(byLeaf(*snap, *overlay, InuseSpace), (Leaves{{"a", 30}, {"c", 300}}));
        QCOMPARE(byLeaf(*snap, *overlay, AllocSpace), (Leaves{{"a", 250}, {"b", 100}, {"c", 300}}));
        std::vector<int64_t> totals(6, -1);
        overlay->replaceTotals(totals);
        QCOMPARE(totals, (std::vector<int64_t>{-1, -1, 7, 650, 4, 330}));

        // A range without a flush's end holds no memory.
        LiveSelection inside;
        inside.startNs = 2'200'000'000;
        inside.endNs = 2'800'000'000;
        QVERIFY(memoryOverlay(*snap, inside)->samples.empty());

        // One flush alone: flush 2 allocated 350 B and held 330 B at its end.
        overlay = flushMemoryOverlay(*snap, *snap->chunks[1], {});
        QCOMPARE(byLeaf(*snap, *overlay, AllocSpace), (Leaves{{"a", 50}, {"c", 300}}));
        QCOMPARE(byLeaf(*snap, *overlay, InuseSpace), (Leaves{{"a", 30}, {"c", 300}}));
    }

    void hiddenThreadsHoldNoMemory()
    {
        LiveProfile live;
        QVERIFY(live.add(syntheticMemoryFlush(1, kSecond, {{"a", 1, 10, 1, 10, 7}, {"b", 1, 20, 1, 20, 8}}, 1)));
        auto snap = live.snapshot();
        QCOMPARE(snap->threads.size(), size_t(2));
        const uint32_t thread8 = snap->threads[0].tid == 8 ? 0 : 1;
        LiveSelection selection;
        selection.startNs = 0;
        selection.endNs = 10 * kSecond;
        selection.hiddenThreads = {thread8};
        QCOMPARE(byLeaf(*snap, *memoryOverlay(*snap, selection), InuseSpace), (Leaves{{"a", 10}}));
        // A session without memory types has no overlay.
        LiveProfile cpu;
        QVERIFY(cpu.add(emberline::test::syntheticFlush(1, kSecond, 5, 7)));
        QVERIFY(cpu.snapshot()->memoryTypes.empty());
        QVERIFY(!memoryOverlay(*cpu.snapshot(), selection));
    }

    void changedStacksNameWhatTheNewestSnapshotFreed()
    {
        // The call trees are updated from the stacks that changed since their last update: a stack freed between two
        // snapshots (b, in flush 2) changed although flush 2 does not name it.
        LiveProfile live;
        QVERIFY(live.add(heapStoryFlush(1)));
        QVERIFY(live.add(heapStoryFlush(2)));
        auto snap = live.snapshot();
        std::vector<std::string> leaves;
        for (uint32_t stack : snap->stacksChangedSince(1))
            leaves.push_back(leafOf(*snap->profile, stack));
        std::sort(leaves.begin(), leaves.end());
        QCOMPARE(leaves, (std::vector<std::string>{"a", "b", "c", "work"}));
    }
};

QTEST_GUILESS_MAIN(TestLiveMemory)
#include "tst_live_memory.moc"
