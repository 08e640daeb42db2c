// LocationIndex, the recorder's table of location ids by (module, address), against std::unordered_map: the same
// ids for the same keys through growth, keys that differ only in their module or only in their address kept
// apart, and kernel addresses (high bits set) with module ids past 16 bits.
#include "engine/recorder/location_index.h"

#include <QTest>

#include <random>
#include <unordered_map>
#include <vector>

using namespace emberline::engine;

class TestLocationIndex : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, two frames share a location id (their samples are merged under one function) or one frame
    // gets two (its samples are split), somewhere past the table's first growth.
    void agreesWithAHashMap()
    {
        std::mt19937_64 random(7);
        std::unordered_map<LocationKey, uint32_t, LocationKeyHash> reference;
        LocationIndex index;
        std::vector<LocationKey> keys;
        for (int i = 0; i < 200000; ++i) {
            LocationKey key;
            if (!keys.empty() && random() % 3 == 0) {
                key = keys[random() % keys.size()]; // met before
            } else {
                key.moduleId = static_cast<uint32_t>(random() % 4 == 0 ? random() : random() % 40);
                key.address = random() % 2 ? 0xffffffff81000000ull + random() % 0x1000000 : random() % 0x100000;
                keys.push_back(key);
            }
            const auto next = static_cast<uint32_t>(reference.size());
            auto [it, newInReference] = reference.try_emplace(key, next);
            bool inserted = false;
            const uint32_t id = index.findOrInsert(key, next, inserted);
            QCOMPARE(inserted, newInReference);
            QCOMPARE(id, it->second);
        }
        QCOMPARE(index.size(), reference.size());
        for (const auto &[key, id] : reference)
            QCOMPARE(index.find(key), int64_t(id));
    }

    // If this fails, the module half or the address half of the key is ignored: the same address in two
    // libraries (or kernel and user) is one location.
    void bothHalvesOfTheKeyCount()
    {
        LocationIndex index;
        QCOMPARE(index.find(LocationKey{3, 0x1000}), int64_t(-1));
        bool inserted = false;
        QCOMPARE(index.findOrInsert(LocationKey{3, 0x1000}, 0, inserted), 0u);
        QVERIFY(inserted);
        QCOMPARE(index.findOrInsert(LocationKey{4, 0x1000}, 1, inserted), 1u);
        QVERIFY(inserted);
        QCOMPARE(index.findOrInsert(LocationKey{3, 0x1001}, 2, inserted), 2u);
        QVERIFY(inserted);
        QCOMPARE(index.findOrInsert(LocationKey{0, 0}, 3, inserted), 3u); // the unknown module at address 0
        QVERIFY(inserted);
        QCOMPARE(index.findOrInsert(LocationKey{3, 0x1000}, 9, inserted), 0u);
        QVERIFY(!inserted);
        QCOMPARE(index.find(LocationKey{0, 0}), int64_t(3));
        QCOMPARE(index.find(LocationKey{4, 0x1001}), int64_t(-1));
        QCOMPARE(index.size(), size_t(4));
    }
};

QTEST_GUILESS_MAIN(TestLocationIndex)
#include "tst_location_index.moc"
