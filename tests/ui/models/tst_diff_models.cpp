// The comparison's item models under QAbstractItemModelTester: the top-functions table and the caller/callee
// tables with base, new, change and change %, each column sorted through FunctionFilterProxy by its raw value.
#include "engine/compare/comparison.h"
#include "tests/ui/test_profiles.h"
#include "ui/common/model_roles.h"
#include "ui/models/diff_caller_callee_model.h"
#include "ui/models/diff_functions_model.h"
#include "ui/models/function_filter_proxy.h"
#include "ui/views/compare/diff_tables_view.h"

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QTest>
#include <QTreeView>

#include <cmath>

using namespace emberline;
using emberline::ui::DiffCallerCalleeModel;
using emberline::ui::DiffFunctionsModel;

namespace {

using ui::test::loadedFrom;
using ui::test::profileOfPaths;

// Base: main 100 { a 40 (self 10) { b 30 }, c 60 (self 40) { b 20 } }.
// New:  main 90  { a 50 (self 20) { b 30 }, c 40 (self 40) }: a grew, b and c shrank.
std::shared_ptr<const engine::Comparison> comparison()
{
    engine::ComparisonRequest r;
    r.base = loadedFrom(
        profileOfPaths({{{"main", "a", "b"}, 30}, {{"main", "a"}, 10}, {{"main", "c"}, 40}, {{"main", "c", "b"}, 20}}));
    r.next = loadedFrom(profileOfPaths({{{"main", "a", "b"}, 30}, {{"main", "a"}, 20}, {{"main", "c"}, 40}}));
    auto c = engine::compareProfiles(r);
    return c ? c.value() : nullptr;
}

QString nameAt(const QAbstractItemModel &m, int row)
{
    return m.index(row, 0).data().toString();
}

} // namespace

class TestDiffModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a function's base, new, change or change % is wrong in the table, or a column sorts by its
    // text instead of its value.
    void functionsModel()
    {
        const auto c = comparison();
        QVERIFY(c);
        DiffFunctionsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setComparison(c);
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), int(DiffFunctionsModel::ColumnCount));
        const int a = model.rowOfFrame(c->frames->findByName("a").front());
        QVERIFY(a >= 0);
        QCOMPARE(model.index(a, DiffFunctionsModel::BaseSelfColumn).data().toString(), QStringLiteral("10 ns"));
        QCOMPARE(model.index(a, DiffFunctionsModel::NewSelfColumn).data().toString(), QStringLiteral("20 ns"));
        QCOMPARE(model.index(a, DiffFunctionsModel::SelfChangeColumn).data().toString(), QStringLiteral("+10 ns"));
        QCOMPARE(model.index(a, DiffFunctionsModel::SelfChangePercentColumn).data().toString(),
                 QStringLiteral("+100.0%"));
        QCOMPARE(model.index(a, DiffFunctionsModel::TotalChangePercentColumn).data(ui::SortRole).toDouble(), 25.0);

        ui::FunctionFilterProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.sort(DiffFunctionsModel::TotalChangeColumn, Qt::DescendingOrder);
        // Total change: a +10, main -10, b -20 (50 → 30), c -20 (60 → 40); ties by name keep a stable order.
        QCOMPARE(nameAt(proxy, 0), QStringLiteral("a"));
        QCOMPARE(proxy.index(3, DiffFunctionsModel::TotalChangeColumn).data(ui::SortRole).toLongLong(), -20);
        for (int r = 1; r < proxy.rowCount(); ++r)
            QVERIFY(proxy.index(r - 1, DiffFunctionsModel::TotalChangeColumn).data(ui::SortRole).toLongLong() >=
                    proxy.index(r, DiffFunctionsModel::TotalChangeColumn).data(ui::SortRole).toLongLong());
        proxy.sort(DiffFunctionsModel::SelfChangePercentColumn, Qt::AscendingOrder);
        QCOMPARE(nameAt(proxy, 0), QStringLiteral("b")); // 50 → 30: -40%
        model.setComparison(nullptr);
        QCOMPARE(proxy.rowCount(), 0);
    }

    // The comparison's tables open sorted by the size of the self change, the sign shown; clicks on a change
    // column's header go to the largest growth first, the largest shrink first, and back. If this fails, shrinking
    // functions fall to the bottom of a table that opens sorted by the signed change, or a click cannot sort by
    // the signed value any more.
    void tablesSortByTheSizeOfTheChange()
    {
        const auto c = comparison();
        ui::DiffTablesView view;
        view.resize(1400, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setComparison(c);
        QTreeView *table = view.functionsTable();
        QAbstractItemModel *shown = table->model();
        QAbstractItemModelTester tester(shown, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto names = [&] {
            QStringList out;
            for (int r = 0; r < shown->rowCount(); ++r)
                out << nameAt(*shown, r);
            return out;
        };
        const int self = DiffFunctionsModel::SelfChangeColumn;
        // Self change: b -20 (50 → 30), a +10, c and main 0.
        QCOMPARE(names().mid(0, 2), (QStringList{"b", "a"}));
        QCOMPARE(shown->index(0, self).data().toString(), QStringLiteral("-20 ns"));
        QCOMPARE(shown->headerData(self, Qt::Horizontal).toString(), QStringLiteral("Self change ±"));

        QHeaderView *header = table->header();
        const auto click = [&](int section) {
            QTest::mouseClick(header->viewport(), Qt::LeftButton, {},
                              QPoint(header->sectionViewportPosition(section) + header->sectionSize(section) / 2,
                                     header->height() / 2));
        };
        click(self); // the largest growth first
        QCOMPARE(names().first(), QStringLiteral("a"));
        QCOMPARE(names().last(), QStringLiteral("b"));
        QCOMPARE(shown->headerData(self, Qt::Horizontal).toString(), QStringLiteral("Self change"));
        click(self); // the largest shrink first
        QCOMPARE(names().first(), QStringLiteral("b"));
        QCOMPARE(names().last(), QStringLiteral("a"));
        QCOMPARE(header->sortIndicatorOrder(), Qt::AscendingOrder);
        click(self); // the size again
        QCOMPARE(names().mid(0, 2), (QStringList{"b", "a"}));
        QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);

        // Another column sorts as usual, largest first; a change column clicked from there sorts by size.
        click(DiffFunctionsModel::NewSelfColumn);
        QCOMPARE(names().mid(0, 2), (QStringList{"c", "b"})); // 40, 30
        click(DiffFunctionsModel::TotalChangeColumn);
        // Total change: b and c -20, a +10, main -10: equal sizes put the growth first.
        QCOMPARE(names().mid(2), (QStringList{"a", "main"}));
    }

    // If this fails, a percentage for a function the base lacks sorts among finite ones, or shows a number.
    void newFunctionPercent()
    {
        QVERIFY(std::isinf(ui::changePercentSortValue(0, 5)));
        QCOMPARE(ui::changePercentSortValue(0, 0), 0.0);
        QCOMPARE(ui::changePercentSortValue(40, 30), -25.0);
    }

    // If this fails, the caller/callee tables lose a side or their change columns are wrong.
    void callerCalleeModels()
    {
        const auto c = comparison();
        const uint32_t b = c->frames->findByName("b").front();
        auto cc = std::make_shared<const engine::DiffCallerCallee>(engine::diffCallerCallee(*c, b));
        DiffCallerCalleeModel callers(DiffCallerCalleeModel::Side::Callers);
        QAbstractItemModelTester tester(&callers, QAbstractItemModelTester::FailureReportingMode::QtTest);
        callers.setCallerCallee(cc, c->frames, c->unit);
        QCOMPARE(callers.rowCount(), 2); // a (30 → 30) and c (20 → 0)
        ui::FunctionFilterProxy proxy;
        proxy.setSourceModel(&callers);
        proxy.sort(DiffCallerCalleeModel::ChangeColumn, Qt::AscendingOrder);
        QCOMPARE(nameAt(proxy, 0), QStringLiteral("c"));
        QCOMPARE(proxy.index(0, DiffCallerCalleeModel::BaseColumn).data().toString(), QStringLiteral("20 ns"));
        QCOMPARE(proxy.index(0, DiffCallerCalleeModel::NewColumn).data().toString(), QStringLiteral("0 ns"));
        QCOMPARE(proxy.index(0, DiffCallerCalleeModel::ChangePercentColumn).data().toString(),
                 QStringLiteral("-100.0%"));
        QCOMPARE(proxy.index(1, DiffCallerCalleeModel::ChangeColumn).data().toString(), QStringLiteral("0 ns"));
        callers.clear();
        QCOMPARE(callers.rowCount(), 0);
    }
};

QTEST_MAIN(TestDiffModels)
#include "tst_diff_models.moc"
