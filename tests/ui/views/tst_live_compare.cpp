// Live compare as a user drives it, offscreen, on a real target whose hot function changes halfway (phases: the
// first half in phase_one, the second in phase_two): compared flush to flush while it runs, and range to range
// (drag range A, Shift+drag range B) once it ended. The function that started must show as grown, the one that
// stopped as shrunk, in the differential flame graph and in the tables.

#include "tests/engine/session/perf_guard.h"
#include "tests/ui/live_test_support.h"
#include "tests/ui/test_settings.h"

#include "ui/dialogs/profile_process_dialog.h"
#include "ui/flamegraph/diff_flame_graph_view.h"
#include "ui/models/diff_functions_model.h"
#include "ui/timeline/timeline_chart_view.h"
#include "ui/timeline/timeline_view.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/compare/diff_tables_view.h"
#include "ui/window/main_window.h"

#include <QComboBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline;
using namespace emberline::ui;
using namespace emberline::ui::test;

namespace {

// A function's base and new total values in a comparison (phases' functions burn in a callee, so their self is
// 0); {-1, -1} when it is on neither side.
std::pair<int64_t, int64_t> totalOf(const engine::Comparison &c, const char *name)
{
    for (const engine::DiffFunction &row : c.functions)
        if (c.frames->frame(row.frame).name == name)
            return {row.baseTotal, row.newTotal};
    return {-1, -1};
}

// The row of a function in the compare explorer's function table; -1 when it is not listed.
int tableRow(CompareExplorer *explorer, const QString &name)
{
    DiffFunctionsModel *model = explorer->tables()->functionsModel();
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->index(row, 0).data().toString() == name)
            return row;
    return -1;
}

bool grewAndShrank(const engine::Comparison &c, const char *grown, const char *shrunk)
{
    const auto [grownBase, grownNew] = totalOf(c, grown);
    const auto [shrunkBase, shrunkNew] = totalOf(c, shrunk);
    return grownNew > grownBase && grownBase >= 0 && shrunkNew < shrunkBase && shrunkNew >= 0;
}

} // namespace

class TestLiveCompare : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    static bool compared(LiveSessionView *view)
    {
        return !view->isUpdating() && view->compareExplorer()->comparison() != nullptr;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        emberline::ui::test::isolateSettings(m_dir, "tst_live_compare");
    }

    // "With the previous flush" chosen in the combo box as the session starts: after every flush the compare
    // explorer shows the newest flush against the one before it. The pair of flushes around the switch shows
    // phase_two grown and phase_one shrunk, in the comparison, the flame graph and the table. Then range A over
    // the first half and Shift+drag range B over the second half: phase_two grown from nothing, phase_one gone.
    // If this fails, the live diff does not follow the flushes, or a range comparison compares the wrong times.
    void phaseShiftShowsAsGrownAndShrunk()
    {
        REQUIRE_PERF_EVENTS();
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        LiveSessionView *view = launchFromDialog(window, targetPath("phases"), QStringLiteral("6"));
        QVERIFY(view);
        auto *combo = child<QComboBox>(view, "liveCompareCombo");
        QVERIFY(combo);
        combo->setCurrentIndex(1);
        Q_EMIT combo->activated(1);
        QCOMPARE(view->compareMode(), engine::LiveCompareMode::PreviousFlush);

        CompareExplorer *explorer = view->compareExplorer();
        std::vector<std::shared_ptr<const engine::Comparison>> seen;
        connect(explorer, &CompareExplorer::comparisonApplied, this, [&] { seen.push_back(explorer->comparison()); });
        QSignalSpy ended(view, &LiveSessionView::sessionEnded);
        QVERIFY(ended.wait(30000));
        QTRY_VERIFY_WITH_TIMEOUT(compared(view), 10000);
        QVERIFY2(seen.size() >= 3, qPrintable(QString::number(seen.size())));
        QVERIFY(child<QStackedWidget>(view, "liveExplorerStack")->currentWidget() == explorer);
        // Some comparison of two consecutive flushes crosses the switch.
        std::shared_ptr<const engine::Comparison> crossing;
        for (const auto &c : seen) {
            if (c && grewAndShrank(*c, "phase_two", "phase_one"))
                crossing = c;
        }
        QVERIFY(crossing);
        // And one within the first half shows no phase_two at all.
        QVERIFY(totalOf(*seen.front(), "phase_two").second <= 0);

        // Range A: the first half; range B (Shift+drag): the second half.
        dragAcross(view, 0.05, 0.4);
        QTRY_VERIFY_WITH_TIMEOUT(!view->isUpdating(), 10000);
        dragAcross(view, 0.6, 0.95, Qt::ShiftModifier);
        QCOMPARE(view->compareMode(), engine::LiveCompareMode::Baseline);
        QCOMPARE(view->scope(), LiveScope::SelectedRange);
        QTRY_VERIFY_WITH_TIMEOUT(compared(view) && view->lastUpdate()->request.scope == LiveScope::SelectedRange,
                                 10000);
        const engine::Comparison &ranges = *explorer->comparison();
        const auto [oneBase, oneNew] = totalOf(ranges, "phase_one");
        const auto [twoBase, twoNew] = totalOf(ranges, "phase_two");
        QVERIFY2(oneBase > 0 && oneNew == 0, qPrintable(QStringLiteral("%1 %2").arg(oneBase).arg(oneNew)));
        QVERIFY2(twoBase == 0 && twoNew > 0, qPrintable(QStringLiteral("%1 %2").arg(twoBase).arg(twoNew)));
        // The flame graph draws phase_two (new) and, with base-only paths shown, phase_one flagged base-only.
        const engine::DiffTree *tree = explorer->diffFlameGraph()->diff();
        QVERIFY(tree);
        bool phaseOneGone = false;
        bool phaseTwoNew = false;
        for (uint32_t id = 1; id < tree->size(); ++id) {
            const std::string &name = tree->frames()->frame(tree->node(id).frame).name;
            phaseOneGone = phaseOneGone || (name == "phase_one" && tree->isBaseOnly(id));
            phaseTwoNew = phaseTwoNew || (name == "phase_two" && tree->isNewOnly(id));
        }
        QVERIFY(phaseOneGone);
        QVERIFY(phaseTwoNew);
        QVERIFY(tableRow(explorer, QStringLiteral("phase_one")) >= 0);
        QVERIFY(tableRow(explorer, QStringLiteral("phase_two")) >= 0);

        // Compare off brings the explorer back.
        combo->setCurrentIndex(0);
        Q_EMIT combo->activated(0);
        QVERIFY(waitSettled(view));
        QVERIFY(child<QStackedWidget>(view, "liveExplorerStack")->currentWidget() == view->explorer());
    }
};

QTEST_MAIN(TestLiveCompare)
#include "tst_live_compare.moc"
