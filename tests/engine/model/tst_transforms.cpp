// The transform chain (engine/model/transforms.h) on a hand-made profile where every number is known: focus and
// ignore by function name, source file and binary, hide giving cost to the caller and splitting a location's
// inlined frames, collapse recursion, merge into caller, chains, and the errors (a bad regular expression, a
// chain that leaves nothing). The same semantics are checked against `go tool pprof` on real files in
// tests/app/tst_report_transforms.cpp.
#include "engine/model/transforms.h"

#include "engine/model/frame_table.h"
#include "engine/model/function_table.h"
#include "engine/model/sample_filter.h"

#include "../test_support.h"

#include <QTest>

#include <map>

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
        QCOMPARE(apply({{Kind::Focus, "b\\.c"}}).grandTotal, int64_t(11));   // by source file
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
            QCOMPARE(std::count_if(path.begin(), path.end(),
                                   [&](uint32_t f) { return frames.frame(f).name == "b"; }) > 1,
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
