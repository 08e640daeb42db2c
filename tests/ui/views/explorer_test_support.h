#pragma once

// Opening a real profile in a ProfileView offscreen and waiting for its explorer, and `emberline report` run as a
// second, independent reader of the same file, for the explorer's widget tests.

#include "ui/views/profile_explorer.h"
#include "ui/views/profile_view.h"

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
