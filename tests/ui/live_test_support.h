#pragma once

// Shared by the live-session widget tests: target paths, launching a target from the Profile Process dialog,
// dragging across the timeline, waiting for a live view's flushes and analyses, and reading what its flame graph
// and table show.

#include "engine/session/profiling_session.h"
#include "ui/dialogs/profile_process_dialog.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/models/top_functions_model.h"
#include "ui/timeline/timeline_chart_view.h"
#include "ui/timeline/timeline_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/top_functions_view.h"
#include "ui/views/live/live_session_view.h"
#include "ui/window/main_window.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>

namespace emberline::ui::test {

inline QString targetPath(const char *name)
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/") + QLatin1String(name);
}

template <typename T> T *child(QObject *parent, const char *name)
{
    return parent->findChild<T *>(QLatin1String(name));
}

// Fills the Launch page of the window's Profile Process dialog (199 Hz, 1 s flushes, the perf sampler) and
// presses Start; returns the live view the dialog's session went into, or null when the dialog stayed open.
inline LiveSessionView *launchFromDialog(MainWindow &window, const QString &program, const QString &arguments)
{
    ProfileProcessDialog *dialog = window.showProfileDialog();
    child<QTabWidget>(dialog, "modeTabs")->setCurrentIndex(0);
    child<QLineEdit>(dialog, "programEdit")->setText(program);
    child<QLineEdit>(dialog, "argumentsEdit")->setText(arguments);
    child<QSpinBox>(dialog, "frequencySpin")->setValue(199);
    child<QSpinBox>(dialog, "flushPeriodSpin")->setValue(1);
    child<QComboBox>(dialog, "samplerCombo")->setCurrentIndex(0);
    QTest::mouseClick(child<QPushButton>(dialog, "startButton"), Qt::LeftButton);
    if (!QTest::qWaitFor([&] { return !dialog->isVisible(); }, 10000))
        return nullptr;
    return window.currentLiveView();
}

// Drags across the CPU chart from one fraction of the session's span to another (with Shift: range B).
inline void dragAcross(LiveSessionView *view, double from, double to, Qt::KeyboardModifiers modifiers = {})
{
    TimelineChartView *chart = view->timeline()->cpuChart();
    const TimeAxis &axis = chart->axis();
    const auto x = [&](double f) { return static_cast<int>(axis.left() + f * axis.width()); };
    const int y = chart->viewport()->height() / 2;
    QTest::mousePress(chart->viewport(), Qt::LeftButton, modifiers, QPoint(x(from), y));
    QTest::mouseMove(chart->viewport(), QPoint((x(from) + x(to)) / 2, y));
    QTest::mouseRelease(chart->viewport(), Qt::LeftButton, modifiers, QPoint(x(to), y));
}

// The explorer of `view` shows the latest derived state: no merge, derivation or analysis is pending.
inline bool settled(LiveSessionView *view)
{
    ProfileExplorer *explorer = view->explorer();
    return explorer && explorer->analysis() && !explorer->isAnalysing() && !view->isUpdating();
}

inline bool waitSettled(LiveSessionView *view, int timeoutMs = 20000)
{
    // Settled twice in a row, 100 ms apart: a queued flush may start new work right after.
    return QTest::qWaitFor(
        [&] {
            if (!settled(view))
                return false;
            QTest::qWait(100);
            return settled(view);
        },
        timeoutMs);
}

// Total of the largest flame-graph node with this name; 0 when absent.
inline int64_t flameTotal(LiveSessionView *view, const char *name)
{
    const FlameGraphLayout &layout = view->explorer()->flameGraph()->layout();
    const uint32_t node = layout.largestNodeNamed(name);
    return node == engine::kNoIndex ? 0 : layout.tree()->node(node).total;
}

// Whether the top-functions table lists the function with a non-zero total.
inline bool tableHas(LiveSessionView *view, const QString &name)
{
    auto *table = view->explorer()->findChild<TopFunctionsView *>();
    TopFunctionsModel *model = table->model();
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->index(row, 0).data().toString() == name)
            return true;
    }
    return false;
}

} // namespace emberline::ui::test
