// The function table (self and total per function, like `go tool pprof -top`) and the caller/callee view.

#include "tests/engine/test_support.h"

#include "engine/analysis/function_table.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"

#include <QTest>

#include <map>

using namespace emberline;
using namespace emberline::engine;

namespace {

// main → a → rec → rec → rec (2), main → a → rec (7), main → a (9), main (1), main → b → inner (3, inlined).
Profile recursive()
{
    test::ProfileBuilder b({{"samples", "count"}, {"cpu", "nanoseconds"}});
    const uint32_t fMain = b.function("main", "main.c");
    const uint32_t fA = b.function("a", "a.c");
    const uint32_t fB = b.function("b", "b.c");
    const uint32_t fRec = b.function("rec", "rec.c");
    const uint32_t fInner = b.function("inner", "b.c");
    const uint32_t lMain = b.location({fMain});
    const uint32_t lA = b.location({fA});
    const uint32_t lB = b.location({fInner, fB});
    const uint32_t lRec = b.location({fRec});
    b.sample({lA, lMain}, {9, 90});
    b.sample({lB, lMain}, {3, 30});
    b.sample({lRec, lRec, lRec, lA, lMain}, {2, 20});
    b.sample({lRec, lA, lMain}, {7, 70});
    b.sample({lMain}, {1, 10});
    return b.take();
}

struct Values {
    int64_t self = 0;
    int64_t total = 0;
    bool operator==(const Values &) const = default;
};

std::map<std::string, Values> byName(const FrameTable &frames, const FunctionTable &table)
{
    std::map<std::string, Values> out;
    for (const auto &row : table.rows())
        out[frames.frame(row.frame).name] = {row.self, row.total};
    return out;
}

} // namespace

class TestFunctionTable : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void recursionCountedOnce();
    void rowOrder();
    void callerCallee();
    void realFilesAddUp_data();
    void realFilesAddUp();
    void sameNameInDifferentFiles();
    void fromCallTreeEqualsBuild_data();
    void fromCallTreeEqualsBuild();
};

// If this fails, a recursive function's total counts a sample once per frame (it could exceed 100%), or self
// and total land on the wrong function, or an inlined frame is missing from the table.
void TestFunctionTable::recursionCountedOnce()
{
    const Profile p = recursive();
    const FrameTable frames(p);
    for (int type = 0; type < 2; ++type) {
        const int64_t k = type == 0 ? 1 : 10;
        const auto table = FunctionTable::build(p, frames, valuesPerStack(p, type, {}));
        QVERIFY(table);
        QCOMPARE(table->grandTotal(), 22 * k);
        const auto rows = byName(frames, *table);
        QCOMPARE(rows.size(), size_t(5));
        QCOMPARE(rows.at("main"), (Values{1 * k, 22 * k}));
        QCOMPARE(rows.at("a"), (Values{9 * k, 18 * k}));
        QCOMPARE(rows.at("rec"), (Values{9 * k, 9 * k}));
        QCOMPARE(rows.at("b"), (Values{0, 3 * k}));
        QCOMPARE(rows.at("inner"), (Values{3 * k, 3 * k}));
    }
}

// If this fails, the table is not ordered like pprof -top (self, then total, descending; then by name).
void TestFunctionTable::rowOrder()
{
    const Profile p = recursive();
    const FrameTable frames(p);
    const auto table = FunctionTable::build(p, frames, valuesPerStack(p, 0, {}));
    std::vector<std::string> order;
    for (const auto &row : table->rows())
        order.push_back(frames.frame(row.frame).name);
    // a and rec tie on self (9): a has the larger total.
    QCOMPARE(order, (std::vector<std::string>{"a", "rec", "inner", "main", "b"}));
}

// If this fails, the caller/callee view double-counts recursion or misses a neighbour.
void TestFunctionTable::callerCallee()
{
    const Profile p = recursive();
    const FrameTable frames(p);
    const std::vector<int64_t> perStack = valuesPerStack(p, 0, {});
    const uint32_t rec = frames.findByName("rec").at(0);
    const CallerCallee cc = computeCallerCallee(p, frames, perStack, rec);
    QCOMPARE(cc.self, int64_t(9));
    QCOMPARE(cc.total, int64_t(9));
    QCOMPARE(cc.callers.size(), size_t(1));
    QCOMPARE(frames.frame(cc.callers[0].frame).name, std::string("a"));
    QCOMPARE(cc.callers[0].value, int64_t(9));
    QVERIFY(cc.callees.empty()); // rec → rec is recursion, not a callee

    const uint32_t main = frames.findByName("main").at(0);
    const CallerCallee m = computeCallerCallee(p, frames, perStack, main);
    QVERIFY(m.callers.empty());
    QCOMPARE(m.callees.size(), size_t(2));
    QCOMPARE(frames.frame(m.callees[0].frame).name, std::string("a"));
    QCOMPARE(m.callees[0].value, int64_t(18));
    QCOMPARE(frames.frame(m.callees[1].frame).name, std::string("b"));
    QCOMPARE(m.callees[1].value, int64_t(3));
}

void TestFunctionTable::realFilesAddUp_data()
{
    QTest::addColumn<QString>("file");
    for (const QString &f : test::realFiles())
        QTest::newRow(qPrintable(f)) << f;
}

// If this fails, on a real profile the self values do not add up to the total, or some function's total
// exceeds the grand total (recursion counted twice: node-wall recurses deeper than 200 frames).
void TestFunctionTable::realFilesAddUp()
{
    QFETCH(QString, file);
    auto r = readPprofFile(test::realPath(file));
    QVERIFY(r.ok());
    const Profile &p = r.value();
    const FrameTable frames(p);
    for (int type = 0; type < int(p.sampleTypes().size()); ++type) {
        const auto table = FunctionTable::build(p, frames, valuesPerStack(p, type, {}));
        QVERIFY(table);
        QCOMPARE(table->grandTotal(), p.totals()[size_t(type)]);
        int64_t selfSum = 0;
        for (const auto &row : table->rows()) {
            selfSum += row.self;
            QVERIFY(row.self <= row.total);
            QVERIFY(row.total <= table->grandTotal());
        }
        QCOMPARE(selfSum, table->grandTotal());
    }
}

// If this fails, two functions with the same name in different source files show as two rows with the same
// name. `go tool pprof -top` (function granularity) aggregates by name, and so must we, or `emberline report`
// disagrees with it (node-wall has `(anonymous:L#1:C#1)` and `setContext` in two files each).
void TestFunctionTable::sameNameInDifferentFiles()
{
    test::ProfileBuilder b({{"samples", "count"}});
    const uint32_t f1 = b.function("init", "one.c");
    const uint32_t f2 = b.function("init", "two.c");
    const uint32_t fMain = b.function("main", "main.c");
    const uint32_t l1 = b.location({f1});
    const uint32_t l2 = b.location({f2});
    const uint32_t lMain = b.location({fMain});
    b.sample({l2, l1, lMain}, {4}); // init (two.c) called from init (one.c): counted once in total
    b.sample({l1, lMain}, {5});
    const Profile p = b.take();
    const FrameTable frames(p);
    QCOMPARE(frames.findByName("init").size(), size_t(1));
    const auto table = FunctionTable::build(p, frames, valuesPerStack(p, 0, {}));
    const auto rows = byName(frames, *table);
    QCOMPARE(rows.at("init"), (Values{9, 9}));

    auto r = readPprofFile(test::realPath(QStringLiteral("node-wall.pb.gz")));
    QVERIFY(r.ok());
    const FrameTable nodeFrames(r.value());
    std::map<std::string, int> seen;
    for (uint32_t i = 0; i < nodeFrames.size(); ++i)
        QCOMPARE(++seen[nodeFrames.frame(i).name], 1);
    QVERIFY(seen.count("setContext"));
}

// If this fails, the table read off the call tree (what the views use) disagrees with the one computed from the
// stacks (what `emberline report` prints): every row, value and the order must be the same, for every sample
// type of every real file and for the recursive hand-built profile.
void TestFunctionTable::fromCallTreeEqualsBuild_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("recursive") << QString();
    for (const QString &f : test::realFiles())
        QTest::newRow(qPrintable(f)) << f;
}

void TestFunctionTable::fromCallTreeEqualsBuild()
{
    QFETCH(QString, file);
    Profile p;
    if (file.isEmpty()) {
        p = recursive();
    } else {
        auto r = readPprofFile(test::realPath(file));
        QVERIFY(r.ok());
        p = std::move(r).value();
    }
    const FrameTable frames(p);
    for (int type = 0; type < int(p.sampleTypes().size()); ++type) {
        const std::vector<int64_t> perStack = valuesPerStack(p, type, {});
        const auto built = FunctionTable::build(p, frames, perStack);
        QVERIFY(built);
        const FunctionTable derived = FunctionTable::fromCallTree(*CallTree::build(p, frames, perStack), frames);
        QCOMPARE(derived.grandTotal(), built->grandTotal());
        QCOMPARE(derived.rows().size(), built->rows().size());
        for (size_t i = 0; i < built->rows().size(); ++i) {
            const auto &a = derived.rows()[i];
            const auto &b = built->rows()[i];
            QVERIFY2(a.frame == b.frame && a.self == b.self && a.total == b.total,
                     qPrintable(QStringLiteral("type %1 row %2 (%3)")
                                    .arg(type)
                                    .arg(i)
                                    .arg(QString::fromStdString(frames.frame(b.frame).name))));
        }
    }
}

QTEST_GUILESS_MAIN(TestFunctionTable)
#include "tst_function_table.moc"
