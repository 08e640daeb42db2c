#pragma once

// Opening a real profile in a ProfileView offscreen and waiting for its explorer (or its heatmap), and
// `emberline report` run as a second, independent reader of the same file, for the explorer's widget tests.

#include "ui/timeline/heatmap_panel.h"
#include "ui/timeline/heatmap_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTest>

namespace emberline::test {

inline const QString kGoCpu = QStringLiteral(EMBERLINE_TEST_DATA "/pprof/go-cpu.pprof");
inline const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");

// Waits until the explorer shows an analysis of what it was last asked (and no newer one is under way).
inline bool waitForAnalysis(ui::ProfileExplorer *explorer)
{
    return QTest::qWaitFor([&] { return explorer->analysis() && !explorer->isAnalysing(); }, 30000);
}

// Loads `path` in a view and waits for its explorer's first analysis; null when that fails.
inline ui::ProfileExplorer *openExplorer(ui::ProfileView &view)
{
    view.resize(1400, 900);
    view.show();
    view.load();
    if (!QTest::qWaitFor([&] { return view.state() != ui::ProfileView::State::Loading; }, 30000))
        return nullptr;
    ui::ProfileExplorer *explorer = view.explorer();
    return explorer && waitForAnalysis(explorer) ? explorer : nullptr;
}

// Loads `view` at 1200×900 and waits until it loaded and its heatmap is shown with cells; the heatmap, or null
// when the profile failed to load or no heatmap came (ProfileView::errorMessage() says why it failed).
inline ui::HeatmapView *openWithHeatmap(ui::ProfileView &view)
{
    view.resize(1200, 900);
    view.show();
    view.load();
    if (!QTest::qWaitFor([&] { return view.state() != ui::ProfileView::State::Loading; }, 10000) ||
        view.state() != ui::ProfileView::State::Ready)
        return nullptr;
    if (!QTest::qWaitFor([&] { return view.heatmap() && view.heatmap()->isVisible(); }, 5000))
        return nullptr;
    ui::HeatmapView *heatmap = view.heatmap()->view();
    return QTest::qWaitFor([&] { return heatmap->heatmap() != nullptr; }, 5000) ? heatmap : nullptr;
}

// `emberline report ARGS`' standard output; empty (and the error in `error`) when it fails.
inline QByteArray reportOutput(const QStringList &args, QString *error = nullptr)
{
    QProcess p;
    p.start(kEmberline, QStringList{QStringLiteral("report")} + args);
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        if (error)
            *error = QString::fromUtf8(p.readAllStandardError());
        return {};
    }
    return p.readAllStandardOutput();
}

} // namespace emberline::test
