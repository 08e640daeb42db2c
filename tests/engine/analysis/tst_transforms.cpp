// The transform chain (engine/analysis/transforms.h) on a hand-made profile where every number is known: focus and
// ignore by function name, source file and binary, hide giving cost to the caller and splitting a location's
// inlined frames, collapse recursion, merge into caller, chains, and the errors (a bad regular expression, a
// chain that leaves nothing). The same semantics are checked against `go tool pprof` on real files in
// tests/app/tst_report_transforms.cpp.
#include "engine/analysis/transforms.h"

#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"
#include "engine/model/python_frame.h"
#include "engine/model/sample_filter.h"

#include "../test_support.h"

#include <QTest>

#include <map>
#include <random>

using namespace emberline;
using namespace emberline::engine;
using Kind = Transform::Kind;

namespace {

// main → a (10), main → a → malloc (4), main → b (6), main → b → malloc (2), main → b → b → b (3), and
// main → work with helper inlined (5). malloc lives in libc.so.6; a in a.c.
Profile sampleProfile()
{
    test::ProfileBuilder b({{"cpu", "nanoseconds"}});
    const uint32_t exe = b.mapping("/usr/bin/app", 0x1000, 0x9000);
    const uint32_t libc = b.mapping("/usr/lib/libc.so.6", 0x10000, 0x90000);
    const uint32_t main = b.location({b.function("main", "main.c")}, exe, 0x1100);
    const uint32_t a = b.location({b.function("a", "a.c")}, exe, 0x1200);
    const uint32_t fb = b.function("b", "b.c");
    const uint32_t bOuter = b.location({fb}, exe, 0x1300);
    const uint32_t bInner = b.location({fb}, exe, 0x1310);
    const uint32_t malloc = b.location({b.function("malloc", "malloc.c")}, libc, 0x10100);
    const uint32_t inlined = b.location({b.function("helper", "work.c"), b.function("work", "work.c")}, exe, 0x1400);
    b.sample({a, main}, {10});
    b.sample({malloc, a, main}, {4});
    b.sample({bOuter, main}, {6});
    b.sample({malloc, bOuter, main}, {2});
    b.sample({bInner, bInner, bOuter, main}, {3});
    b.sample({inlined, main}, {5});
    return b.take();
}

struct Costs {
    int64_t grandTotal = 0;
    std::map<std::string, std::pair<int64_t, int64_t>> functions; // self, total
};

Costs costs(const Profile &p)
{
    const FrameTable frames(p);
    const auto table = FunctionTable::build(p, frames, valuesPerStack(p, 0, {}));
    Costs c;
    c.grandTotal = table->grandTotal();
    for (const auto &row : table->rows())
        c.functions[frames.frame(row.frame).name] = {row.self, row.total};
    return c;
}

Costs apply(std::vector<Transform> chain)
{
    auto out = applyTransforms(sampleProfile(), chain);
    if (!out) {
        qWarning("%s", out.error().message.c_str());
        return {};
    }
    return costs(out.value());
}

using Pair = std::pair<int64_t, int64_t>;

// Many random stacks over few functions, so that paths meet: recursion, inlined pairs, two binaries, frames without
// symbols and samples with no frame at all.
Profile randomProfile(unsigned seed)
{
    std::mt19937 rng(seed);
    test::ProfileBuilder b({{"cpu", "nanoseconds"}});
    const uint32_t exe = b.mapping("/usr/bin/app", 0x1000, 0x9000);
    const uint32_t lib = b.mapping("/usr/lib/libz.so.1", 0x10000, 0x90000);
    std::vector<uint32_t> locations;
    const char *names[] = {"main", "run", "parse", "eval", "alloc", "free", "hash", "read"};
    std::vector<uint32_t> functions;
    for (const char *name : names)
        functions.push_back(b.function(name, std::string(name) + ".c"));
    for (uint32_t f = 0; f < functions.size(); ++f) {
        locations.push_back(b.location({functions[f]}, f < 6 ? exe : lib, 0x1000 + 0x10 * f));
        locations.push_back(b.location({functions[f]}, f < 6 ? exe : lib, 0x1008 + 0x10 * f)); // another line
    }
    locations.push_back(b.location({functions[6], functions[3]}, exe, 0x2000)); // hash inlined into eval
    locations.push_back(b.location({}, lib, 0x20000));                          // no symbols
    for (int i = 0; i < 400; ++i) {
        std::vector<uint32_t> stack(rng() % 12);
        for (uint32_t &l : stack)
            l = locations[rng() % locations.size()];
        b.sample(stack, {static_cast<int64_t>(1 + rng() % 50)});
    }
    return b.take();
}

// The call tree of `profile` through `chain` both ways: built from the transformed profile's stacks, and made from
// the untransformed tree by transformCallTree. Empty strings when the chain leaves nothing; "declined" when the
// tree transform cannot follow it.
std::pair<std::string, std::string> treesBothWays(const Profile &profile, const std::vector<Transform> &chain)
{
    const FrameTable frames(profile);
    const auto tree = CallTree::build(profile, frames, valuesPerStack(profile, 0, {}));
    auto out = applyTransforms(profile, chain);
    std::string built;
    if (out) {
        const FrameTable outFrames(out.value());
        built = CallTree::build(out.value(), outFrames, valuesPerStack(out.value(), 0, {}))->dump(outFrames);
    }
    const auto mapped = transformCallTree(profile, frames, *tree, chain);
    if (!mapped)
        return {built, "declined"};
    return {built, mapped->total() == 0 ? std::string() : mapped->dump(frames)};
}

} // namespace

class TestTransforms : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, focus keeps the wrong samples: by name, by source file and by binary, as pprof matches.
    void focus()
    {
        Costs c = apply({{Kind::Focus, "^a$"}});
        QCOMPARE(c.grandTotal, int64_t(14));
        QCOMPARE(c.functions["a"], Pair(10, 14));
        QVERIFY(!c.functions.count("b"));
        QCOMPARE(apply({{Kind::Focus, "b\\.c"}}).grandTotal, int64_t(11));    // by source file
        QCOMPARE(apply({{Kind::Focus, "libc\\.so"}}).grandTotal, int64_t(6)); // by binary
        QCOMPARE(apply({{Kind::Focus, "helper"}}).grandTotal, int64_t(5));    // an inlined frame
    }

    // If this fails, ignore no longer drops every sample with a matching frame, or drops others.
    void ignore()
    {
        Costs c = apply({{Kind::Ignore, "malloc"}});
        QCOMPARE(c.grandTotal, int64_t(10 + 6 + 3 + 5));
        QVERIFY(!c.functions.count("malloc"));
        QCOMPARE(c.functions["b"], Pair(9, 9));
    }

    // If this fails, hide no longer gives a hidden frame's cost to its caller (totals must not change).
    void hide()
    {
        Costs c = apply({{Kind::Hide, "malloc"}});
        QCOMPARE(c.grandTotal, int64_t(30));
        QVERIFY(!c.functions.count("malloc"));
        QCOMPARE(c.functions["a"], Pair(14, 14));
        QCOMPARE(c.functions["b"], Pair(11, 11));
        // An inlined frame hidden: its location keeps the caller's line, so work takes the self.
        c = apply({{Kind::Hide, "^helper$"}});
        QCOMPARE(c.functions["work"], Pair(5, 5));
        QVERIFY(!c.functions.count("helper"));
        // Hiding the root: every stack loses main, nothing is dropped.
        c = apply({{Kind::Hide, "^main$"}});
        QCOMPARE(c.grandTotal, int64_t(30));
        QVERIFY(!c.functions.count("main"));
    }

    // If this fails, hiding every frame of a sample no longer drops it (pprof drops samples left empty).
    void hideEverythingOfSomeSamples()
    {
        Costs c = apply({{Kind::Hide, "^(main|a)$"}});
        QCOMPARE(c.grandTotal, int64_t(30 - 10));
        QCOMPARE(c.functions["malloc"], Pair(6, 6));
    }

    // If this fails, collapse recursion no longer folds b → b → b into one call of b.
    // If this fails, the interpreter's kept frames no longer go from the views: only the functions marked as the
    // interpreter's (their system name), not an unmarked one of the same name, and their cost goes to the Python
    // caller.
    void hideInterpreter()
    {
        test::ProfileBuilder b({{"cpu", "nanoseconds"}});
        const uint32_t python = b.mapping("/usr/bin/python3.12", 0x400000, 0x900000);
        const std::string mark(kInterpreterSystemNamePrefix);
        const uint32_t eval = b.location(
            {b.functionWithSystemName("_PyEval_EvalFrameDefault", mark + "_PyEval_EvalFrameDefault", "ceval.c")},
            python, 0x500000);
        const uint32_t forward = b.location(
            {b.functionWithSystemName("_PyEval_Vector", mark + "_PyEval_Vector", "ceval.c")}, python, 0x510000);
        const uint32_t outerVector = b.location({b.function("_PyEval_Vector", "ceval.c")}, python, 0x510000);
        const uint32_t main = b.location({b.function("main", "python.c")}, python, 0x420000);
        const uint32_t module = b.location({b.function("<module>", "app.py")}, kNoIndex, 1);
        const uint32_t hot = b.location({b.function("hot", "app.py")}, kNoIndex, 2);
        const uint32_t encode = b.location({b.function("encoder_listencode_obj", "_json.c")}, python, 0x600000);
        // leaf first: hot in an eval frame of its own, called from <module>'s; json's C encoder between two.
        b.sample({hot, eval, forward, module, eval, outerVector, main}, {7});
        b.sample({hot, eval, encode, module, eval, outerVector, main}, {3});
        b.sample({module, eval, outerVector, main}, {2});
        const Profile p = b.take();
        QVERIFY(hasInterpreterFunctions(p));
        const std::vector<Transform> hideInterpreter{{Kind::HideInterpreter, {}}};
        auto out = applyTransforms(p, hideInterpreter);
        QVERIFY(out);
        Costs c = costs(out.value());
        QCOMPARE(c.grandTotal, int64_t(12));
        QVERIFY(!c.functions.count("_PyEval_EvalFrameDefault"));
        QCOMPARE(c.functions["hot"], Pair(10, 10));
        QCOMPARE(c.functions["encoder_listencode_obj"], Pair(0, 3));
        QCOMPARE(c.functions["<module>"], Pair(2, 12));
        QCOMPARE(c.functions["_PyEval_Vector"], Pair(0, 12)); // the unmarked one, under <module>, stays
        QCOMPARE(QString::fromStdString(Transform{Kind::HideInterpreter, {}}.describe()),
                 QStringLiteral("hide the Python interpreter's frames"));
        // The tree transform declines (one frame, _PyEval_Vector, is marked in one place and not in another) or agrees.
        const auto [built, mapped] = treesBothWays(p, hideInterpreter);
        QVERIFY(!built.empty());
        QVERIFY2(mapped == "declined" || mapped == built, mapped.c_str());
        // A profile without marked functions is left whole.
        QVERIFY(!hasInterpreterFunctions(sampleProfile()));
        QCOMPARE(apply({{Kind::HideInterpreter, {}}}).grandTotal, int64_t(30));
    }

    void collapseRecursion()
    {
        auto out = applyTransforms(sampleProfile(), std::vector<Transform>{{Kind::CollapseRecursion, "b"}});
        QVERIFY(out);
        const Costs c = costs(out.value());
        QCOMPARE(c.functions.at("b"), Pair(9, 11));
        // No stack of the result holds b twice.
        const FrameTable frames(out.value());
        std::vector<uint32_t> path;
        for (uint32_t s = 0; s < out->stacks().size(); ++s) {
            path.clear();
            frames.expandRootFirst(out->stacks().stack(s), path);
            QCOMPARE(std::count_if(path.begin(), path.end(), [&](uint32_t f) { return frames.frame(f).name == "b"; }) >
                         1,
                     false);
        }
    }

    // If this fails, merge into caller no longer removes the function and gives its self to its caller.
    void mergeIntoCaller()
    {
        Costs c = apply({{Kind::MergeIntoCaller, "b"}});
        QVERIFY(!c.functions.count("b"));
        QCOMPARE(c.functions["main"], Pair(6 + 3, 30));
        QCOMPARE(c.functions["malloc"], Pair(6, 6));
        // By exact name, not by pattern.
        c = apply({{Kind::MergeIntoCaller, "ma"}});
        QCOMPARE(c.functions["main"], Pair(0, 30));
    }

    // If this fails, the steps of a chain are not applied in order on each other's results.
    void chain()
    {
        Costs c = apply({{Kind::Hide, "malloc"}, {Kind::Focus, "malloc"}});
        QCOMPARE(c.grandTotal, int64_t(0)); // the focus runs after the hide: nothing matches (error, no profile)
        c = apply({{Kind::Focus, "malloc"}, {Kind::Hide, "malloc"}});
        QCOMPARE(c.grandTotal, int64_t(6));
        QCOMPARE(c.functions["a"], Pair(4, 4));
        QCOMPARE(c.functions["b"], Pair(2, 2));
    }

    // If this fails, a bad regular expression or an empty result is no longer a clear error.
    void errors()
    {
        auto bad = applyTransforms(sampleProfile(), std::vector<Transform>{{Kind::Hide, "a("}});
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.find("hide 'a('") != std::string::npos, bad.error().message.c_str());
        QVERIFY(bad.error().message.find("regular expression") != std::string::npos);
        auto empty = applyTransforms(sampleProfile(), std::vector<Transform>{{Kind::Focus, "nothing-matches"}});
        QVERIFY(!empty);
        QVERIFY2(empty.error().message.find("no sample is left after focus 'nothing-matches'") != std::string::npos,
                 empty.error().message.c_str());
        std::atomic<bool> cancel{true};
        auto cancelled = applyTransforms(sampleProfile(), std::vector<Transform>{{Kind::Focus, "a"}}, &cancel);
        QVERIFY(!cancelled && cancelled.error().code == Error::Code::Cancelled);
    }

    // If this fails, a transformed call tree made from the untransformed one (what the window draws after a transform)
    // differs from the tree of the transformed profile: every one- and two-step chain of Focus, Ignore, Hide and
    // Merge over every function, on random profiles with recursion, inlining and empty stacks.
    void treeTransformEqualsProfileTransform()
    {
        const char *names[] = {"main", "run", "parse", "eval", "alloc", "free", "hash", "read"};
        const Kind kinds[] = {Kind::Focus, Kind::Ignore, Kind::Hide, Kind::MergeIntoCaller};
        size_t compared = 0;
        for (unsigned seed = 1; seed <= 3; ++seed) {
            const Profile profile = randomProfile(seed);
            for (const Kind first : kinds) {
                for (const char *a : names) {
                    const std::string pa = first == Kind::MergeIntoCaller ? a : "^" + std::string(a) + "$";
                    const auto [built, mapped] = treesBothWays(profile, {{first, pa}});
                    QVERIFY2(mapped != "declined", pa.c_str());
                    QCOMPARE(mapped, built);
                    ++compared;
                    for (const Kind second : kinds) {
                        const char *b = names[(seed + compared) % std::size(names)];
                        const std::string pb = second == Kind::MergeIntoCaller ? b : "^" + std::string(b) + "$";
                        const auto [built2, mapped2] = treesBothWays(profile, {{first, pa}, {second, pb}});
                        std::string chain = pa;
                        chain += " then ";
                        chain += pb;
                        QVERIFY2(mapped2 != "declined", chain.c_str());
                        QCOMPARE(mapped2, built2);
                        ++compared;
                    }
                }
            }
            // Patterns over files and binaries that every frame answers alike.
            for (const char *pattern : {"libz", "app", "eval\\.c|read", "a"}) {
                for (const Kind kind : {Kind::Focus, Kind::Ignore, Kind::Hide}) {
                    const auto [built, mapped] = treesBothWays(profile, {{kind, pattern}});
                    if (mapped != "declined") {
                        QCOMPARE(mapped, built);
                        ++compared;
                    }
                }
            }
        }
        QVERIFY(compared > 400);
        // The hand-made profile: hiding every frame of some samples, an inlined frame, recursion.
        for (const auto &chain : std::vector<std::vector<Transform>>{{{Kind::Hide, "^(main|a)$"}},
                                                                     {{Kind::Hide, "^helper$"}},
                                                                     {{Kind::Focus, "^b$"}, {Kind::Hide, "^b$"}},
                                                                     {{Kind::Ignore, "malloc"}}}) {
            const auto [built, mapped] = treesBothWays(sampleProfile(), chain);
            QCOMPARE(mapped, built);
        }
    }

    // If this fails, the tree transform draws a tree it cannot know to be right: a frame standing for two functions
    // that a pattern tells apart by file or binary, collapse recursion, a bad pattern, or a tree not in build order.
    void treeTransformDeclinesWhatItCannotFollow()
    {
        test::ProfileBuilder b({{"cpu", "nanoseconds"}});
        const uint32_t exe = b.mapping("/usr/bin/app", 0x1000, 0x9000);
        const uint32_t lib = b.mapping("/usr/lib/libx.so", 0x10000, 0x90000);
        const uint32_t inX = b.location({b.function("dup", "x.c")}, exe, 0x1100);
        const uint32_t inY = b.location({b.function("dup", "y.c")}, lib, 0x10100);
        const uint32_t top = b.location({b.function("top", "top.c")}, exe, 0x1200);
        b.sample({inX, top}, {3});
        b.sample({inY, top}, {4});
        const Profile profile = b.take();
        const FrameTable frames(profile);
        const auto tree = CallTree::build(profile, frames, valuesPerStack(profile, 0, {}));
        QVERIFY(!transformCallTree(profile, frames, *tree, std::vector<Transform>{{Kind::Focus, "x\\.c"}}));
        QVERIFY(!transformCallTree(profile, frames, *tree, std::vector<Transform>{{Kind::Hide, "libx"}}));
        QVERIFY(!transformCallTree(profile, frames, *tree, std::vector<Transform>{{Kind::CollapseRecursion, "top"}}));
        QVERIFY(!transformCallTree(profile, frames, *tree, std::vector<Transform>{{Kind::Hide, "a("}}));
        // By name, both functions called dup answer alike: the tree follows.
        const auto byName = transformCallTree(profile, frames, *tree, std::vector<Transform>{{Kind::Hide, "^dup$"}});
        QVERIFY(byName);
        QCOMPARE(byName->dump(frames), std::string("<root> 0 7\n  top 7 7\n"));
        std::atomic<bool> cancel{true};
        QVERIFY(!transformCallTree(profile, frames, *tree, std::vector<Transform>{{Kind::Hide, "^dup$"}}, &cancel));
    }

    // If this fails, the transformed profile no longer keeps the source's labels and sample count of kept ones.
    void keepsLabelsAndTables()
    {
        test::ProfileBuilder b({{"samples", "count"}});
        const uint32_t f = b.location({b.function("f")});
        const uint32_t g = b.location({b.function("g")});
        b.sample({f, g}, {1}, {b.numLabel("thread id", 7)});
        b.sample({g}, {2}, {b.numLabel("thread id", 8)});
        auto out = applyTransforms(b.take(), std::vector<Transform>{{Kind::Focus, "^f$"}});
        QVERIFY(out);
        QCOMPARE(out->sampleCount(), size_t(1));
        QCOMPARE(out->sampleLabels(0).size(), size_t(1));
        QCOMPARE(out->sampleLabels(0)[0].num, int64_t(7));
        QCOMPARE(out->str(out->sampleLabels(0)[0].key), std::string("thread id"));
    }
};

QTEST_GUILESS_MAIN(TestTransforms)
#include "tst_transforms.moc"
