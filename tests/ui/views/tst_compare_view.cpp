// The compare tab as a user drives it, offscreen, on real files: Go's CPU profile and pprof's own cut of it
// (`go tool pprof -proto -ignore=...`), compared; a click into a frame zooms and fills the caller/callee tables;
// a click on a column header sorts by change. The numbers are checked against the per-function diff that
// `emberline report --base --json` prints (engine::buildDiffReport). Then bad input: the same file twice, two profiles
// with no shared sample type, a missing file, and "Compare With…" on an open tab.
#include "tests/ui/test_settings.h"

#include "engine/pprof/pprof_reader.h"
#include "engine/report/report.h"
#include "ui/common/model_roles.h"
#include "ui/flamegraph/diff_flame_graph_view.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/models/diff_caller_callee_model.h"
#include "ui/models/diff_functions_model.h"
#include "ui/models/function_filter_proxy.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/compare/compare_view.h"
#include "ui/views/compare/diff_tables_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"
#include "ui/window/main_window.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

#include <cstdlib>

using namespace emberline;
using emberline::ui::CompareExplorer;
using emberline::ui::CompareView;
using emberline::ui::DiffFunctionsModel;
using emberline::ui::MainWindow;

namespace {

const QString kGoCpu = QStringLiteral(EMBERLINE_TEST_DATA "/pprof/go-cpu.pprof");
const QString kGoHeap = QStringLiteral(EMBERLINE_TEST_DATA "/pprof/go-heap.pprof");

CompareExplorer *waitForComparison(CompareView *view)
{
    if (!view || !QTest::qWaitFor([&] { return view->state() != CompareView::State::Loading; }, 20000))
        return nullptr;
    CompareExplorer *explorer = view->explorer();
    if (!explorer)
        return nullptr;
    const bool done = QTest::qWaitFor(
        [&] { return !explorer->isComparing() && (explorer->comparison() || !explorer->message().isEmpty()); }, 20000);
    return done ? explorer : nullptr;
}

} // namespace

class TestCompareView : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_cut; // go-cpu.pprof without the fibRec and sha256 samples

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ui::test::isolateSettings(m_dir, "tst_compare_view");
        const QString go = QStandardPaths::findExecutable(QStringLiteral("go"));
        if (go.isEmpty())
            QSKIP("go (golang-go) is not installed: cannot cut a real profile with go tool pprof");
        m_cut = m_dir.filePath(QStringLiteral("go-cpu-cut.pprof"));
        QProcess p;
        p.start(go, {QStringLiteral("tool"), QStringLiteral("pprof"), QStringLiteral("-proto"),
                     QStringLiteral("-symbolize=none"), QStringLiteral("-ignore=fibRec|sha256"),
                     QStringLiteral("-output=") + m_cut, kGoCpu});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0 && QFile::exists(m_cut), p.readAllStandardError().constData());
    }

    // If this fails, the compare tab shows other numbers than `report --base`, a click does not zoom or select,
    // or a header click does not sort by change.
    void compareClickAndSort()
    {
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        CompareExplorer *explorer = waitForComparison(window.openComparison(m_cut, kGoCpu)); // base: the cut
        QVERIFY(explorer);
        QVERIFY(explorer->comparison());
        QCOMPARE(window.tabs()->count(), 1);
        const auto comparison = explorer->comparison();
        QCOMPARE(comparison->sampleType, std::string("cpu"));
        QVERIFY2(explorer->message().isEmpty(), qPrintable(explorer->message()));

        // Every function's numbers against the report's diff, read independently from the files.
        auto next = engine::readPprofFile(kGoCpu.toStdString());
        auto base = engine::readPprofFile(m_cut.toStdString());
        QVERIFY(next && base);
        engine::ReportOptions options;
        options.sampleType = "cpu";
        options.json = true;
        auto report = engine::buildDiffReport(std::move(next).value(), std::move(base).value(), options);
        QVERIFY(report);
        const QJsonArray functions = QJsonDocument::fromJson(QByteArray::fromStdString(report.value()))
                                         .object()
                                         .value(QStringLiteral("functions"))
                                         .toArray();
        QVERIFY(functions.size() > 3);
        DiffFunctionsModel *model = explorer->tables()->functionsModel();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        for (const auto &v : functions) {
            const QJsonObject f = v.toObject();
            const std::string name = f.value(QStringLiteral("name")).toString().toStdString();
            const auto ids = comparison->frames->findByName(name);
            QVERIFY2(ids.size() == 1, name.c_str());
            const int row = model->rowOfFrame(ids.front());
            QVERIFY2(row >= 0, name.c_str());
            const auto sortValue = [&](int column) {
                return model->index(row, column).data(ui::SortRole).toLongLong();
            };
            const auto field = [&](const char *key) { return f.value(QLatin1String(key)).toInteger(); };
            QCOMPARE(sortValue(DiffFunctionsModel::BaseSelfColumn), field("base_self"));
            QCOMPARE(sortValue(DiffFunctionsModel::NewSelfColumn), field("base_self") + field("self"));
            QCOMPARE(sortValue(DiffFunctionsModel::BaseTotalColumn), field("base_total"));
            QCOMPARE(sortValue(DiffFunctionsModel::TotalChangeColumn), field("total"));
        }

        // Click into the frame of fibRec: a path only the new profile has, so red, its base 0.
        ui::FlameGraphView *flame = explorer->diffFlameGraph()->flameGraph();
        QTRY_VERIFY(flame->layout().viewportSize().width() > 100);
        const uint32_t node = flame->layout().largestNodeNamed("main.fibRec");
        QVERIFY(node != engine::kNoIndex);
        QVERIFY(comparison->tree->isNewOnly(node));
        const QRectF rect = flame->layout().nodeRect(node);
        QVERIFY2(rect.width() > 4, "fibRec is too narrow to click");
        QTest::mouseClick(flame->viewport(), Qt::LeftButton, {}, rect.center().toPoint());
        QCOMPARE(flame->layout().zoomNode(), node);
        QCOMPARE(explorer->selectedFrame(), comparison->tree->node(node).frame);
        ui::DiffCallerCalleeModel *callers = explorer->tables()->callersModel();
        QTRY_VERIFY(callers->rowCount() > 0);
        int64_t callerNew = 0;
        for (int r = 0; r < callers->rowCount(); ++r) {
            QCOMPARE(callers->index(r, ui::DiffCallerCalleeModel::BaseColumn).data(ui::SortRole).toLongLong(), 0);
            callerNew += callers->index(r, ui::DiffCallerCalleeModel::NewColumn).data(ui::SortRole).toLongLong();
        }
        QVERIFY(callerNew > 0);
        QVERIFY(flame->toolTipFor(node).contains(QLatin1String("only in the new profile")));

        // Sort by total change with a click on its header: by the size of the change first, then the largest growth
        // first.
        QTreeView *table = explorer->tables()->functionsTable();
        QHeaderView *header = table->header();
        const int section = DiffFunctionsModel::TotalChangeColumn;
        const QPoint at(header->sectionViewportPosition(section) + header->sectionSize(section) / 2,
                        header->height() / 2);
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, at);
        const auto changeAt = [&](int row) {
            return table->model()->index(row, section).data(ui::SortRole).toLongLong();
        };
        QCOMPARE(header->sortIndicatorSection(), section);
        QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);
        for (int r = 1; r < table->model()->rowCount(); ++r)
            QVERIFY(std::llabs(changeAt(r - 1)) >= std::llabs(changeAt(r)));
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);
        for (int r = 1; r < table->model()->rowCount(); ++r)
            QVERIFY(changeAt(r - 1) >= changeAt(r));
        // The cut removed fibRec's and sha256's samples from the base: the largest growth is one of their paths.
        QVERIFY(changeAt(0) > 0);
        QCOMPARE(changeAt(0), [&] {
            qint64 best = 0;
            for (const auto &v : functions)
                best = std::max(best, v.toObject().value(QStringLiteral("total")).toInteger());
            return best;
        }());
    }

    // If this fails, the same file twice is not said to be unchanged, or is painted as a change.
    void sameFileTwice()
    {
        MainWindow window;
        window.show();
        CompareExplorer *explorer = waitForComparison(window.openComparison(kGoCpu, kGoCpu));
        QVERIFY(explorer && explorer->comparison());
        QVERIFY2(explorer->message().contains(QLatin1String("same file")), qPrintable(explorer->message()));
        QVERIFY(explorer->comparison()->tree->isUnchanged());
    }

    // If this fails, two profiles without a shared sample type show a silently wrong picture instead of a
    // message naming both sets.
    void noSharedSampleType()
    {
        MainWindow window;
        window.show();
        CompareExplorer *explorer = waitForComparison(window.openComparison(kGoHeap, kGoCpu));
        QVERIFY(explorer);
        QVERIFY(!explorer->comparison());
        const QString message = explorer->message();
        QVERIFY2(message.contains(QLatin1String("new: samples/count, cpu/nanoseconds")), qPrintable(message));
        QVERIFY2(message.contains(QLatin1String("base: alloc_objects/count")), qPrintable(message));
        QVERIFY(explorer->diffFlameGraph()->flameGraph()->layout().isEmpty());
    }

    // If this fails, a missing file crashes or hangs instead of naming the side and the file.
    void missingFile()
    {
        MainWindow window;
        window.show();
        const QString missing = m_dir.filePath(QStringLiteral("nope.pprof"));
        CompareView *view = window.openComparison(missing, kGoCpu);
        QVERIFY(QTest::qWaitFor([&] { return view->state() != CompareView::State::Loading; }, 20000));
        QCOMPARE(view->state(), CompareView::State::Failed);
        QVERIFY2(view->errorMessage().contains(QLatin1String("Base profile")), qPrintable(view->errorMessage()));
        QVERIFY2(view->errorMessage().contains(QLatin1String("nope.pprof")), qPrintable(view->errorMessage()));
    }

    // If this fails, "Compare With…" does not take the tab's own profile as the new one.
    void compareTabWith()
    {
        MainWindow window;
        window.show();
        window.openFiles({kGoCpu});
        ui::ProfileView *tab = window.currentProfileView();
        QVERIFY(tab);
        QTRY_VERIFY_WITH_TIMEOUT(tab->explorer() != nullptr, 20000);
        window.compareTabWith(0, m_cut);
        CompareView *view = window.currentCompareView();
        QVERIFY(view);
        CompareExplorer *explorer = waitForComparison(view);
        QVERIFY(explorer && explorer->comparison());
        QCOMPARE(explorer->comparison()->request.next.get(), tab->explorer()->loadedProfile().get());
        QVERIFY(explorer->comparison()->newTotal > explorer->comparison()->baseTotal);
    }
};

QTEST_MAIN(TestCompareView)
#include "tst_compare_view.moc"
