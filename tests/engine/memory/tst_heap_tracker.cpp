// The live heap from sampled allocations (engine/memory/heap_tracker.h): exact mode (interval 1) counts every block
// as itself, sampled blocks carry the weight of allocation_weight.h, in-use is a full snapshot, what a flush
// allocated is taken once, an image's end turns what it held into leaks, and odd frees are counted, not fatal.
#include "engine/memory/allocation_weight.h"
#include "engine/memory/heap_tracker.h"

#include <QtTest>

using namespace emberline::engine;

namespace heap_tracker_test {

const HeapTracker::StackMemory *find(const std::vector<HeapTracker::StackMemory> &list, uint32_t pid, uint32_t stack)
{
    for (const auto &m : list)
        if (m.pid == pid && m.stack == stack)
            return &m;
    return nullptr;
}

} // namespace heap_tracker_test
using namespace heap_tracker_test;

class TestHeapTracker : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void exactModeCountsEveryBlock()
    {
        HeapTracker heap(1);
        heap.allocate(1, 100, 100, 0x1000, 64, 7);
        heap.allocate(1, 100, 100, 0x2000, 64, 7);
        heap.allocate(1, 100, 100, 0x3000, 1000, 9);
        heap.free(1, 0x2000);

        const auto live = heap.inUse();
        QCOMPARE(live.size(), size_t(2));
        QCOMPARE(find(live, 100, 7)->objects, 1.0);
        QCOMPARE(find(live, 100, 7)->bytes, 64.0);
        QCOMPARE(find(live, 100, 9)->bytes, 1000.0);

        const auto allocated = heap.takeAllocated();
        QCOMPARE(find(allocated, 100, 7)->objects, 2.0);
        QCOMPARE(find(allocated, 100, 7)->bytes, 128.0);
        QVERIFY(heap.takeAllocated().empty());    // taken once: the next flush starts from nothing
        QCOMPARE(heap.inUse().size(), size_t(2)); // in-use stays: a snapshot, not a delta

        QCOMPARE(heap.counters().liveBytes, 1064.0);
        QCOMPARE(heap.counters().peakLiveBytes, 1128.0);
        QCOMPARE(heap.counters().allocations, uint64_t(3));
        QCOMPARE(heap.counters().frees, uint64_t(1));
    }

    void sampledBlocksCarryTheirWeight()
    {
        const uint64_t interval = uint64_t(512) * 1024;
        HeapTracker heap(interval);
        heap.allocate(1, 100, 100, 0x1000, 4096, 3);
        const AllocationWeight w = weighAllocation(4096, interval);
        QVERIFY(w.count > 100); // a 4 KiB block is sampled about once in 128
        const auto live = heap.inUse();
        QCOMPARE(find(live, 100, 3)->objects, w.count);
        QCOMPARE(find(live, 100, 3)->bytes, w.bytes);
        // A block larger than many intervals is almost surely sampled: it counts about as itself.
        const AllocationWeight big = weighAllocation(uint64_t(64) << 20, interval);
        QVERIFY(std::abs(big.count - 1.0) < 1e-9);
    }

    void anImageEndTurnsWhatItHeldIntoLeaks()
    {
        HeapTracker heap(1);
        heap.allocate(1, 100, 100, 0x1000, 10, 1);
        heap.allocate(1, 100, 100, 0x2000, 20, 2);
        heap.allocate(2, 200, 200, 0x1000, 30, 1); // another process, the same address
        heap.free(1, 0x2000);
        heap.endImage(1);

        const auto leaks = heap.leaks();
        QCOMPARE(leaks.size(), size_t(1));
        QCOMPARE(find(leaks, 100, 1)->bytes, 10.0);
        QCOMPARE(heap.inUse().size(), size_t(1)); // only process 200's block is live
        QCOMPARE(find(heap.inUse(), 200, 1)->bytes, 30.0);
        QCOMPARE(heap.counters().leakedBytes, 10.0);
        QCOMPARE(heap.counters().liveBytes, 30.0);
        // A free that arrives for an ended image finds nothing: counted, not applied.
        heap.free(1, 0x1000);
        QCOMPARE(heap.counters().unknownFrees, uint64_t(1));
        QCOMPARE(heap.counters().leakedBytes, 10.0);
    }

    void oddFreesAreCounted()
    {
        HeapTracker heap(1);
        heap.free(1, 0xdead); // never allocated
        heap.allocate(1, 100, 100, 0x1000, 8, 1);
        heap.free(1, 0x1000);
        heap.free(1, 0x1000); // twice
        QCOMPARE(heap.counters().unknownFrees, uint64_t(2));
        QCOMPARE(heap.counters().frees, uint64_t(1));
        QCOMPARE(heap.liveBlocks(), size_t(0));
        QCOMPARE(heap.counters().liveBytes, 0.0);
        // An address allocated again while live (its free went around the hooks): the newer block replaces it.
        heap.allocate(1, 100, 100, 0x2000, 8, 1);
        heap.allocate(1, 100, 100, 0x2000, 16, 2);
        QCOMPARE(heap.counters().reallocated, uint64_t(1));
        QCOMPARE(heap.counters().liveBytes, 16.0);
        QCOMPARE(heap.inUse().size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestHeapTracker)
#include "tst_heap_tracker.moc"
