// AddressIndex, the sorted array of address ranges behind every "which module holds this pc" and "which file bytes
// back this address" of unwinding: what it answers at range edges, for reads that straddle two ranges, with ranges
// added out of order, and how it reports ranges that overlap.
#include "engine/unwind/address_index.h"

#include <QTest>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using emberline::engine::AddressIndex;

class TestAddressIndex : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a pc at a module's first or last byte is given to the wrong module (or none), and frames at
    // function edges are attributed to the neighbour.
    void findsTheRangeAtItsEdges()
    {
        AddressIndex<int> index;
        index.add(0x3000, 0x4000, 3);
        index.add(0x1000, 0x2000, 1); // out of order on purpose
        index.add(0x2000, 0x3000, 2); // adjacent to both
        index.build();
        QVERIFY(!index.overlaps());
        QCOMPARE(index.find(0xfff), nullptr);
        QCOMPARE(index.find(0x1000)->value, 1);
        QCOMPARE(index.find(0x1fff)->value, 1);
        QCOMPARE(index.find(0x2000)->value, 2);
        QCOMPARE(index.find(0x3fff)->value, 3);
        QCOMPARE(index.find(0x4000), nullptr);
        QCOMPARE(index.find(UINT64_MAX), nullptr);
        QCOMPARE(index.find(0), nullptr);
    }

    // If this fails, a read that crosses the end of a segment is answered from bytes that do not belong to it
    // (the next segment's file bytes are elsewhere in the file), and libunwind reads garbage unwind rules.
    void aReadMustFitInOneRange()
    {
        AddressIndex<int> index;
        index.add(0x1000, 0x1010, 1);
        index.add(0x1010, 0x1020, 2);
        index.build();
        QCOMPARE(index.find(0x1008, 8)->value, 1);
        QCOMPARE(index.find(0x100c, 8), nullptr);
        QCOMPARE(index.find(0x1010, 16)->value, 2);
        QCOMPARE(index.find(0x1018, 9), nullptr);
        QCOMPARE(index.find(0x1000, 0)->value, 1); // size 0 counts as 1
        // Sizes that would overflow the address space do not wrap around.
        AddressIndex<int> top;
        top.add(UINT64_MAX - 16, UINT64_MAX, 7);
        top.build();
        QCOMPARE(top.find(UINT64_MAX - 8, 8)->value, 7);
        QCOMPARE(top.find(UINT64_MAX - 8, 9), nullptr);
        QCOMPARE(top.find(UINT64_MAX - 8, UINT64_MAX), nullptr);
    }

    // If this fails, overlapping ranges go unnoticed and a caller that must choose among them (the process map's
    // image reads) trusts an answer that depends on sort order.
    void overlapsAreReported()
    {
        AddressIndex<int> index;
        index.add(0x1000, 0x3000, 1);
        index.add(0x2000, 0x4000, 2);
        index.build();
        QVERIFY(index.overlaps());
        AddressIndex<int> empty;
        empty.add(0x1000, 0x1000, 1); // empty: ignored
        empty.add(0x2000, 0x1000, 2); // reversed: ignored
        empty.build();
        QVERIFY(empty.empty());
        QVERIFY(!empty.overlaps());
        QCOMPARE(empty.find(0x1000), nullptr);
        index.clear();
        QVERIFY(index.empty());
        QVERIFY(!index.overlaps());
    }

    // If this fails, the binary search disagrees with the obvious linear answer somewhere in a realistic map
    // (a few hundred ranges with gaps).
    void agreesWithALinearSearch()
    {
        std::mt19937_64 random(16);
        AddressIndex<size_t> index;
        std::vector<std::pair<uint64_t, uint64_t>> ranges;
        uint64_t at = 0x400000;
        for (size_t i = 0; i < 300; ++i) {
            at += random() % 3 == 0 ? 0 : random() % 0x10000; // some adjacent, some with gaps
            const uint64_t length = 1 + random() % 0x20000;
            ranges.emplace_back(at, at + length);
            at += length;
        }
        std::vector<size_t> order(ranges.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::shuffle(order.begin(), order.end(), random);
        for (size_t i : order)
            index.add(ranges[i].first, ranges[i].second, i);
        index.build();
        QVERIFY(!index.overlaps());
        for (int probe = 0; probe < 20000; ++probe) {
            const uint64_t address = 0x3f0000 + random() % (at - 0x3f0000 + 0x10000);
            const uint64_t size = 1 + random() % 16;
            size_t expected = SIZE_MAX;
            for (size_t i = 0; i < ranges.size(); ++i) {
                if (address >= ranges[i].first && address + size <= ranges[i].second)
                    expected = i;
            }
            const auto *found = index.find(address, size);
            QCOMPARE(found ? found->value : SIZE_MAX, expected);
        }
    }
};

QTEST_GUILESS_MAIN(TestAddressIndex)
#include "tst_address_index.moc"
