// The walk over a profile's values per stack that every derived view makes (engine/analysis/valued_stacks.h): which
// stacks it visits, in which order, and where a cancel flag stops it.
#include "engine/analysis/valued_stacks.h"

#include <QTest>

#include <utility>
#include <vector>

using namespace emberline::engine;

class TestValuedStacks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a stack with a value is skipped, a stack of value 0 is visited, or the ids are out of order:
    // every call tree and table would be wrong.
    void visitsEveryValuedStackInOrder()
    {
        const std::vector<int64_t> perStack{0, 5, 0, -3, 7, 0};
        std::vector<std::pair<uint32_t, int64_t>> seen;
        const std::atomic<bool> cancel{false};
        QVERIFY(forEachValuedStack(perStack, &cancel, [&](uint32_t s, int64_t v) { seen.emplace_back(s, v); }));
        const std::vector<std::pair<uint32_t, int64_t>> expected{{1, 5}, {3, -3}, {4, 7}};
        QCOMPARE(seen, expected);
        seen.clear();
        forEachValuedStack(perStack, [&](uint32_t s, int64_t v) { seen.emplace_back(s, v); });
        QCOMPARE(seen, expected);
        QVERIFY(forEachValuedStack({}, nullptr, [&](uint32_t, int64_t) { QFAIL("no stack to visit"); }));
    }

    // If this fails, a cancelled walk runs to the end (a cancelled analysis of a large profile keeps a worker busy),
    // or stops where nothing asked it to.
    void cancelStopsAtTheNextCheck()
    {
        const std::vector<int64_t> perStack(3 * kStacksPerCancelCheck + 10, 1);
        std::atomic<bool> cancel{true};
        size_t visited = 0;
        QVERIFY(!forEachValuedStack(perStack, &cancel, [&](uint32_t, int64_t) { ++visited; }));
        QCOMPARE(visited, size_t(0)); // set before the walk: nothing is visited
        // Set while walking: the run under way ends, the next is not started.
        cancel = false;
        QVERIFY(!forEachValuedStack(perStack, &cancel, [&](uint32_t s, int64_t) {
            ++visited;
            if (s == kStacksPerCancelCheck + 5)
                cancel = true;
        }));
        QCOMPARE(visited, 2 * kStacksPerCancelCheck);
        // Checked even where the stacks hold nothing (a live session's flush values few of many stacks).
        std::vector<int64_t> sparse(3 * kStacksPerCancelCheck, 0);
        sparse.back() = 1;
        cancel = true;
        QVERIFY(!forEachValuedStack(sparse, &cancel, [&](uint32_t, int64_t) { QFAIL("cancelled before"); }));
        // No flag: never cancelled.
        visited = 0;
        QVERIFY(forEachValuedStack(perStack, nullptr, [&](uint32_t, int64_t) { ++visited; }));
        QCOMPARE(visited, perStack.size());
    }
};

QTEST_GUILESS_MAIN(TestValuedStacks)
#include "tst_valued_stacks.moc"
