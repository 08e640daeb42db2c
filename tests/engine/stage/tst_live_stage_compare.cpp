// The live stage's compare modes on hand-made flushes whose hot function is known: the newest flush against the
// previous one, the scope against a pinned flush, range B against range A, a file as the baseline, combined with
// hidden threads and the sample type, and the words for what cannot be compared.
#include "engine/model/sample_filter.h"
#include "engine/stage/live_stage.h"
#include "tests/engine/stage/last_update.h"

#include "tests/engine/live/synthetic_flush.h"

#include <QTest>

#include <mutex>

using namespace emberline;
using namespace emberline::engine;
using emberline::test::LastUpdate;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

// One function's row in a comparison; a row of -1s when the function is on neither side.
DiffFunction functionOf(const Comparison &c, const char *name)
{
    for (const DiffFunction &row : c.functions)
        if (c.frames->frame(row.frame).name == name)
            return row;
    return DiffFunction{0, -1, -1, -1, -1};
}

// The node of path main→leaf in the differential tree, or kNoIndex.
uint32_t pathNode(const DiffTree &tree, const char *leaf)
{
    for (uint32_t id = 1; id < tree.size(); ++id) {
        const DiffTree::Node &node = tree.node(id);
        if (node.depth == 2 && tree.frames()->frame(node.frame).name == leaf &&
            tree.frames()->frame(tree.node(node.parent).frame).name == "main")
            return id;
    }
    return kNoIndex;
}

// Flush 1: b is hot; flush 2: both; flush 3: c only (b stopped). 100 samples each, 1 s apart.
void addPhaseFlushes(LiveStage &stage)
{
    stage.addFlush(test::syntheticLeafFlush(1, 1 * kSecond, 7, {{"b", 90}, {"c", 10}}));
    stage.addFlush(test::syntheticLeafFlush(2, 3 * kSecond, 7, {{"b", 50}, {"c", 50}}));
    stage.addFlush(test::syntheticLeafFlush(3, 5 * kSecond, 7, {{"c", 100}}));
}

std::shared_ptr<const LiveUpdate> answer(LiveStage &stage, LastUpdate &last, LiveViewRequest request)
{
    const uint64_t generation = stage.setView(std::move(request));
    stage.waitUntilIdle();
    auto u = last.get();
    return u && u->generation == generation ? u : nullptr;
}

LiveViewRequest comparing(LiveCompareMode mode, int sampleType = 0)
{
    LiveViewRequest request;
    request.sampleType = sampleType;
    request.compare.mode = mode;
    return request;
}

// The session of `flushes` as the stage's scope sees it: the whole session, its frames and threads.
std::shared_ptr<const LoadedProfile> sessionScope(const LiveSnapshot &snap)
{
    auto loaded = std::make_shared<LoadedProfile>();
    loaded->profile = snap.profile;
    loaded->frames = std::make_shared<const FrameTable>(*snap.profile);
    loaded->threads = std::make_shared<const ThreadIndex>(*snap.profile);
    loaded->totals = snap.totals;
    loaded->live = std::shared_ptr<const LiveSnapshot>(&snap, [](const LiveSnapshot *) {});
    return loaded;
}

// The differential tree and function rows of a comparison, as text.
std::string comparisonText(const Comparison &c)
{
    std::string out = c.tree->dump();
    for (const DiffFunction &row : c.functions)
        out += c.frames->frame(row.frame).name + " " + std::to_string(row.baseSelf) + " " +
               std::to_string(row.baseTotal) + " " + std::to_string(row.newSelf) + " " + std::to_string(row.newTotal) +
               "\n";
    return out + "totals " + std::to_string(c.baseTotal) + " " + std::to_string(c.newTotal) + "\n";
}

} // namespace

class TestLiveStageCompare : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The stage derives each flush's side once (from its timeline entries) and keeps it for the next comparison.
    // Whatever the sample type and hidden threads, the result must be the comparison derived from the flushes'
    // weights over the whole session; if this fails, the kept sides show other numbers than the comparison would.
    void keptFlushSidesEqualTheWeightedComparison()
    {
        LiveProfile live;
        QVERIFY(live.add(*test::syntheticLeafFlush(1, 1 * kSecond, 7, {{"b", 90}, {"c", 10}})).ok());
        QVERIFY(live.add(*test::syntheticLeafFlush(2, 3 * kSecond, 8, {{"b", 50}, {"c", 50}})).ok());
        QVERIFY(live.add(*test::syntheticLeafFlush(3, 5 * kSecond, 7, {{"c", 70}, {"d", 30}})).ok());
        const auto snap = live.snapshot();
        const auto scope = sessionScope(*snap);
        LiveCompareRequest previous;
        previous.mode = LiveCompareMode::PreviousFlush;
        LiveCompareRequest pinned;
        pinned.mode = LiveCompareMode::Baseline;
        pinned.baseline.kind = LiveBaseline::Kind::Flush;
        pinned.baseline.flushSequence = 1;
        for (int type : {0, 1}) {
            for (const std::vector<uint32_t> &hidden : {std::vector<uint32_t>{}, std::vector<uint32_t>{1}}) {
                for (const LiveCompareRequest &request : {previous, pinned}) {
                    LiveFlushSides sides;
                    auto kept = compareLive(*snap, live.sampleHits(), scope, request, hidden, type, &sides);
                    auto weighted = compareLive(*snap, live.sampleHits(), scope, request, hidden, type);
                    QVERIFY(kept.ok() && weighted.ok());
                    QCOMPARE(comparisonText(*kept->comparison), comparisonText(*weighted->comparison));
                    QVERIFY(sides.kept() > 0);
                    // Asked again, the kept sides give the same comparison.
                    auto again = compareLive(*snap, live.sampleHits(), scope, request, hidden, type, &sides);
                    QCOMPARE(comparisonText(*again->comparison), comparisonText(*weighted->comparison));
                }
            }
        }
    }

    void offModeBringsTheAnalysisOnly()
    {
        LastUpdate last;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, last.callback());
        addPhaseFlushes(stage);
        stage.waitUntilIdle();
        auto u = last.get();
        QVERIFY(u && u->analysis);
        QVERIFY(!u->comparison.comparison);
        QVERIFY(u->compareError.empty());
    }

    void previousFlushShowsTheStartedFunctionGrownAndTheStoppedOneShrunk()
    {
        LastUpdate last;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, last.callback());
        stage.addFlush(test::syntheticLeafFlush(1, 1 * kSecond, 7, {{"b", 90}, {"c", 10}}));
        stage.waitUntilIdle();
        // One flush: nothing to compare with yet, said in words, and no picture.
        auto u = answer(stage, last, comparing(LiveCompareMode::PreviousFlush));
        QVERIFY(u);
        QVERIFY(!u->comparison.comparison);
        QVERIFY(!u->analysis);
        QVERIFY2(u->compareError.find("two flushes") != std::string::npos, u->compareError.c_str());

        // The mode holds for the flushes that follow: each one is compared with the one before it.
        stage.addFlush(test::syntheticLeafFlush(2, 3 * kSecond, 7, {{"b", 50}, {"c", 50}}));
        stage.waitUntilIdle();
        u = last.get();
        QVERIFY(u && u->comparison.comparison);
        const Comparison *c = u->comparison.comparison.get();
        QCOMPARE(u->comparison.baseLabel, std::string("flush 1"));
        QCOMPARE(u->comparison.newLabel, std::string("flush 2"));
        QCOMPARE(c->sampleType, std::string("cpu-samples"));
        QCOMPARE(c->baseTotal, int64_t(100)); // flush 1 only, not the session
        QCOMPARE(c->newTotal, int64_t(100));
        QCOMPARE(functionOf(*c, "c").baseSelf, int64_t(10));
        QCOMPARE(functionOf(*c, "c").newSelf, int64_t(50));
        QCOMPARE(functionOf(*c, "b").baseSelf, int64_t(90));
        QCOMPARE(functionOf(*c, "b").newSelf, int64_t(50));
        // Largest change first: b and c both moved by 40, main not at all.
        QCOMPARE(functionOf(*c, "main").newTotal - functionOf(*c, "main").baseTotal, int64_t(0));

        stage.addFlush(test::syntheticLeafFlush(3, 5 * kSecond, 7, {{"c", 100}}));
        stage.waitUntilIdle();
        u = last.get();
        QVERIFY(u && u->comparison.comparison);
        c = u->comparison.comparison.get();
        QCOMPARE(u->comparison.baseLabel, std::string("flush 2"));
        const uint32_t b = pathNode(*c->tree, "b");
        const uint32_t cNode = pathNode(*c->tree, "c");
        QVERIFY(b != kNoIndex && cNode != kNoIndex);
        QVERIFY(c->tree->isBaseOnly(b)); // b stopped
        QCOMPARE(c->tree->node(b).baseTotal, int64_t(50));
        QVERIFY(c->tree->node(cNode).change() > 0); // c grew
        QCOMPARE(c->tree->node(cNode).newTotal, int64_t(100));
    }

    void pinnedFlushIsComparedWithTheScope()
    {
        LastUpdate last;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, last.callback());
        addPhaseFlushes(stage);
        stage.waitUntilIdle();
        LiveViewRequest request = comparing(LiveCompareMode::Baseline);
        request.compare.baseline.kind = LiveBaseline::Kind::Flush;
        request.compare.baseline.flushSequence = 1;
        auto u = answer(stage, last, request);
        QVERIFY(u && u->comparison.comparison);
        const Comparison &c = *u->comparison.comparison;
        QCOMPARE(u->comparison.newLabel, std::string("whole session"));
        QCOMPARE(c.baseTotal, int64_t(100));
        QCOMPARE(c.newTotal, int64_t(300));
        QCOMPARE(functionOf(c, "c").newSelf, int64_t(160));
        QCOMPARE(functionOf(c, "c").baseSelf, int64_t(10));

        // The last flush as the scope, in cpu-time: c 100 × 10 ms against 10 × 10 ms; b gone.
        request.scope = LiveScope::LastFlush;
        request.sampleType = 1;
        u = answer(stage, last, request);
        QVERIFY(u && u->comparison.comparison);
        QCOMPARE(u->comparison.comparison->unit, std::string("nanoseconds"));
        QCOMPARE(functionOf(*u->comparison.comparison, "c").newSelf, int64_t(100) * 10'000'000);
        QCOMPARE(functionOf(*u->comparison.comparison, "c").baseSelf, int64_t(10) * 10'000'000);
        QCOMPARE(functionOf(*u->comparison.comparison, "b").newSelf, int64_t(0));

        // A flush that is not in the session.
        request.compare.baseline.flushSequence = 42;
        u = answer(stage, last, request);
        QVERIFY(u && !u->comparison.comparison);
        QVERIFY2(u->compareError.find("flush 42") != std::string::npos, u->compareError.c_str());
    }

    void rangeBIsComparedWithRangeA()
    {
        LastUpdate last;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, last.callback());
        addPhaseFlushes(stage);
        stage.waitUntilIdle();
        // Range A: the first flush's second (b hot); range B: the third flush's (c only).
        LiveViewRequest request = comparing(LiveCompareMode::Baseline);
        request.compare.baseline.kind = LiveBaseline::Kind::TimeRange;
        request.compare.baseline.startNs = 1 * kSecond;
        request.compare.baseline.endNs = 2 * kSecond;
        request.scope = LiveScope::SelectedRange;
        request.rangeStartNs = 5 * kSecond;
        request.rangeEndNs = 6 * kSecond;
        auto u = answer(stage, last, request);
        QVERIFY(u && u->comparison.comparison);
        const Comparison &c = *u->comparison.comparison;
        QCOMPARE(u->comparison.baseLabel, std::string("0.0–1.0 s"));
        QCOMPARE(u->comparison.newLabel, std::string("4.0–5.0 s"));
        QCOMPARE(c.baseTotal, int64_t(100));
        QCOMPARE(c.newTotal, int64_t(100));
        QCOMPARE(functionOf(c, "b").baseSelf, int64_t(90));
        QCOMPARE(functionOf(c, "b").newSelf, int64_t(0));
        QCOMPARE(functionOf(c, "c").newSelf, int64_t(100));
        QVERIFY(c.tree->isBaseOnly(pathNode(*c.tree, "b")));

        // Hidden threads apply to both ranges: with the only thread hidden nothing is left on either side, and
        // the comparison says so instead of drawing an empty picture silently.
        request.hiddenThreads = {0};
        u = answer(stage, last, request);
        QVERIFY(u && u->comparison.comparison);
        QCOMPARE(u->comparison.comparison->newTotal, int64_t(0));
        QCOMPARE(u->comparison.comparison->baseTotal, int64_t(0));
        QVERIFY(!u->comparison.comparison->notices.empty());

        // A range with no samples as the baseline: every frame shows as new, and a notice says why.
        request.hiddenThreads.clear();
        request.compare.baseline.startNs = 10 * kSecond;
        request.compare.baseline.endNs = 11 * kSecond;
        u = answer(stage, last, request);
        QVERIFY(u && u->comparison.comparison);
        QCOMPARE(u->comparison.comparison->baseTotal, int64_t(0));
        bool said = false;
        for (const std::string &notice : u->comparison.comparison->notices)
            said = said || notice.find("base has no") != std::string::npos;
        QVERIFY(said);

        // An empty range is refused in words.
        request.compare.baseline.endNs = request.compare.baseline.startNs;
        u = answer(stage, last, request);
        QVERIFY(u && !u->comparison.comparison);
        QVERIFY2(u->compareError.find("empty") != std::string::npos, u->compareError.c_str());
    }

    void fileBaselineNeedsASharedSampleType()
    {
        LastUpdate last;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, last.callback());
        addPhaseFlushes(stage);
        stage.waitUntilIdle();
        // A file of the session's own first flush: the session's c grew from 10 to 160 samples.
        const auto flush = test::syntheticLeafFlush(1, 1 * kSecond, 7, {{"b", 90}, {"c", 10}});
        auto file = std::make_shared<LoadedProfile>();
        file->path = QStringLiteral("/tmp/base.pprof");
        file->profile = flush->profile;
        file->frames = std::make_shared<const FrameTable>(*file->profile);
        file->threads = std::make_shared<const ThreadIndex>(*file->profile);
        LiveViewRequest request = comparing(LiveCompareMode::Baseline);
        request.compare.baseline.kind = LiveBaseline::Kind::File;
        request.compare.baseline.file = file;
        auto u = answer(stage, last, request);
        QVERIFY(u && u->comparison.comparison);
        QCOMPARE(u->comparison.baseLabel, std::string("base.pprof"));
        QCOMPARE(functionOf(*u->comparison.comparison, "c").baseSelf, int64_t(10));
        QCOMPARE(functionOf(*u->comparison.comparison, "c").newSelf, int64_t(160));

        // A file of another kind of samples: the error names both sets of types.
        auto other = std::make_shared<Profile>();
        other->sampleTypes().push_back({other->intern("alloc-space"), other->intern("bytes")});
        auto otherFile = std::make_shared<LoadedProfile>(*file);
        otherFile->profile = other;
        otherFile->frames = std::make_shared<const FrameTable>(*other);
        otherFile->threads = std::make_shared<const ThreadIndex>(*other);
        request.compare.baseline.file = otherFile;
        u = answer(stage, last, request);
        QVERIFY(u && !u->comparison.comparison);
        QVERIFY2(u->compareError.find("alloc-space") != std::string::npos, u->compareError.c_str());
        QVERIFY2(u->compareError.find("cpu-samples") != std::string::npos, u->compareError.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLiveStageCompare)
#include "tst_live_stage_compare.moc"
