// The agent's free filter and table of tracked blocks (engine/agent/agent_track.cpp, in the agent core library): a
// tracked block's free always leaves the fast path, the summary line follows the bucket bits as blocks come and go
// (a word's summary bit is set exactly while the word has a bit), pinned addresses stay filtered through their
// bucket's untracks, and exact mode's filter sends every free on.
#include "engine/agent/agent_track.h"

#include <QtTest>

#include <random>
#include <set>
#include <vector>

using namespace emberline::agent;

namespace agent_filter_test {

// True when every summary bit says whether its word of bucket bits is not zero.
bool summaryFollowsWords()
{
    for (size_t w = 0; w < kBuckets / 64; ++w) {
        const bool wordSet = g_bucketBits[w].load() != 0;
        const bool summarySet = ((g_filterSummary[w >> 6].load() >> (w & 63)) & 1) != 0;
        if (wordSet != summarySet)
            return false;
    }
    return true;
}

int summaryBitsSet()
{
    int n = 0;
    for (const auto &word : g_filterSummary)
        n += __builtin_popcountll(word.load());
    return n;
}

// A malloc-like address: 16-byte aligned, in a heap-like range.
uint64_t randomAddress(std::mt19937_64 &rng)
{
    return (0x5555'0000'0000ull + (rng() & 0xFFFF'FFFFull)) & ~uint64_t(15);
}

} // namespace agent_filter_test
using namespace agent_filter_test;

class TestAgentFilter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(mapTables());
        resetFilter(false);
        QCOMPARE(summaryBitsSet(), 0);
    }

    void trackedFreesLeaveTheFastPath()
    {
        std::mt19937_64 rng(7);
        std::vector<uint64_t> tracked;
        std::set<uint64_t> seen;
        while (tracked.size() < 3000) {
            const uint64_t a = randomAddress(rng);
            if (seen.insert(a).second && track(a))
                tracked.push_back(a);
        }
        for (uint64_t a : tracked)
            QVERIFY(freeFiltered(a));
        QVERIFY(summaryFollowsWords());
        // 3,000 blocks in 32,768 buckets set at most that many bits, in at most 512 words.
        QVERIFY(summaryBitsSet() <= 512);

        // Untracked in a shuffled order, half of them: the others stay filtered, the summary still follows.
        std::shuffle(tracked.begin(), tracked.end(), rng);
        const size_t half = tracked.size() / 2;
        for (size_t i = 0; i < half; ++i)
            QVERIFY(untrack(tracked[i]));
        QVERIFY(summaryFollowsWords());
        for (size_t i = half; i < tracked.size(); ++i)
            QVERIFY(freeFiltered(tracked[i]));
        for (size_t i = 0; i < half; ++i)
            QVERIFY(!untrack(tracked[i])); // gone: a second free of the address is not a tracked block's

        for (size_t i = half; i < tracked.size(); ++i)
            QVERIFY(untrack(tracked[i]));
        QVERIFY(summaryFollowsWords());
        QCOMPARE(summaryBitsSet(), 0);
        for (uint64_t a : tracked)
            QVERIFY(!freeFiltered(a));
    }

    void fewTrackedBlocksLeaveMostFreesOnTheSummary()
    {
        // At the default interval a program holds a few dozen tracked blocks: a free of any other block is decided
        // by the summary line alone nearly always.
        std::mt19937_64 rng(11);
        std::vector<uint64_t> tracked;
        while (tracked.size() < 40)
            if (const uint64_t a = randomAddress(rng); track(a))
                tracked.push_back(a);
        QVERIFY(summaryBitsSet() <= 40);
        int summaryOnly = 0, filtered = 0;
        const int frees = 100000;
        for (int i = 0; i < frees; ++i) {
            const uint64_t a = randomAddress(rng) | 8; // never one of the tracked (16-byte aligned) addresses
            const size_t w = bucketOf(a) >> 6;
            summaryOnly += ((g_filterSummary[w >> 6].load() >> (w & 63)) & 1) == 0;
            filtered += freeFiltered(a);
        }
        // Expected: about 40 / 512 of them reach the bucket bits, and 40 / 32,768 are filtered.
        QVERIFY2(summaryOnly > frees * 85 / 100, qPrintable(QString::number(summaryOnly)));
        QVERIFY2(filtered < frees / 200, qPrintable(QString::number(filtered)));
        for (uint64_t a : tracked)
            QVERIFY(untrack(a));
        QCOMPARE(summaryBitsSet(), 0);
    }

    void pinnedAddressesStayThroughTheirBucketsUntracks()
    {
        std::mt19937_64 rng(3);
        const uint64_t pinned = randomAddress(rng);
        m_pinned = pinned;
        pinFilter(pinned);
        QVERIFY(freeFiltered(pinned));
        // Another address of the same bucket tracked and untracked: the pinned one's bit stays.
        uint64_t neighbour = 0;
        while (neighbour == 0)
            if (const uint64_t a = randomAddress(rng); a != pinned && bucketOf(a) == bucketOf(pinned))
                neighbour = a;
        QVERIFY(track(neighbour));
        QVERIFY(untrack(neighbour));
        QVERIFY(freeFiltered(pinned));
        // And one of the same word in another bucket.
        uint64_t sameWord = 0;
        while (sameWord == 0)
            if (const uint64_t a = randomAddress(rng);
                bucketOf(a) != bucketOf(pinned) && (bucketOf(a) >> 6) == (bucketOf(pinned) >> 6))
                sameWord = a;
        QVERIFY(track(sameWord));
        QVERIFY(untrack(sameWord));
        QVERIFY(freeFiltered(pinned));
        QVERIFY(summaryFollowsWords());
    }

    void exactModeFiltersEveryFree()
    {
        resetFilter(true);
        std::mt19937_64 rng(5);
        for (int i = 0; i < 10000; ++i)
            QVERIFY(freeFiltered(randomAddress(rng)));
        resetFilter(false);
        QVERIFY(summaryFollowsWords());
        QCOMPARE(summaryBitsSet(), 1); // the pinned address's word only
        QVERIFY(freeFiltered(m_pinned));
        for (int i = 0; i < 10000; ++i) {
            const uint64_t a = randomAddress(rng);
            QCOMPARE(freeFiltered(a), bucketOf(a) == bucketOf(m_pinned));
        }
    }

private: // NOLINT(readability-redundant-access-specifiers): Q_SLOTS marks the section above for moc
    uint64_t m_pinned = 0;
};

QTEST_GUILESS_MAIN(TestAgentFilter)
#include "tst_agent_filter.moc"
