// Per-line costs (engine/analysis/line_table.h) on a hand-made profile where every number is known: the leaf line
// takes self, a line's total counts a sample once even in recursion, an inlined function has lines of its own
// and lends its call line to its caller, and functions are matched by the predicate only.
#include "engine/analysis/line_table.h"

#include "engine/model/sample_filter.h"

#include <QTest>

using namespace emberline::engine;

namespace {

uint32_t addFunction(Profile &p, const std::string &name, const std::string &file, int64_t start)
{
    const auto index = static_cast<uint32_t>(p.functions().size());
    p.functions().push_back(Function{index + 1u, p.intern(name), p.intern(name), p.intern(file), start});
    return index;
}

// `lines` as (function, line), inlined callee first.
uint32_t addLocation(Profile &p, const std::vector<std::pair<uint32_t, int64_t>> &lines)
{
    const auto index = static_cast<uint32_t>(p.locations().size());
    Location loc;
    loc.id = index + 1u;
    for (const auto &[fn, line] : lines)
        loc.lines.push_back(Line{fn, line, 0});
    p.locations().push_back(std::move(loc));
    return index;
}

// main → work at four lines; helper inlined into work at line 104; work recursing at line 105.
Profile sampleProfile()
{
    Profile p;
    p.sampleTypes().push_back({p.intern("cpu"), p.intern("nanoseconds")});
    const uint32_t main = addFunction(p, "main", "/src/main.c", 1);
    const uint32_t work = addFunction(p, "work", "/src/work.c", 100);
    const uint32_t helper = addFunction(p, "helper", "/src/work.c", 110);
    const uint32_t lMain = addLocation(p, {{main, 5}});
    const uint32_t lWorkA = addLocation(p, {{work, 101}});
    const uint32_t lWorkB = addLocation(p, {{work, 103}});
    const uint32_t lInlined = addLocation(p, {{helper, 111}, {work, 104}});
    const uint32_t lRecurse = addLocation(p, {{work, 105}});
    auto add = [&](std::vector<uint32_t> stack, int64_t v) { p.addSample(stack, std::vector<int64_t>{v}); };
    add({lWorkA, lMain}, 10);
    add({lInlined, lMain}, 5);
    add({lWorkB, lRecurse, lMain}, 3);
    add({lRecurse, lRecurse, lMain}, 2);
    add({lWorkA, lMain}, 1); // a second sample of the same stack adds up
    return p;
}

const FunctionLines *find(const std::vector<FunctionLines> &all, const std::string &name)
{
    for (const FunctionLines &f : all)
        if (f.name == name)
            return &f;
    return nullptr;
}

std::vector<FunctionLines> build(const Profile &p, const std::string &only = {})
{
    const std::vector<int64_t> perStack = valuesPerStack(p, 0, {});
    auto lines = LineTable::build(p, perStack, [&](const std::string &name) { return only.empty() || name == only; });
    return lines ? *lines : std::vector<FunctionLines>{};
}

} // namespace

class TestLineTable : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a line's self or total is wrong: self must go to the leaf line only, a recursive call line
    // must count a sample once, and the function's total must count each sample once across its lines.
    void linesOfWork()
    {
        const Profile p = sampleProfile();
        const auto all = build(p);
        const FunctionLines *work = find(all, "work");
        QVERIFY(work);
        QCOMPARE(work->file, std::string("/src/work.c"));
        QCOMPARE(work->startLine, int64_t(100));
        QCOMPARE(work->self, int64_t(11 + 3 + 2));
        QCOMPARE(work->total, int64_t(11 + 5 + 3 + 2));
        QCOMPARE(work->lines.size(), size_t(4));
        const std::vector<std::tuple<int64_t, int64_t, int64_t>> expected = {
            {101, 11, 11}, {103, 3, 3}, {104, 0, 5}, {105, 2, 5}};
        for (size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(work->lines[i].line, std::get<0>(expected[i]));
            QCOMPARE(work->lines[i].self, std::get<1>(expected[i]));
            QCOMPARE(work->lines[i].total, std::get<2>(expected[i]));
        }
    }

    // If this fails, an inlined function no longer has its own lines (its self would be lost or given to work).
    void inlinedFunctionHasItsOwnLines()
    {
        const auto all = build(sampleProfile());
        const FunctionLines *helper = find(all, "helper");
        QVERIFY(helper);
        QCOMPARE(helper->self, int64_t(5));
        QCOMPARE(helper->lines.size(), size_t(1));
        QCOMPARE(helper->lines[0].line, int64_t(111));
        const FunctionLines *main = find(all, "main");
        QVERIFY(main);
        QCOMPARE(main->self, int64_t(0));
        QCOMPARE(main->total, int64_t(21));
    }

    // If this fails, the predicate no longer selects the functions listed, or their order is not by name.
    void predicateAndOrder()
    {
        const auto onlyWork = build(sampleProfile(), "work");
        QCOMPARE(onlyWork.size(), size_t(1));
        QCOMPARE(onlyWork[0].name, std::string("work"));
        const auto all = build(sampleProfile());
        QCOMPARE(all.size(), size_t(3));
        QCOMPARE(all[0].name, std::string("helper"));
        QCOMPARE(all[1].name, std::string("main"));
        QCOMPARE(all[2].name, std::string("work"));
        QVERIFY(build(sampleProfile(), "absent").empty());
    }

    // If this fails, a selection (values per stack with some stacks at zero) is not honoured.
    void followsTheSelection()
    {
        const Profile p = sampleProfile();
        std::vector<int64_t> perStack = valuesPerStack(p, 0, {});
        perStack[0] = 0; // the stack main → work:101
        auto lines = LineTable::build(p, perStack, [](const std::string &n) { return n == "work"; });
        QVERIFY(lines && lines->size() == 1);
        QCOMPARE(lines->front().self, int64_t(5));
        QCOMPARE(lines->front().lines.front().line, int64_t(103));
        std::atomic<bool> cancel{true};
        QVERIFY(!LineTable::build(
            p, perStack, [](const std::string &) { return true; }, &cancel));
    }
};

QTEST_GUILESS_MAIN(TestLineTable)
#include "tst_line_table.moc"
