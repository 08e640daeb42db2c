// Call trees: golden text dumps of every real file's default sample type (tests/data/golden, regenerated with
// EMBERLINE_UPDATE_GOLDEN=1), and a small hand-built profile whose tree is known exactly.

#include "tests/engine/test_support.h"

#include "engine/analysis/call_tree.h"
#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"
#include "engine/model/merge.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"

#include <QDir>
#include <QTest>

using namespace emberline;
using namespace emberline::engine;

namespace {

// main → a → rec → rec → rec, main → a → rec → (no symbols), main → b with `inner` inlined into b, main alone.
Profile handBuilt()
{
    test::ProfileBuilder b({{"samples", "count"}});
    const uint32_t fMain = b.function("main", "main.c", 1);
    const uint32_t fA = b.function("a", "a.c", 10);
    const uint32_t fB = b.function("b", "b.c", 20);
    const uint32_t fRec = b.function("rec", "rec.c", 30);
    const uint32_t fInner = b.function("inner", "b.c", 40);
    const uint32_t fLeaf = b.function("leaf", "leaf.c", 50);
    const uint32_t lib = b.mapping("/usr/lib/libfoo.so", 0x1000, 0x9000, 0x200);
    const uint32_t lMain = b.location({fMain});
    const uint32_t lA = b.location({fA});
    const uint32_t lB = b.location({fInner, fB}); // inlined callee first
    const uint32_t lRec = b.location({fRec});
    const uint32_t lLeaf = b.location({fLeaf});
    const uint32_t lRaw = b.location({}, lib, 0x1500); // no lines: shown as libfoo.so+0x700
    b.sample({lA, lMain}, {5});
    b.sample({lB, lMain}, {3});
    b.sample({lRec, lRec, lRec, lA, lMain}, {2});
    b.sample({lRaw, lRec, lA, lMain}, {7});
    b.sample({lMain}, {1});
    b.sample({lA, lMain}, {4});        // same stack as the first: interned once, values add up
    b.sample({lLeaf, lB, lMain}, {0}); // a zero value adds no node
    return b.take();
}

const char *kHandBuiltDump = "<root> 0 22\n"
                             "  main 1 22\n"
                             "    a 9 18\n"
                             "      rec 0 9\n"
                             "        libfoo.so+0x700 7 7\n"
                             "        rec 0 2\n"
                             "          rec 2 2\n"
                             "    b 0 3\n"
                             "      inner 3 3\n";

CallTree buildTree(const Profile &p, const FrameTable &frames, int type, const std::vector<uint8_t> &mask = {})
{
    const std::vector<int64_t> perStack = valuesPerStack(p, type, mask);
    return *CallTree::build(p, frames, perStack);
}

// Every node's `deepest` is the largest depth in its subtree; a failure names the first node that is wrong.
QString wrongDeepest(const CallTree &tree)
{
    for (uint32_t n = 0; n < tree.size(); ++n) {
        uint32_t deepest = tree.node(n).depth;
        for (uint32_t c : tree.children(n))
            deepest = std::max(deepest, tree.node(c).deepest);
        if (tree.node(n).deepest != deepest)
            return QStringLiteral("node %1: deepest %2, expected %3").arg(n).arg(tree.node(n).deepest).arg(deepest);
    }
    return {};
}

} // namespace

class TestCallTree : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void handBuiltTree();
    void handBuiltNodes();
    void cancelled();
    void golden_data();
    void golden();
    void updaterFollowsGrowingValues_data();
    void updaterFollowsGrowingValues();
    void updaterFollowsAGrowingProfile();
    void updaterReusesDroppedTreesArrays();
    void heldTreesKeepTheirShapesWhileTheUpdaterGrows();
};

// If this fails, the call tree gets self/total wrong for recursion, inlined frames, unsymbolized locations or
// repeated stacks, or orders children unstably: the flame graph would be wrong.
void TestCallTree::handBuiltTree()
{
    const Profile p = handBuilt();
    const FrameTable frames(p);
    const CallTree tree = buildTree(p, frames, 0);
    QCOMPARE(QString::fromStdString(tree.dump(frames)), QString::fromLatin1(kHandBuiltDump));
    QCOMPARE(tree.total(), int64_t(22));
    QCOMPARE(tree.maxDepth(), 5u);
    // minTotal leaves small nodes out.
    QCOMPARE(QString::fromStdString(tree.dump(frames, 9)),
             QStringLiteral("<root> 0 22\n  main 1 22\n    a 9 18\n      rec 0 9\n"));
}

// If this fails, navigation (zoom, breadcrumb, search) reaches the wrong node, or a node's frame lost its
// source file and line.
void TestCallTree::handBuiltNodes()
{
    const Profile p = handBuilt();
    const FrameTable frames(p);
    const CallTree tree = buildTree(p, frames, 0);
    const std::vector<std::string> path{"main", "a", "rec", "rec"};
    const uint32_t node = tree.findPath(frames, path);
    QVERIFY(node != kNoIndex);
    QCOMPARE(tree.node(node).depth, 4u);
    QCOMPARE(tree.node(node).self, int64_t(0));
    QCOMPARE(tree.node(node).total, int64_t(2));
    std::vector<std::string> names;
    for (uint32_t f : tree.pathTo(node))
        names.push_back(frames.frame(f).name);
    QCOMPARE(names, path);
    const std::vector<std::string> missing{"main", "b", "rec"};
    QCOMPARE(tree.findPath(frames, missing), kNoIndex);

    const uint32_t inner = tree.findPath(frames, std::vector<std::string>{"main", "b", "inner"});
    QVERIFY(inner != kNoIndex);
    const Frame &f = frames.frame(tree.node(inner).frame);
    QCOMPARE(f.file, std::string("b.c"));
    QCOMPARE(f.line, int64_t(40));
    QVERIFY(f.symbolized);
    const uint32_t raw = tree.findPath(frames, std::vector<std::string>{"main", "a", "rec", "libfoo.so+0x700"});
    QVERIFY(raw != kNoIndex);
    QVERIFY(!frames.frame(tree.node(raw).frame).symbolized);
    QCOMPARE(frames.frame(tree.node(raw).frame).module, std::string("libfoo.so"));
    // The totals of a node's children never exceed its own total; self + children == total.
    for (uint32_t n = 0; n < tree.size(); ++n) {
        int64_t children = 0;
        for (uint32_t c : tree.children(n)) {
            children += tree.node(c).total;
            QCOMPARE(tree.node(c).parent, n);
            QCOMPARE(tree.node(c).depth, tree.node(n).depth + 1);
        }
        QCOMPARE(tree.node(n).self + children, tree.node(n).total);
    }
    QCOMPARE(tree.node(0).deepest, 5u); // main → a → rec → rec → rec (the root is depth 0)
    QCOMPARE(wrongDeepest(tree), QString());
}

// If this fails, a cancelled build still runs to the end (the GUI would wait on stale work).
void TestCallTree::cancelled()
{
    const Profile p = handBuilt();
    const FrameTable frames(p);
    const std::vector<int64_t> perStack = valuesPerStack(p, 0, {});
    std::atomic<bool> cancel{true};
    QVERIFY(!CallTree::build(p, frames, perStack, &cancel).has_value());
}

void TestCallTree::golden_data()
{
    QTest::addColumn<QString>("file");
    for (const QString &f : test::realFiles())
        QTest::newRow(qPrintable(f)) << f;
}

// If this fails, the call tree of a real profile changed: either the reader, the frame table or the tree
// builder changed behaviour. If the change is intended, regenerate with EMBERLINE_UPDATE_GOLDEN=1 and review the
// diff of tests/data/golden.
void TestCallTree::golden()
{
    QFETCH(QString, file);
    auto r = readPprofFile(test::realPath(file));
    QVERIFY(r.ok());
    const Profile &p = r.value();
    const int type = p.defaultSampleTypeIndex();
    const FrameTable frames(p);
    const CallTree tree = buildTree(p, frames, type);
    // Independent of the golden file: the root holds the whole total, and the self values add up to it.
    QCOMPARE(tree.total(), p.totals()[size_t(type)]);
    int64_t selfSum = 0;
    for (uint32_t n = 0; n < tree.size(); ++n)
        selfSum += tree.node(n).self;
    QCOMPARE(selfSum, tree.total());

    const std::string dump = tree.dump(frames);
    const QString golden = test::goldenDir() + QLatin1Char('/') + file + QLatin1Char('.') +
                           QString::fromStdString(p.str(p.sampleTypes()[size_t(type)].type)) + QStringLiteral(".txt");
    if (qEnvironmentVariable("EMBERLINE_UPDATE_GOLDEN") == QLatin1String("1")) {
        QDir().mkpath(test::goldenDir());
        QFile out(golden);
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write(dump.data(), qint64(dump.size()));
        qInfo("regenerated %s (%zu bytes)", qPrintable(golden), dump.size());
        return;
    }
    QFile in(golden);
    QVERIFY2(in.open(QIODevice::ReadOnly),
             qPrintable(golden + QStringLiteral(" is missing: run with EMBERLINE_UPDATE_GOLDEN=1")));
    const QByteArray expected = in.readAll();
    if (expected.toStdString() != dump) {
        // Point at the first differing line rather than dumping thousands of lines.
        const QList<QByteArray> a = expected.split('\n');
        const QList<QByteArray> b = QByteArray::fromStdString(dump).split('\n');
        qsizetype i = 0;
        while (i < a.size() && i < b.size() && a[i] == b[i])
            ++i;
        QFAIL(qPrintable(QStringLiteral("%1 differs at line %2:\n  expected: %3\n  actual:   %4")
                             .arg(golden)
                             .arg(i + 1)
                             .arg(QString::fromUtf8(i < a.size() ? a[i] : "<end>"),
                                  QString::fromUtf8(i < b.size() ? b[i] : "<end>"))));
    }
}

void TestCallTree::updaterFollowsGrowingValues_data()
{
    golden_data();
}

// A live session's refresh: the same profile with more of its samples counted each time, then a filter that
// takes values away again, then every sample again (twice: a refresh where nothing changed). After every step the
// updated tree equals a fresh build, node for node (the updater publishes differently while every path it knows
// holds a value and once some do not).
void TestCallTree::updaterFollowsGrowingValues()
{
    QFETCH(QString, file);
    auto r = readPprofFile(test::realPath(file));
    QVERIFY(r.ok());
    const Profile &p = r.value();
    const int type = p.defaultSampleTypeIndex();
    const FrameTable frames(p);
    CallTreeUpdater updater;
    CallTreeUpdater hinted; // told which stacks the step changed, as a live session's flushes do
    const size_t n = p.sampleCount();
    std::vector<uint8_t> mask(n, 0);
    constexpr size_t kSteps = 5;
    for (size_t step = 1; step <= kSteps + 3; ++step) {
        std::vector<uint32_t> changed;
        if (step <= kSteps) {
            for (size_t i = 0; i < n * step / kSteps; ++i) {
                if (!mask[i])
                    changed.push_back(p.sampleStackId(i));
                mask[i] = 1;
            }
        } else if (step == kSteps + 1) {
            for (size_t i = 0; i < n; ++i)
                mask[i] = i % 3 == 0; // a filter: most paths lose value, some to zero
        } else {
            std::fill(mask.begin(), mask.end(), uint8_t(1));
        }
        const std::vector<int64_t> perStack = valuesPerStack(p, type, mask);
        const CallTree updated = *updater.update(p, frames, perStack);
        const CallTree built = *CallTree::build(p, frames, perStack);
        QCOMPARE(updated.size(), built.size());
        QCOMPARE(updated.total(), built.total());
        QCOMPARE(updated.maxDepth(), built.maxDepth());
        QVERIFY2(updated.dump(frames) == built.dump(frames), qPrintable(QStringLiteral("step %1").arg(step)));
        QCOMPARE(wrongDeepest(built), QString());
        QCOMPARE(wrongDeepest(updated), QString());
        QCOMPARE(updated.node(0).deepest, built.node(0).deepest);
        const CallTree fromHints = *hinted.update(p, frames, perStack, step <= kSteps ? &changed : nullptr);
        QVERIFY2(fromHints.dump(frames) == built.dump(frames), qPrintable(QStringLiteral("hinted, step %1").arg(step)));
        QCOMPARE(wrongDeepest(fromHints), QString());
        // The per-frame values it keeps along the way give the function table of the tree it returned.
        const FunctionTable fromUpdater =
            FunctionTable::fromFrameTotals(frames, updater.frameSelf(), updater.frameTotal(), updated.total());
        const FunctionTable fromTree = FunctionTable::fromCallTree(built, frames);
        QCOMPARE(fromUpdater.grandTotal(), fromTree.grandTotal());
        QCOMPARE(fromUpdater.rows().size(), fromTree.rows().size());
        for (size_t i = 0; i < fromTree.rows().size(); ++i) {
            QCOMPARE(fromUpdater.rows()[i].frame, fromTree.rows()[i].frame);
            QCOMPARE(fromUpdater.rows()[i].self, fromTree.rows()[i].self);
            QCOMPARE(fromUpdater.rows()[i].total, fromTree.rows()[i].total);
        }
    }
    QVERIFY(updater.knownNodes() >= CallTree::build(p, frames, valuesPerStack(p, type, {}))->size());
    // Stacks left out of `changed` are not read: a refresh that names none keeps the tree as it was.
    std::vector<int64_t> more = valuesPerStack(p, type, {});
    const int64_t before = more.empty() ? 0 : CallTree::build(p, frames, more)->total();
    if (!more.empty()) {
        more[p.sampleStackId(0)] += 1000;
        const std::vector<uint32_t> none;
        QCOMPARE(hinted.update(p, frames, more, &none)->total(), before);
        const std::vector<uint32_t> first{p.sampleStackId(0)};
        QCOMPARE(hinted.update(p, frames, more, &first)->total(), before + 1000);
    }
}

// Flushes merged one after another: new stacks, locations and frames arrive between updates.
void TestCallTree::updaterFollowsAGrowingProfile()
{
    test::ProfileBuilder later({{"samples", "count"}});
    const uint32_t fMain = later.function("main", "main.c", 1);
    const uint32_t fA = later.function("a", "a.c", 10);
    const uint32_t fNew = later.function("aa_new", "new.c", 5); // sorts before `a`'s siblings
    const uint32_t lMain = later.location({fMain});
    const uint32_t lA = later.location({fA});
    const uint32_t lNew = later.location({fNew});
    later.sample({lNew, lA, lMain}, {11});
    later.sample({lNew, lMain}, {6});
    later.sample({lA, lMain}, {1});
    const Profile second = later.take();

    ProfileMerger merger(ProfileMerger::Options{true, {}});
    CallTreeUpdater updater;
    const Profile first = handBuilt();
    for (const Profile *flush : {&first, &second}) {
        QVERIFY(merger.add(*flush).ok());
        const Profile &merged = merger.result();
        const FrameTable frames(merged);
        const std::vector<int64_t> perStack = valuesPerStack(merged, 0, {});
        const CallTree updated = *updater.update(merged, frames, perStack);
        QCOMPARE(updated.dump(frames), CallTree::build(merged, frames, perStack)->dump(frames));
    }
    const FrameTable frames(merger.result());
    QVERIFY(updater.update(merger.result(), frames, valuesPerStack(merger.result(), 0, {}))
                ->dump(frames)
                .find("      aa_new 11 11\n") != std::string::npos);
}

// The tree an update returns is the updater's own: while no reader holds it the next update writes it in place;
// while one does, the next update works on a copy (copy on write), made in the arrays of a tree that readers have
// since dropped. If this fails, a tree a view still reads is overwritten by the next refresh, every refresh
// faults a fresh copy of the whole tree in, or a session keeps a third copy of its tree.
void TestCallTree::updaterReusesDroppedTreesArrays()
{
    const Profile p = handBuilt();
    const FrameTable frames(p);
    std::vector<int64_t> perStack = valuesPerStack(p, 0, {});
    CallTreeUpdater updater;
    const int64_t *dropped = nullptr;
    {
        const std::shared_ptr<const CallTree> first = updater.update(p, frames, perStack);
        dropped = first->totals().data();
    }
    perStack[0] += 5;
    std::shared_ptr<const CallTree> second = updater.update(p, frames, perStack);
    QCOMPARE(second->totals().data(), dropped); // nobody held the first: written in place
    QCOMPARE(second->dump(frames), CallTree::build(p, frames, perStack)->dump(frames));

    const std::string held = second->dump(frames);
    perStack[0] += 5;
    const std::shared_ptr<const CallTree> third = updater.update(p, frames, perStack);
    QVERIFY(third->totals().data() != second->totals().data());
    QVERIFY(third->sharesShapesWith(*second)); // only the values were copied
    QCOMPARE(second->dump(frames), held);      // the copy took the change, the held tree kept its values
    QCOMPARE(third->dump(frames), CallTree::build(p, frames, perStack)->dump(frames));
    QVERIFY(third->dump(frames) != held);

    // The second tree, dropped by its reader, lends its arrays to the copy the next update makes of the third.
    const int64_t *secondNodes = second->totals().data();
    const std::string thirdDump = third->dump(frames);
    second.reset();
    // Had the dropped tree's nodes been freed, an allocation of their size would most likely take their memory.
    const std::vector<int64_t> decoy(p.stacks().size() * 8 + 1024);
    perStack[0] += 5;
    const std::shared_ptr<const CallTree> fourth = updater.update(p, frames, perStack);
    QCOMPARE(fourth->totals().data(), secondNodes);
    QVERIFY(decoy.data() != secondNodes);
    QCOMPARE(third->dump(frames), thirdDump);
    QCOMPARE(fourth->dump(frames), CallTree::build(p, frames, perStack)->dump(frames));
}

// The trees an updater publishes share its table of node shapes (frame, parent, depth) and read only their own
// first rows of it: new nodes are appended past them, and a full table is copied into a larger one while held trees
// keep the old. If this fails, a tree a view holds shows frames or parents of nodes made by a later refresh, or
// reads rows that moved.
void TestCallTree::heldTreesKeepTheirShapesWhileTheUpdaterGrows()
{
    test::ProfileBuilder builder({{"samples", "count"}});
    const uint32_t fMain = builder.function("main", "main.c", 1);
    const uint32_t lMain = builder.location({fMain});
    constexpr int kLeaves = 3000; // more new nodes than the table's room: it must grow
    for (int i = 0; i < kLeaves; ++i) {
        const std::string name = "leaf_" + std::to_string(i);
        const uint32_t f = builder.function(name, "leaf.c", i + 1);
        builder.sample({builder.location({f}), lMain}, {1});
    }
    const Profile p = builder.take();
    const FrameTable frames(p);
    const std::vector<int64_t> all = valuesPerStack(p, 0, {});
    std::vector<int64_t> few(all.size(), 0);
    for (size_t s = 0; s < 10; ++s)
        few[s] = all[s];

    CallTreeUpdater updater;
    const std::shared_ptr<const CallTree> small = updater.update(p, frames, few);
    const std::string smallDump = small->dump(frames);
    QCOMPARE(small->size(), size_t(12));
    const std::shared_ptr<const CallTree> grown = updater.update(p, frames, all);
    QCOMPARE(grown->size(), size_t(kLeaves + 2));
    QCOMPARE(grown->dump(frames), CallTree::build(p, frames, all)->dump(frames));
    QVERIFY(!grown->sharesShapesWith(*small)); // the table grew into a new one
    QCOMPARE(small->dump(frames), smallDump);
    for (uint32_t n = 1; n < small->size(); ++n)
        QCOMPARE(small->node(n).parent, grown->node(n).parent);

    std::vector<int64_t> more = all;
    more[5] += 7;
    const std::shared_ptr<const CallTree> next = updater.update(p, frames, more);
    QVERIFY(next->sharesShapesWith(*grown));
    QCOMPARE(next->dump(frames), CallTree::build(p, frames, more)->dump(frames));
    QCOMPARE(grown->dump(frames), CallTree::build(p, frames, all)->dump(frames));
}

QTEST_GUILESS_MAIN(TestCallTree)
#include "tst_call_tree.moc"
