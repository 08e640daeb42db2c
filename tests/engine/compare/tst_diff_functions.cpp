// The per-function table of a comparison (Comparison::functions, engine/compare/comparison.h), which the compare
// view shows and `emberline report --base` prints, on hand-made profiles where every number is known: matching by
// name across profiles with different ids, recursion counted once, normalization, ordering, the table built without
// call trees (functionsOnly) agreeing with the one read off them, and the errors that name both profiles' sample
// types.
#include "engine/compare/comparison.h"

#include "../test_support.h"

#include <QTest>

using namespace emberline;
using namespace emberline::engine;
using test::ProfileBuilder;

namespace {

const DiffFunction *find(const Comparison &c, const std::string &name)
{
    for (const DiffFunction &f : c.functions)
        if (c.frames->frame(f.frame).name == name)
            return &f;
    return nullptr;
}

std::string nameOf(const Comparison &c, size_t row)
{
    return c.frames->frame(c.functions[row].frame).name;
}

// main → work (self 30), main → idle (self 10), recursion work → work (self 5).
Profile baseProfile()
{
    ProfileBuilder b({{"samples", "count"}, {"cpu", "nanoseconds"}});
    const uint32_t main = b.location({b.function("main")});
    const uint32_t work = b.location({b.function("work")});
    const uint32_t idle = b.location({b.function("idle")});
    b.sample({work, main}, {3, 30});
    b.sample({idle, main}, {1, 10});
    b.sample({work, work, main}, {1, 5});
    return b.take();
}

// Other ids, other order: idle gone, work doubled, a new function `parse`.
Profile newProfile()
{
    ProfileBuilder b({{"cpu", "nanoseconds"}, {"samples", "count"}});
    const uint32_t parse = b.location({b.function("parse")});
    const uint32_t work = b.location({b.function("work")});
    const uint32_t main = b.location({b.function("main")});
    b.sample({work, main}, {60, 6});
    b.sample({parse, main}, {25, 2});
    b.sample({work, work, main}, {10, 1});
    return b.take();
}

ComparisonRequest request(Profile next, Profile base, const std::string &sampleType = {}, bool functionsOnly = false)
{
    ComparisonRequest r;
    r.next = makeLoadedProfile(std::move(next));
    r.base = makeLoadedProfile(std::move(base));
    r.sampleType = sampleType;
    r.functionsOnly = functionsOnly;
    return r;
}

} // namespace

class TestDiffFunctions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void perFunctionBaseAndNew_data()
    {
        QTest::addColumn<bool>("functionsOnly");
        QTest::newRow("read off the call trees") << false;
        QTest::newRow("functions only") << true;
    }

    // If this fails, functions are not matched by name across profiles, or self/total per side are wrong.
    void perFunctionBaseAndNew()
    {
        QFETCH(bool, functionsOnly);
        auto d = compareProfiles(request(newProfile(), baseProfile(), "cpu", functionsOnly));
        QVERIFY2(d.ok(), d.ok() ? "" : d.error().message.c_str());
        const Comparison &c = *d.value();
        QCOMPARE(c.newTypeIndex, 0);
        QCOMPARE(c.baseTypeIndex, 1);
        QCOMPARE(c.newTotal, int64_t(95));
        QCOMPARE(c.baseTotal, int64_t(45));
        const DiffFunction *work = find(c, "work");
        QVERIFY(work);
        QCOMPARE(work->baseSelf, int64_t(35));
        QCOMPARE(work->newSelf, int64_t(70));
        QCOMPARE(work->baseTotal, int64_t(35)); // the recursive sample counted once
        QCOMPARE(work->newTotal, int64_t(70));
        const DiffFunction *idle = find(c, "idle");
        QVERIFY(idle);
        QCOMPARE(idle->selfChange(), int64_t(-10));
        QCOMPARE(idle->newTotal, int64_t(0));
        const DiffFunction *parse = find(c, "parse");
        QVERIFY(parse);
        QCOMPARE(parse->baseSelf, int64_t(0));
        QCOMPARE(parse->selfChange(), int64_t(25));
        const DiffFunction *main = find(c, "main");
        QVERIFY(main);
        QCOMPARE(main->totalChange(), int64_t(50));
        QCOMPARE(main->selfChange(), int64_t(0));
        // Largest self change first: work (+35), parse (+25), idle (-10), then main (self 0, total +50).
        QCOMPARE(c.functions.size(), size_t(4));
        QCOMPARE(nameOf(c, 0), std::string("work"));
        QCOMPARE(nameOf(c, 1), std::string("parse"));
        QCOMPARE(nameOf(c, 2), std::string("idle"));
        QCOMPARE(nameOf(c, 3), std::string("main"));
        // Only the table: no tree to draw.
        QCOMPARE(c.tree == nullptr, functionsOnly);
    }

    // If this fails, a function that changed in total only is not ordered by its total change, or equal changes
    // are not ordered by name.
    void orderedByTotalChangeThenName()
    {
        ProfileBuilder b({{"cpu", "nanoseconds"}});
        const uint32_t main = b.location({b.function("main")});
        const uint32_t outer = b.location({b.function("outer")});
        const uint32_t beta = b.location({b.function("beta")});
        const uint32_t alpha = b.location({b.function("alpha")});
        b.sample({beta, outer, main}, {20});
        b.sample({alpha, main}, {20});
        ProfileBuilder a({{"cpu", "nanoseconds"}});
        a.sample({a.location({a.function("main")})}, {1});
        auto d = compareProfiles(request(b.take(), a.take(), {}, true));
        QVERIFY(d.ok());
        // alpha and beta: +20 self each (by name); main: self -1, total +39; outer: self 0, total +20.
        QCOMPARE(d.value()->functions.size(), size_t(4));
        QCOMPARE(nameOf(*d.value(), 0), std::string("alpha"));
        QCOMPARE(nameOf(*d.value(), 1), std::string("beta"));
        QCOMPARE(nameOf(*d.value(), 2), std::string("main"));
        QCOMPARE(nameOf(*d.value(), 3), std::string("outer"));
    }

    void normalizeScalesBase_data() { perFunctionBaseAndNew_data(); }

    // If this fails, normalization no longer scales the base to the new total.
    void normalizeScalesBase()
    {
        QFETCH(bool, functionsOnly);
        ComparisonRequest r = request(newProfile(), baseProfile(), "samples", functionsOnly);
        r.normalize = true;
        auto d = compareProfiles(r);
        QVERIFY(d.ok());
        const Comparison &c = *d.value();
        QCOMPARE(c.baseRawTotal, int64_t(5));
        QCOMPARE(c.newTotal, int64_t(9));
        QCOMPARE(c.baseScale, 9.0 / 5.0);
        // 3 → 5.4 → 5, 1 → 1.8 → 1, 1 → 1: truncated per sample, as pprof scales.
        QCOMPARE(c.baseTotal, int64_t(7));
        QCOMPARE(find(c, "work")->baseSelf, int64_t(6));
    }

    // If this fails, the default sample type is not the one both profiles have.
    void defaultTypeIsShared()
    {
        const Profile next = newProfile();
        const std::string &defaultType = next.str(next.sampleTypes()[size_t(next.defaultSampleTypeIndex())].type);
        auto d = compareProfiles(request(newProfile(), baseProfile()));
        QVERIFY(d.ok());
        QCOMPARE(d.value()->sampleType, defaultType);
        auto shared = sharedSampleType(next, baseProfile(), {});
        QVERIFY(shared.ok());
        QCOMPARE(shared->first, next.defaultSampleTypeIndex());
    }

    // If this fails, a comparison that cannot be made is no longer an error that says why, or an empty base is
    // not all growth.
    void errorsNameBothProfiles()
    {
        ProfileBuilder other({{"alloc_space", "bytes"}});
        other.sample({other.location({other.function("f")})}, {100});
        auto d = compareProfiles(request(newProfile(), other.take()));
        QVERIFY(!d.ok());
        QVERIFY2(d.error().message.find("cpu/nanoseconds") != std::string::npos &&
                     d.error().message.find("alloc_space/bytes") != std::string::npos,
                 d.error().message.c_str());
        QVERIFY(!compareProfiles(request(newProfile(), baseProfile(), "wall")).ok());
        // A base with nothing in it is not scaled (`report --base --normalize` makes this an error) and says so.
        ProfileBuilder empty({{"cpu", "nanoseconds"}});
        ComparisonRequest normalize = request(newProfile(), empty.take());
        normalize.normalize = true;
        auto e = compareProfiles(normalize);
        QVERIFY(e.ok());
        QCOMPARE(e.value()->baseRawTotal, int64_t(0));
        QCOMPARE(e.value()->baseScale, 1.0);
        bool said = false;
        for (const std::string &notice : e.value()->notices)
            said = said || notice.find("cannot be normalized") != std::string::npos;
        QVERIFY(said);
        // Without normalization an empty base is all growth.
        ProfileBuilder empty2({{"cpu", "nanoseconds"}});
        auto g = compareProfiles(request(newProfile(), empty2.take(), {}, true));
        QVERIFY(g.ok());
        QCOMPARE(find(*g.value(), "work")->selfChange(), int64_t(70));
    }
};

QTEST_GUILESS_MAIN(TestDiffFunctions)
#include "tst_diff_functions.moc"
