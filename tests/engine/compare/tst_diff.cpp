// The difference of two profiles per function (engine/compare/diff.h) on hand-made profiles where every number is
// known: matching by name across profiles with different ids, recursion counted once, normalization, ordering and
// the errors that name both profiles' sample types.
#include "engine/compare/diff.h"

#include "../test_support.h"

#include <QTest>

using namespace emberline;
using namespace emberline::engine;
using test::ProfileBuilder;

namespace {

const FunctionDelta *find(const FunctionDiff &d, const std::string &name)
{
    for (const FunctionDelta &f : d.functions)
        if (f.name == name)
            return &f;
    return nullptr;
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

} // namespace

class TestDiff : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, functions are not matched by name across profiles, or self/total per side are wrong.
    void perFunctionBaseAndNew()
    {
        const Profile base = baseProfile(), next = newProfile();
        DiffOptions o;
        o.sampleType = "cpu";
        auto d = diffFunctions(next, base, o);
        QVERIFY2(d.ok(), d.ok() ? "" : d.error().message.c_str());
        QCOMPARE(d->newTypeIndex, 0);
        QCOMPARE(d->baseTypeIndex, 1);
        QCOMPARE(d->newTotal, int64_t(95));
        QCOMPARE(d->baseTotal, int64_t(45));
        const FunctionDelta *work = find(d.value(), "work");
        QVERIFY(work);
        QCOMPARE(work->baseSelf, int64_t(35));
        QCOMPARE(work->newSelf, int64_t(70));
        QCOMPARE(work->baseTotal, int64_t(35)); // the recursive sample counted once
        QCOMPARE(work->newTotal, int64_t(70));
        const FunctionDelta *idle = find(d.value(), "idle");
        QVERIFY(idle);
        QCOMPARE(idle->selfChange(), int64_t(-10));
        QCOMPARE(idle->newTotal, int64_t(0));
        const FunctionDelta *parse = find(d.value(), "parse");
        QVERIFY(parse);
        QCOMPARE(parse->baseSelf, int64_t(0));
        QCOMPARE(parse->selfChange(), int64_t(25));
        const FunctionDelta *main = find(d.value(), "main");
        QVERIFY(main);
        QCOMPARE(main->totalChange(), int64_t(50));
        QCOMPARE(main->selfChange(), int64_t(0));
        // Largest self change first: work (+35), parse (+25), idle (-10), then main (self 0, total +50).
        QCOMPARE(d->functions.size(), size_t(4));
        QCOMPARE(d->functions[0].name, std::string("work"));
        QCOMPARE(d->functions[1].name, std::string("parse"));
        QCOMPARE(d->functions[2].name, std::string("idle"));
        QCOMPARE(d->functions[3].name, std::string("main"));
    }

    // If this fails, normalization no longer scales the base to the new total.
    void normalizeScalesBase()
    {
        const Profile base = baseProfile(), next = newProfile();
        DiffOptions o;
        o.sampleType = "samples";
        o.normalize = true;
        auto d = diffFunctions(next, base, o);
        QVERIFY(d.ok());
        QCOMPARE(d->baseRawTotal, int64_t(5));
        QCOMPARE(d->newTotal, int64_t(9));
        QCOMPARE(d->baseScale, 9.0 / 5.0);
        // 3 → 5.4 → 5, 1 → 1.8 → 1, 1 → 1: truncated per sample, as pprof scales.
        QCOMPARE(d->baseTotal, int64_t(7));
        QCOMPARE(find(d.value(), "work")->baseSelf, int64_t(6));
    }

    // If this fails, the default sample type is not the one both profiles have.
    void defaultTypeIsShared()
    {
        const Profile base = baseProfile(), next = newProfile();
        auto d = diffFunctions(next, base, {});
        QVERIFY(d.ok());
        QCOMPARE(d->sampleType, next.str(next.sampleTypes()[size_t(next.defaultSampleTypeIndex())].type));
    }

    // If this fails, a comparison that cannot be made is no longer an error that says why.
    void errorsNameBothProfiles()
    {
        ProfileBuilder other({{"alloc_space", "bytes"}});
        other.sample({other.location({other.function("f")})}, {100});
        const Profile heap = other.take(), next = newProfile();
        auto d = diffFunctions(next, heap, {});
        QVERIFY(!d.ok());
        QVERIFY2(d.error().message.find("cpu/nanoseconds") != std::string::npos &&
                     d.error().message.find("alloc_space/bytes") != std::string::npos,
                 d.error().message.c_str());
        DiffOptions unknown;
        unknown.sampleType = "wall";
        QVERIFY(!diffFunctions(next, baseProfile(), unknown).ok());
        // A base with nothing in it cannot be normalized.
        ProfileBuilder empty({{"cpu", "nanoseconds"}});
        DiffOptions normalize;
        normalize.normalize = true;
        auto e = diffFunctions(next, empty.take(), normalize);
        QVERIFY(!e.ok());
        QVERIFY(e.error().message.find("cannot be normalized") != std::string::npos);
        // Without normalization an empty base is all growth.
        ProfileBuilder empty2({{"cpu", "nanoseconds"}});
        auto g = diffFunctions(next, empty2.take(), {});
        QVERIFY(g.ok());
        QCOMPARE(find(g.value(), "work")->selfChange(), int64_t(70));
    }
};

QTEST_GUILESS_MAIN(TestDiff)
#include "tst_diff.moc"
