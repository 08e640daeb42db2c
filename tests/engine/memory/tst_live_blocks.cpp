// LiveBlocks (engine/memory/live_blocks.h), the heap tracker's table of live blocks: every insertion, look-up and
// erasure agrees with std::unordered_map's over random work (clustered addresses, as an allocator hands them out,
// several images, erasures in any order), through growth and an image's end.

#include "engine/memory/live_blocks.h"

#include <QTest>

#include <map>
#include <random>

using emberline::engine::LiveBlocks;

namespace {

struct Block {
    uint64_t value = 0;
};

} // namespace

class TestLiveBlocks : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void agreesWithAMap()
    {
        LiveBlocks<Block> blocks;
        std::map<std::pair<uint64_t, uint64_t>, uint64_t> truth;
        std::mt19937_64 rng(42);
        for (int step = 0; step < 400000; ++step) {
            const uint64_t image = 1 + rng() % 3;
            // Addresses from a few thousand 16-byte slots: long probe runs, and erasures inside them.
            const uint64_t address = 0x10000 + (rng() % 5000) * 16;
            const auto key = std::make_pair(image, address);
            if (rng() % 3 != 0) {
                bool inserted = false;
                Block &b = blocks.tryEmplace(image, address, inserted);
                QCOMPARE(inserted, truth.count(key) == 0);
                b.value = uint64_t(step);
                truth[key] = uint64_t(step);
            } else {
                QCOMPARE(blocks.erase(image, address), truth.erase(key) == 1);
            }
            if (step % 997 == 0) {
                // Every block still found with its value, and nothing else.
                for (const auto &[k, v] : truth) {
                    const Block *b = blocks.find(k.first, k.second);
                    QVERIFY(b);
                    QCOMPARE(b->value, v);
                }
                size_t seen = 0;
                blocks.forEach([&](uint64_t i, uint64_t a, const Block &b) {
                    ++seen;
                    QCOMPARE(truth.at({i, a}), b.value);
                });
                QCOMPARE(seen, truth.size());
                QCOMPARE(blocks.size(), truth.size());
            }
        }
        // An image ends: its blocks go, each handed over once; the others stay.
        size_t handed = 0;
        blocks.eraseImage(2, [&](uint64_t address, const Block &b) {
            ++handed;
            QCOMPARE(truth.at({2, address}), b.value);
        });
        size_t ofTwo = 0;
        for (auto it = truth.begin(); it != truth.end();) {
            if (it->first.first == 2) {
                ++ofTwo;
                it = truth.erase(it);
            } else {
                QVERIFY(blocks.find(it->first.first, it->first.second));
                ++it;
            }
        }
        QCOMPARE(handed, ofTwo);
        QCOMPARE(blocks.size(), truth.size());
        QVERIFY(!blocks.find(2, 0x10000));
    }
};

QTEST_APPLESS_MAIN(TestLiveBlocks)
#include "tst_live_blocks.moc"
