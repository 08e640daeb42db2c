// The differential call tree and the comparison of two loaded profiles (engine/compare/diff_tree.h, comparison.h) on
// hand-made profiles where every number is known: paths matched by frame name across profiles with other ids and
// files, base-only paths kept and flagged, the three width trees over the same node ids, normalization, the thread
// filter matched by thread name, callers and callees on both sides, and the notices for bad input.
#include "engine/compare/comparison.h"

#include "../test_support.h"

#include <QTest>

using namespace emberline;
using namespace emberline::engine;
using test::ProfileBuilder;

namespace {

std::shared_ptr<const LoadedProfile> loadedFrom(Profile profile, const QString &path = {})
{
    return makeLoadedProfile(std::move(profile), path);
}

// main → work (30), main → idle (10), main → work → work (5). `work` lives in base.c here.
Profile baseProfile()
{
    ProfileBuilder b({{"samples", "count"}, {"cpu", "nanoseconds"}});
    const uint32_t main = b.location({b.function("main", "main.c")});
    const uint32_t work = b.location({b.function("work", "base.c")});
    const uint32_t idle = b.location({b.function("idle")});
    b.sample({work, main}, {3, 30});
    b.sample({idle, main}, {1, 10});
    b.sample({work, work, main}, {1, 5});
    return b.take();
}

// Other ids and order, `work` in another file: idle gone, work doubled, parse new.
Profile newProfile()
{
    ProfileBuilder b({{"cpu", "nanoseconds"}, {"samples", "count"}});
    const uint32_t parse = b.location({b.function("parse")});
    const uint32_t work = b.location({b.function("work", "new.c")});
    const uint32_t main = b.location({b.function("main", "main.c")});
    b.sample({work, main}, {60, 6});
    b.sample({parse, main}, {25, 2});
    b.sample({work, work, main}, {10, 1});
    return b.take();
}

// newProfile() against baseProfile(), in cpu.
ComparisonRequest newAgainstBase()
{
    ComparisonRequest r;
    r.next = loadedFrom(newProfile());
    r.base = loadedFrom(baseProfile());
    r.sampleType = "cpu";
    return r;
}

std::shared_ptr<const Comparison> compare(const ComparisonRequest &request)
{
    auto c = compareProfiles(request);
    if (!c) {
        qWarning("%s", c.error().message.c_str());
        return nullptr;
    }
    return c.value();
}

uint32_t childNamed(const CallTree &tree, const FrameTable &frames, uint32_t parent, const std::string &name)
{
    for (uint32_t c : tree.children(parent))
        if (frames.frame(tree.node(c).frame).name == name)
            return c;
    return kNoIndex;
}

bool hasNotice(const Comparison &c, const std::string &part)
{
    for (const std::string &n : c.notices)
        if (n.find(part) != std::string::npos)
            return true;
    return false;
}

} // namespace

class TestDiffTree : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, paths are not matched by frame name across profiles (ids, order and files differ), or a
    // base-only path is lost instead of kept and flagged.
    void perPathBaseAndNew()
    {
        const auto c = compare(newAgainstBase());
        QVERIFY(c);
        QCOMPARE(c->tree->dump(), std::string("<root> 45 95\n"
                                              "  main 45 95\n"
                                              "    idle 10 0 (base only)\n"
                                              "    parse 0 25\n"
                                              "    work 35 70\n"
                                              "      work 5 10\n"));
        // The new profile's frame ids are kept; the base's `idle` is added after them.
        QCOMPARE(c->frames->size(), size_t(4));
        QCOMPARE(c->frames->frame(c->baseToUnion[2]).name, std::string("idle"));
        QCOMPARE(c->baseToUnion[1], uint32_t(1)); // base `work` is the new `work`
        QCOMPARE(c->frames->frame(1).file, std::string("new.c"));
        QVERIFY(!c->tree->isUnchanged());
    }

    // If this fails, the flame graph's three width choices disagree on node ids or carry the wrong values: with
    // base-only frames shown, their base width is added to every ancestor.
    void widthTrees()
    {
        const auto c = compare(newAgainstBase());
        QVERIFY(c);
        const DiffTree &d = *c->tree;
        // The new widths come with the tree; the others are made when first asked for, and kept.
        QVERIFY(d.hasWidths(DiffTree::Widths::New));
        QVERIFY(!d.hasWidths(DiffTree::Widths::Base));
        QVERIFY(!d.hasWidths(DiffTree::Widths::NewWithBaseOnly));
        const CallTree &fresh = *d.widths(DiffTree::Widths::New);
        const CallTree &with = *d.widths(DiffTree::Widths::NewWithBaseOnly);
        const CallTree &base = *d.widths(DiffTree::Widths::Base);
        QCOMPARE(fresh.size(), d.size());
        QCOMPARE(with.size(), d.size());
        QCOMPARE(base.size(), d.size());
        const uint32_t main = childNamed(fresh, *c->frames, 0, "main");
        const uint32_t idle = childNamed(fresh, *c->frames, main, "idle");
        const uint32_t parse = childNamed(fresh, *c->frames, main, "parse");
        QVERIFY(main != kNoIndex && idle != kNoIndex && parse != kNoIndex);
        QCOMPARE(childNamed(base, *c->frames, 0, "main"), main);
        QVERIFY(d.isBaseOnly(idle));
        QVERIFY(d.isNewOnly(parse));
        QCOMPARE(fresh.total(), int64_t(95));
        QCOMPARE(fresh.node(idle).total, int64_t(0));
        QCOMPARE(with.total(), int64_t(105));
        QCOMPARE(with.node(main).total, int64_t(105));
        QCOMPARE(with.node(idle).total, int64_t(10));
        QCOMPARE(with.node(parse).total, int64_t(25));
        QCOMPARE(base.total(), int64_t(45));
        QCOMPARE(base.node(parse).total, int64_t(0));
        QCOMPARE(base.node(idle).total, int64_t(10));
        // Rows: the recursion makes three frame rows under the root in every tree.
        QCOMPARE(fresh.node(0).deepest, uint32_t(3));
        QCOMPARE(d.widths(DiffTree::Widths::Base).get(), &base);

        // Widths the view draws come made with the tree, with the same values.
        ComparisonRequest drawnFromBase = newAgainstBase();
        drawnFromBase.widths = DiffTree::Widths::Base;
        const auto b = compare(drawnFromBase);
        QVERIFY(b);
        QVERIFY(b->tree->hasWidths(DiffTree::Widths::Base));
        QVERIFY(!b->tree->hasWidths(DiffTree::Widths::NewWithBaseOnly));
        const CallTree &eager = *b->tree->widths(DiffTree::Widths::Base);
        QCOMPARE(eager.size(), base.size());
        for (uint32_t id = 0; id < eager.size(); ++id) {
            QCOMPARE(eager.node(id).total, base.node(id).total);
            QCOMPARE(eager.node(id).self, base.node(id).self);
        }
    }

    // If this fails, two weighings of one profile (a live session's flushes or ranges: one frame table, whose
    // name ranks order both trees' children) are merged differently from the same two sides over two tables,
    // merged by comparing names. Function ids are in the opposite of name order, so an id order would not do.
    void oneTableMergesAsTwoTablesDo()
    {
        ProfileBuilder b({{"cpu", "nanoseconds"}});
        const uint32_t main = b.location({b.function("main", "main.c")});
        const uint32_t zeta = b.location({b.function("zeta")});
        const uint32_t mid = b.location({b.function("mid")});
        const uint32_t alpha = b.location({b.function("alpha")});
        b.sample({zeta, main}, {10});
        b.sample({mid, zeta, main}, {7});
        b.sample({alpha, main}, {20});
        b.sample({alpha, mid, main}, {3});
        b.sample({mid, main}, {5});
        const Profile built = b.take();
        const auto whole = loadedFrom(built);
        const std::vector<float> nextWeights{1, 0, 1, 1, 0};
        const std::vector<float> baseWeights{0, 1, 1, 0, 1};
        const auto weighed = [](const std::shared_ptr<const LoadedProfile> &of, const std::vector<float> &w) {
            auto side = std::make_shared<LoadedProfile>(*of);
            side->sampleWeights = std::make_shared<const std::vector<float>>(w);
            return side;
        };
        ComparisonRequest oneTable;
        oneTable.next = weighed(whole, nextWeights);
        oneTable.base = weighed(whole, baseWeights);
        ComparisonRequest twoTables;
        twoTables.next = weighed(loadedFrom(built), nextWeights);
        twoTables.base = weighed(loadedFrom(built), baseWeights);
        const auto shared = compare(oneTable);
        const auto separate = compare(twoTables);
        QVERIFY(shared && separate);
        QCOMPARE(shared->frames, whole->frames); // one table: no union
        QVERIFY(separate->frames != twoTables.next->frames);
        QCOMPARE(shared->tree->dump(), separate->tree->dump());
        // Base: zeta→mid 7, alpha 20, mid 5; new: zeta 10, alpha 20, mid→alpha 3.
        QCOMPARE(shared->tree->dump(), std::string("<root> 32 33\n"
                                                   "  main 32 33\n"
                                                   "    alpha 20 20\n"
                                                   "    mid 5 3\n"
                                                   "      alpha 0 3\n"
                                                   "    zeta 7 10\n"
                                                   "      mid 7 0 (base only)\n"));
    }

    // If this fails, the per-function table (the window's and `report --base`'s) has wrong values or order.
    void functionsMatchReport()
    {
        const auto c = compare(newAgainstBase());
        QVERIFY(c);
        QCOMPARE(c->functions.size(), size_t(4));
        QCOMPARE(c->frames->frame(c->functions[0].frame).name, std::string("work"));
        QCOMPARE(c->functions[0].baseSelf, int64_t(35));
        QCOMPARE(c->functions[0].newSelf, int64_t(70));
        QCOMPARE(c->functions[0].baseTotal, int64_t(35)); // recursion counted once
        QCOMPARE(c->frames->frame(c->functions[2].frame).name, std::string("idle"));
        QCOMPARE(c->functions[2].newTotal, int64_t(0));
        QCOMPARE(c->functions[2].baseTotal, int64_t(10));
    }

    // If this fails, normalization does not scale the base per sample as pprof's -normalize does.
    void normalize()
    {
        ComparisonRequest r = newAgainstBase();
        r.normalize = true;
        const auto c = compare(r);
        QVERIFY(c);
        QCOMPARE(c->baseRawTotal, int64_t(45));
        QCOMPARE(c->baseScale, 95.0 / 45.0);
        // 30·95/45 = 63.33 → 63, 10·95/45 = 21.1 → 21, 5·95/45 = 10.6 → 10 (truncated per sample).
        QCOMPARE(c->baseTotal, int64_t(94));
        QCOMPARE(c->tree->node(1).baseTotal, int64_t(94));
        QVERIFY(hasNotice(*c, "Normalized"));
    }

    // If this fails, the thread filter is not carried to the base by thread name (thread ids differ per run).
    void threadsMatchedByName()
    {
        const auto make = [](int64_t tidA, int64_t tidB, int64_t a, int64_t b) {
            ProfileBuilder p({{"cpu", "nanoseconds"}});
            const uint32_t main = p.location({p.function("main")});
            const uint32_t io = p.location({p.function("io")});
            p.sample({main}, {a}, {p.numLabel("thread id", tidA), p.strLabel("thread name", "worker")});
            p.sample({io, main}, {b}, {p.numLabel("thread id", tidB), p.strLabel("thread name", "reader")});
            return p.take();
        };
        ComparisonRequest r;
        r.next = loadedFrom(make(11, 12, 40, 7));
        r.base = loadedFrom(make(901, 902, 30, 9));
        uint32_t worker = kNoIndex;
        for (uint32_t t = 0; t < r.next->threads->threads().size(); ++t)
            if (r.next->threads->threads()[t].name == "worker")
                worker = t;
        QVERIFY(worker != kNoIndex);
        r.newThreads = {worker};
        const auto c = compare(r);
        QVERIFY(c);
        QCOMPARE(c->newTotal, int64_t(40));
        QCOMPARE(c->baseTotal, int64_t(30));
    }

    // If this fails, the caller/callee view of a comparison loses one side or mismatches frames across tables.
    void callersAndCallees()
    {
        const auto c = compare(newAgainstBase());
        QVERIFY(c);
        const auto mainIds = c->frames->findByName("main");
        QCOMPARE(mainIds.size(), size_t(1));
        const DiffCallerCallee cc = diffCallerCallee(*c, mainIds.front());
        QCOMPARE(cc.baseTotal, int64_t(45));
        QCOMPARE(cc.newTotal, int64_t(95));
        QVERIFY(cc.callers.empty());
        QCOMPARE(cc.callees.size(), size_t(3));
        // Largest change first: work +35, parse +25, idle -10.
        QCOMPARE(c->frames->frame(cc.callees[0].frame).name, std::string("work"));
        QCOMPARE(cc.callees[0].base, int64_t(35));
        QCOMPARE(cc.callees[0].next, int64_t(70));
        QCOMPARE(c->frames->frame(cc.callees[2].frame).name, std::string("idle"));
        QCOMPARE(cc.callees[2].next, int64_t(0));
        // A function only the base has still gets its base side.
        const DiffCallerCallee idle = diffCallerCallee(*c, c->baseToUnion[2]);
        QCOMPARE(idle.baseSelf, int64_t(10));
        QCOMPARE(idle.newTotal, int64_t(0));
    }

    // If this fails, bad input is shown as a silently wrong picture instead of being named.
    void noticesForBadInput()
    {
        const QString file = QString::fromStdString(test::realPath(QStringLiteral("go-cpu.pprof")));
        ComparisonRequest same;
        same.next = loadedFrom(newProfile(), file);
        same.base = loadedFrom(newProfile(), file);
        auto c = compare(same);
        QVERIFY(c);
        QVERIFY(c->sameFile);
        QVERIFY(c->tree->isUnchanged());
        QVERIFY(hasNotice(*c, "same file"));

        ProfileBuilder empty({{"cpu", "nanoseconds"}});
        ComparisonRequest noBase;
        noBase.next = loadedFrom(newProfile());
        noBase.base = loadedFrom(empty.take());
        noBase.normalize = true;
        c = compare(noBase);
        QVERIFY(c);
        QCOMPARE(c->baseScale, 1.0);
        QVERIFY(hasNotice(*c, "base has no cpu samples and cannot be normalized"));
        QVERIFY(c->tree->isNewOnly(1));

        ProfileBuilder big({{"cpu", "nanoseconds"}});
        big.sample({big.location({big.function("main")})}, {1000});
        ComparisonRequest larger;
        larger.next = loadedFrom(newProfile());
        larger.base = loadedFrom(big.take());
        c = compare(larger);
        QVERIFY(c);
        QVERIFY(hasNotice(*c, "× the new one's"));
        larger.normalize = true;
        c = compare(larger);
        QVERIFY(c);
        QVERIFY(!hasNotice(*c, "the new one's"));
    }

    // If this fails, two profiles without a shared sample type are compared anyway or the error hides a side.
    void noSharedSampleType()
    {
        ProfileBuilder heap({{"alloc_space", "bytes"}});
        heap.sample({heap.location({heap.function("main")})}, {4096});
        ComparisonRequest r;
        r.next = loadedFrom(newProfile());
        r.base = loadedFrom(heap.take());
        const auto c = compareProfiles(r);
        QVERIFY(!c.ok());
        QVERIFY(c.error().message.find("new: cpu/nanoseconds, samples/count") != std::string::npos);
        QVERIFY(c.error().message.find("base: alloc_space/bytes") != std::string::npos);
        QVERIFY(sharedSampleTypes(*r.next->profile, *r.base->profile).empty());
        QCOMPARE(sharedSampleTypes(*r.next->profile, *loadedFrom(baseProfile())->profile), (std::vector<int>{0, 1}));
    }

    // If this fails, the colour intensity and the change column read the wrong relative change.
    void relativeChanges()
    {
        QCOMPARE(relativeChange(10, 10), 0.0);
        QCOMPARE(relativeChange(0, 5), 1.0);
        QCOMPARE(relativeChange(5, 0), -1.0);
        QCOMPARE(relativeChange(50, 100), 0.5);
        QCOMPARE(relativeChange(100, 75), -0.25);
        QVERIFY(!changePercent(0, 5));
        QCOMPARE(*changePercent(50, 100), 100.0);
        QCOMPARE(*changePercent(100, 75), -25.0);
    }
};

QTEST_GUILESS_MAIN(TestDiffTree)
#include "tst_diff_tree.moc"
