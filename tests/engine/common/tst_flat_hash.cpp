// The open-addressing tables of engine/common/flat_hash.h against std::unordered_map on the same keys: random
// keys, keys whose hashes collide outright, and tables grown through many rehashes.
#include "engine/common/flat_hash.h"

#include <QTest>

#include <random>
#include <unordered_map>
#include <vector>

using namespace emberline::engine;

class TstFlatHash : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void u64MapAgreesWithUnorderedMap();
    void indexTableFindsEveryRowAndNoOther();
    void indexTableTellsRowsWithEqualHashes();
    void indexTableEmptyFindsNothing();
};

void TstFlatHash::u64MapAgreesWithUnorderedMap()
{
    std::mt19937_64 random(7);
    U64ToU32Map map;
    std::unordered_map<uint64_t, uint32_t> reference;
    for (uint32_t i = 0; i < 200000; ++i) {
        const uint64_t key = random() % 150000; // repeats, so both branches of findOrInsert run
        bool inserted = false;
        const uint32_t value = map.findOrInsert(key, i, inserted);
        const auto [it, refInserted] = reference.try_emplace(key, i);
        QCOMPARE(inserted, refInserted);
        QCOMPARE(value, it->second);
    }
    QCOMPARE(map.size(), reference.size());
    for (const auto &[key, value] : reference)
        QCOMPARE(*map.find(key), value);
    QVERIFY(map.find(150001) == nullptr);
}

// Rows of (a, b) pairs, keyed by the pair: as the live aggregate keys its samples by stack and label set.
struct Rows {
    std::vector<uint64_t> keys;
    IndexHashTable table;
    uint64_t (*hashOf)(uint64_t) = [](uint64_t key) { return key; };

    uint32_t find(uint64_t key) const
    {
        return table.find(hashOf(key), [&](uint32_t row) { return keys[row] == key; });
    }
    uint32_t add(uint64_t key)
    {
        const auto row = static_cast<uint32_t>(keys.size());
        keys.push_back(key);
        table.insert(hashOf(key), row, [&](uint32_t r) { return hashOf(keys[r]); });
        return row;
    }
};

void TstFlatHash::indexTableFindsEveryRowAndNoOther()
{
    std::mt19937_64 random(11);
    Rows rows;
    std::unordered_map<uint64_t, uint32_t> reference;
    for (int i = 0; i < 300000; ++i) {
        const uint64_t key = (random() % 1000) << 32 | (random() % 400);
        const uint32_t found = rows.find(key);
        const auto it = reference.find(key);
        if (it == reference.end()) {
            QCOMPARE(found, IndexHashTable::kNone);
            reference.emplace(key, rows.add(key));
        } else {
            QCOMPARE(found, it->second);
        }
    }
    QCOMPARE(rows.table.size(), reference.size());
    QVERIFY(rows.table.memoryBytes() >= reference.size() * 5); // an index and a tag a row, at most 3/4 full
    for (const auto &[key, row] : reference)
        QCOMPARE(rows.find(key), row);
    QCOMPARE(rows.find(uint64_t{5000} << 32), IndexHashTable::kNone);
}

void TstFlatHash::indexTableTellsRowsWithEqualHashes()
{
    // Every key in one of four hashes: the tags are equal too, so the rows alone tell the keys apart.
    Rows rows;
    rows.hashOf = [](uint64_t key) { return key % 4; };
    for (uint64_t key = 0; key < 2000; ++key)
        QCOMPARE(rows.add(key * 7), static_cast<uint32_t>(key));
    for (uint64_t key = 0; key < 2000; ++key) {
        QCOMPARE(rows.find(key * 7), static_cast<uint32_t>(key));
        QCOMPARE(rows.find(key * 7 + 1), IndexHashTable::kNone);
    }
}

void TstFlatHash::indexTableEmptyFindsNothing()
{
    const IndexHashTable table;
    QCOMPARE(table.find(42, [](uint32_t) { return true; }), IndexHashTable::kNone);
    QCOMPARE(table.size(), size_t{0});
}

QTEST_GUILESS_MAIN(TstFlatHash)
#include "tst_flat_hash.moc"
