#include "engine/analysis/function_table.h"
#include "engine/model/sample_filter.h"
#include "tests/ui/test_profiles.h"
#include "ui/common/model_roles.h"
#include "ui/models/caller_callee_model.h"
#include "ui/models/function_filter_proxy.h"
#include "ui/models/thread_list_model.h"
#include "ui/models/top_functions_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace emberline;
using emberline::ui::SortRole;
using Tester = QAbstractItemModelTester;

namespace {

QString cell(const QAbstractItemModel &model, int row, int column)
{
    return model.index(row, column).data().toString();
}

QStringList column0(const QAbstractItemModel &model)
{
    QStringList names;
    for (int r = 0; r < model.rowCount(); ++r)
        names << cell(model, r, 0);
    return names;
}

} // namespace

// The item models behind the tables: structure (QAbstractItemModelTester, whose warnings fail the test),
// values, sorting and filtering.
class TestUiModels : public QObject {
    Q_OBJECT

    std::shared_ptr<const engine::Profile> m_profile;
    std::shared_ptr<const engine::FrameTable> m_frames;
    std::vector<int64_t> m_perStack;
    std::shared_ptr<const engine::FunctionTable> m_functions;

    uint32_t frameNamed(const char *name) const { return m_frames->findByName(name).front(); }

private Q_SLOTS:
    void initTestCase()
    {
        m_profile = std::make_shared<const engine::Profile>(ui::test::makeSmallProfile(true));
        m_frames = std::make_shared<const engine::FrameTable>(*m_profile);
        m_perStack = engine::valuesPerStack(*m_profile, 0, {});
        m_functions = std::make_shared<const engine::FunctionTable>(
            *engine::FunctionTable::build(*m_profile, *m_frames, m_perStack));
    }

    // Values and formatting of the top-functions table; if this fails, the table disagrees with
    // `emberline report` or shows raw nanoseconds.
    void topFunctionsValues()
    {
        ui::TopFunctionsModel model;
        Tester tester(&model, Tester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setFunctions(m_functions, m_frames, "nanoseconds");
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), 5);
        const int b = model.rowOfFrame(frameNamed("b"));
        QVERIFY(b >= 0);
        QCOMPARE(cell(model, b, ui::TopFunctionsModel::NameColumn), QStringLiteral("b"));
        QCOMPARE(cell(model, b, ui::TopFunctionsModel::SelfColumn), QStringLiteral("50 ns"));
        QCOMPARE(cell(model, b, ui::TopFunctionsModel::TotalColumn), QStringLiteral("50 ns"));
        QCOMPARE(cell(model, b, ui::TopFunctionsModel::SelfPercentColumn), QStringLiteral("50.00%"));
        const int main = model.rowOfFrame(frameNamed("main"));
        QCOMPARE(cell(model, main, ui::TopFunctionsModel::SelfPercentColumn), QStringLiteral("0.00%"));
        QCOMPARE(cell(model, main, ui::TopFunctionsModel::TotalPercentColumn), QStringLiteral("100.00%"));
        QCOMPARE(model.index(main, ui::TopFunctionsModel::TotalColumn).data(SortRole).toLongLong(), 100);
        QCOMPARE(model.frameAt(main), frameNamed("main"));
        QVERIFY(model.index(b, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("/src/b.cc:30")));
        QCOMPARE(model.headerData(2, Qt::Horizontal).toString(), QStringLiteral("Total"));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    // Sorting by raw values, not by the formatted text ("9 ns" > "50 ns" as strings), and filtering by name.
    void topFunctionsSortAndFilter()
    {
        ui::TopFunctionsModel model;
        ui::FunctionFilterProxy proxy;
        proxy.setSourceModel(&model);
        Tester modelTester(&model, Tester::FailureReportingMode::QtTest);
        Tester proxyTester(&proxy, Tester::FailureReportingMode::QtTest);
        model.setFunctions(m_functions, m_frames, "nanoseconds");

        proxy.sort(ui::TopFunctionsModel::TotalColumn, Qt::DescendingOrder);
        QCOMPARE(column0(proxy), (QStringList{"main", "c", "b", "a"})); // 100, 60, 50, 40
        proxy.sort(ui::TopFunctionsModel::SelfColumn, Qt::AscendingOrder);
        QCOMPARE(cell(proxy, 0, 0), QStringLiteral("main")); // self 0
        QCOMPARE(cell(proxy, 3, 0), QStringLiteral("b"));    // self 50
        proxy.sort(ui::TopFunctionsModel::NameColumn, Qt::AscendingOrder);
        QCOMPARE(column0(proxy), (QStringList{"a", "b", "c", "main"}));

        proxy.setNameFilter(QStringLiteral("A"));
        QCOMPARE(column0(proxy), (QStringList{"a", "main"}));
        proxy.setNameFilter(QStringLiteral("  b "));
        QCOMPARE(column0(proxy), QStringList{"b"});
        proxy.setNameFilter(QStringLiteral("nothing"));
        QCOMPARE(proxy.rowCount(), 0);
        proxy.setNameFilter(QString());
        QCOMPARE(proxy.rowCount(), 4);
        // A new analysis (another sample type) resets the model under a live proxy.
        model.setFunctions(m_functions, m_frames, "nanoseconds");
        QCOMPARE(proxy.rowCount(), 4);
    }

    // Callers and callees of b and c with their edge values; if this fails, the caller/callee view
    // attributes time to the wrong neighbours.
    void callerCallee()
    {
        ui::CallerCalleeModel callers(ui::CallerCalleeModel::Side::Callers);
        ui::CallerCalleeModel callees(ui::CallerCalleeModel::Side::Callees);
        ui::FunctionFilterProxy proxy;
        proxy.setSourceModel(&callers);
        Tester t1(&callers, Tester::FailureReportingMode::QtTest);
        Tester t2(&callees, Tester::FailureReportingMode::QtTest);
        Tester t3(&proxy, Tester::FailureReportingMode::QtTest);

        auto ofB = std::make_shared<const engine::CallerCallee>(
            engine::computeCallerCallee(*m_profile, *m_frames, m_perStack, frameNamed("b")));
        callers.setCallerCallee(ofB, m_frames, "nanoseconds");
        callees.setCallerCallee(ofB, m_frames, "nanoseconds");
        QCOMPARE(callers.rowCount(), 2);
        QCOMPARE(callees.rowCount(), 0);
        QCOMPARE(cell(callers, 0, 0), QStringLiteral("a"));
        QCOMPARE(cell(callers, 0, 1), QStringLiteral("30 ns"));
        QCOMPARE(cell(callers, 0, 2), QStringLiteral("60.00%"));
        QCOMPARE(cell(callers, 1, 0), QStringLiteral("c"));
        QCOMPARE(callers.frameAt(1), frameNamed("c"));
        proxy.sort(ui::CallerCalleeModel::ValueColumn, Qt::AscendingOrder);
        QCOMPARE(column0(proxy), (QStringList{"c", "a"}));

        auto ofC = std::make_shared<const engine::CallerCallee>(
            engine::computeCallerCallee(*m_profile, *m_frames, m_perStack, frameNamed("c")));
        callers.setCallerCallee(ofC, m_frames, "nanoseconds");
        callees.setCallerCallee(ofC, m_frames, "nanoseconds");
        QCOMPARE(column0(callers), QStringList{"main"});
        QCOMPARE(cell(callers, 0, 1), QStringLiteral("60 ns"));
        QCOMPARE(column0(callees), QStringList{"b"});
        QCOMPARE(cell(callees, 0, 2), QStringLiteral("33.33%"));
        callers.clear();
        QCOMPARE(callers.rowCount(), 0);
    }

    // The thread list: busiest first, all checked by default (no filter), unchecking narrows the filter, none
    // checked keeps nothing. If this fails, the thread filter shows the wrong threads' samples.
    void threadList()
    {
        auto threads = std::make_shared<const engine::ThreadIndex>(*m_profile);
        QCOMPARE(threads->threads().size(), 2u);
        ui::ThreadListModel model;
        Tester tester(&model, Tester::FailureReportingMode::QtTest);
        QSignalSpy changed(&model, &ui::ThreadListModel::checkedThreadsChanged);
        model.setThreads(threads);
        QCOMPARE(model.rowCount(), 2);
        QVERIFY(model.checkedThreads().empty());
        // Both threads have two samples: the order of first appearance is kept.
        QCOMPARE(cell(model, 0, 0), QStringLiteral("worker (7) — 2 samples"));
        QCOMPARE(model.index(0, 0).data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
        QVERIFY(model.flags(model.index(0, 0)) & Qt::ItemIsUserCheckable);

        QVERIFY(model.setData(model.index(0, 0), Qt::Unchecked, Qt::CheckStateRole));
        QCOMPARE(changed.count(), 1);
        const uint32_t io = model.index(1, 0).data(Qt::UserRole).toUInt();
        QCOMPARE(model.checkedThreads(), std::vector<uint32_t>{io});
        QCOMPARE(threads->threads()[io].name, std::string("io"));

        engine::SampleFilter filter;
        filter.threads = model.checkedThreads();
        const auto mask = engine::selectSamples(*m_profile, threads.get(), filter);
        const auto perStack = engine::valuesPerStack(*m_profile, 0, mask);
        int64_t kept = 0;
        for (int64_t v : perStack)
            kept += v;
        QCOMPARE(kept, 60); // the io thread's samples: 40 + 20

        model.setAllChecked(false);
        QCOMPARE(model.checkedCount(), 0);
        filter.threads = model.checkedThreads();
        const auto none = engine::selectSamples(*m_profile, threads.get(), filter);
        QCOMPARE(std::count(none.begin(), none.end(), uint8_t(1)), 0);
        model.setAllChecked(true);
        QVERIFY(model.checkedThreads().empty());
        model.setThreads(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestUiModels)
#include "tst_ui_models.moc"
