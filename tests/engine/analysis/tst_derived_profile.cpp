// deriveProfile and viewProfile on a hand-made profile with an inlined frame and two threads: a bottom-up profile
// reverses whole stacks (inlined frames included), a transform that empties a thread keeps the other threads'
// ordinals (so a thread filter chosen on the source still applies), and the saved view keeps only the filtered
// samples through the transforms.
#include "engine/analysis/derived_profile.h"
#include "engine/analysis/view_profile.h"
#include "tests/engine/test_support.h"

#include <QTest>

using namespace emberline;

namespace {

// main → work → inl (inlined into work) 10 on thread "a" (tid 1); main alone 5 on thread "b" (tid 2).
std::shared_ptr<const engine::LoadedProfile> makeLoaded()
{
    test::ProfileBuilder b({{"cpu", "nanoseconds"}});
    const uint32_t mainFn = b.function("main", "/src/main.c");
    const uint32_t work = b.function("work", "/src/work.c");
    const uint32_t inl = b.function("inl", "/src/work.c");
    const uint32_t workLoc = b.location({inl, work});
    const uint32_t mainLoc = b.location({mainFn});
    b.sample({workLoc, mainLoc}, {10}, {b.numLabel("thread id", 1), b.strLabel("thread name", "a")});
    b.sample({mainLoc}, {5}, {b.numLabel("thread id", 2), b.strLabel("thread name", "b")});
    auto profile = std::make_shared<const engine::Profile>(b.take());
    auto loaded = std::make_shared<engine::LoadedProfile>();
    loaded->frames = std::make_shared<const engine::FrameTable>(*profile);
    loaded->threads = std::make_shared<const engine::ThreadIndex>(*profile);
    loaded->totals = profile->totals();
    loaded->profile = profile;
    return loaded;
}

int64_t pathTotal(const engine::LoadedProfile &loaded, const std::vector<std::string> &names)
{
    const std::vector<int64_t> perStack = engine::valuesPerStack(*loaded.profile, 0, {});
    const auto tree = engine::CallTree::build(*loaded.profile, *loaded.frames, perStack);
    const uint32_t node = tree->findPath(*loaded.frames, names);
    return node == engine::kNoIndex ? -1 : tree->node(node).total;
}

} // namespace

class TestDerivedProfile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, bottom-up does not reverse the inlined frames with the rest of the stack.
    void invertedReversesWholeStacks()
    {
        const auto source = makeLoaded();
        QCOMPARE(pathTotal(*source, {"main", "work", "inl"}), int64_t(10));
        auto inverted = engine::deriveProfile(source, {{}, true});
        QVERIFY(inverted);
        QCOMPARE(inverted.value()->original, source);
        QCOMPARE(pathTotal(*inverted.value(), {"inl", "work", "main"}), int64_t(10));
        QCOMPARE(pathTotal(*inverted.value(), {"main"}), int64_t(5));
        QCOMPARE(pathTotal(*inverted.value(), {"main", "work"}), int64_t(-1));
    }

    // If this fails, a transform renumbers the threads, and the thread filter picks the wrong thread.
    void threadOrdinalsKept()
    {
        const auto source = makeLoaded();
        QCOMPARE(source->threads->threads().size(), size_t(2));
        QCOMPARE(source->threads->threads()[1].name, std::string("b"));
        auto derived = engine::deriveProfile(source, {{{engine::Transform::Kind::Ignore, "^inl$"}}, false});
        QVERIFY(derived);
        QCOMPARE(derived.value()->profile->sampleCount(), size_t(1));
        QCOMPARE(derived.value()->threads->threadOf(0), uint32_t(1)); // b, as in the source
        auto empty = engine::deriveProfile(source, {{{engine::Transform::Kind::Focus, "^nothing$"}}, false});
        QVERIFY(!empty);
        QVERIFY(empty.error().message.find("no sample is left") != std::string::npos);
    }

    // If this fails, a view that reads values sample by sample (the memory summary's sizes) shows other values than
    // the flame graph's sums per stack: plain, weighted by a time range, or from an overlay.
    void shownValuesSampleBySampleMatchPerStack()
    {
        const auto perSample = [](const engine::LoadedProfile &loaded) {
            std::vector<int64_t> perStack(loaded.profile->stacks().size(), 0);
            engine::forEachShownValue(
                loaded, 0,
                [&](uint32_t sample, int64_t value) { perStack[loaded.profile->sampleStackId(sample)] += value; },
                nullptr);
            return perStack;
        };
        auto loaded = std::make_shared<engine::LoadedProfile>(*makeLoaded());
        QCOMPARE(perSample(*loaded), engine::shownValuesPerStack(*loaded, 0, {}, nullptr));
        loaded->sampleWeights = std::make_shared<const std::vector<float>>(std::vector<float>{0.5f, 0.0f});
        QCOMPARE(perSample(*loaded), engine::shownValuesPerStack(*loaded, 0, {}, nullptr));
        engine::SampleOverlayBuilder overlay({0});
        const int64_t seven[1] = {7};
        overlay.add(1, seven);
        loaded->sampleOverlay = std::make_shared<const engine::SampleOverlay>(overlay.finish());
        const std::vector<int64_t> shown = engine::shownValuesPerStack(*loaded, 0, {}, nullptr);
        QCOMPARE(perSample(*loaded), shown);
        QCOMPARE(shown[loaded->profile->sampleStackId(1)], int64_t(7));
    }

    // If this fails, a transform in a live session loses the time range: the kept samples must keep their weights
    // (the share of each inside the range), and a chain that leaves nothing inside the range must say so.
    void timeRangeWeightsFollowTransforms()
    {
        auto weighted = std::make_shared<engine::LoadedProfile>(*makeLoaded());
        // Sample 0 (main → work → inl, 10) lies half in the range, sample 1 (main, 5) wholly.
        weighted->sampleWeights = std::make_shared<const std::vector<float>>(std::vector<float>{0.5f, 1.0f});
        weighted->totals = engine::weightedTotals(*weighted->profile, *weighted->sampleWeights);
        QCOMPARE(weighted->totals[0], int64_t(10));
        const std::shared_ptr<const engine::LoadedProfile> source = weighted;

        auto focused = engine::deriveProfile(source, {{{engine::Transform::Kind::Focus, "^work$"}}, false});
        QVERIFY2(focused, focused ? "" : focused.error().message.c_str());
        QVERIFY(focused.value()->sampleWeights);
        QCOMPARE(*focused.value()->sampleWeights, std::vector<float>{0.5f});
        QCOMPARE(focused.value()->totals[0], int64_t(5));
        const std::vector<int64_t> perStack =
            engine::weightedValuesPerStack(*focused.value()->profile, 0, {}, *focused.value()->sampleWeights, nullptr);
        int64_t sum = 0;
        for (const int64_t v : perStack)
            sum += v;
        QCOMPARE(sum, int64_t(5));

        auto ignored = engine::deriveProfile(source, {{{engine::Transform::Kind::Ignore, "^work$"}}, true});
        QVERIFY(ignored);
        QCOMPARE(*ignored.value()->sampleWeights, std::vector<float>{1.0f});
        QCOMPARE(ignored.value()->totals[0], int64_t(5));

        auto outOfRange = std::make_shared<engine::LoadedProfile>(*weighted);
        outOfRange->sampleWeights = std::make_shared<const std::vector<float>>(std::vector<float>{0.0f, 1.0f});
        outOfRange->totals = engine::weightedTotals(*outOfRange->profile, *outOfRange->sampleWeights);
        auto none = engine::deriveProfile(outOfRange, {{{engine::Transform::Kind::Focus, "^work$"}}, false});
        QVERIFY(!none);
        QVERIFY2(none.error().message.find("no sample of the selected time range") != std::string::npos,
                 none.error().message.c_str());
    }

    // If this fails, the saved view holds samples the view does not show.
    void viewKeepsFilteredSamples()
    {
        const auto source = makeLoaded();
        engine::SampleFilter threadA;
        threadA.threads = {0};
        auto view = engine::viewProfile(source, {}, threadA);
        QVERIFY(view);
        QCOMPARE(view->sampleCount(), size_t(1));
        QCOMPARE(view->totals()[0], int64_t(10));
        const std::vector<engine::Transform> hide = {{engine::Transform::Kind::Hide, "^work$"}};
        auto hidden = engine::viewProfile(source, hide, {});
        QVERIFY(hidden);
        QCOMPARE(hidden->totals()[0], int64_t(15));
        engine::SampleFilter threadB;
        threadB.threads = {1};
        const std::vector<engine::Transform> focus = {{engine::Transform::Kind::Focus, "^inl$"}};
        auto none = engine::viewProfile(source, focus, threadB);
        QVERIFY(!none);
    }
};

QTEST_GUILESS_MAIN(TestDerivedProfile)
#include "tst_derived_profile.moc"
