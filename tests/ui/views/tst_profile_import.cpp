// Other profilers' files in a profile tab, offscreen: folded stacks open as a flame graph with their counts; a
// perf.data shows a busy progress bar while `perf script` runs and Cancel stops it; without perf, the tab says how
// to install it. `perf` is replaced by scripts through EMBERLINE_PERF, so the test needs no perf of its own.
#include "tests/ui/views/explorer_test_support.h"
#include "ui/flamegraph/flame_graph_view.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline;

namespace {

bool writeFile(const QString &path, const QByteArray &bytes, bool executable = false)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        return false;
    f.close();
    return !executable || f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
}

} // namespace

class TestProfileImport : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // If this fails, a folded-stacks file does not open in the window, or its counts are not the flame graph's.
    void foldedStacks()
    {
        const QString path = m_dir.filePath(QStringLiteral("cpu.folded"));
        QVERIFY(writeFile(path, "main;parse;lex 30\nmain;parse 10\nmain;eval 60\n"));
        ui::ProfileView view(path);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY2(explorer, qPrintable(view.errorMessage()));
        const ui::FlameGraphLayout &layout = explorer->flameGraph()->layout();
        QCOMPARE(layout.tree()->total(), int64_t(100));
        QCOMPARE(layout.tree()->node(layout.largestNodeNamed("parse")).total, int64_t(40));
        QCOMPARE(layout.tree()->node(layout.largestNodeNamed("eval")).total, int64_t(60));
    }

    // If this fails, a perf.data without perf installed is not explained, or the explanation lacks the package.
    void perfMissing()
    {
        const QString path = m_dir.filePath(QStringLiteral("perf.data"));
        QVERIFY(writeFile(path, QByteArray("PERFILE2") + QByteArray(200, '\0')));
        qputenv("EMBERLINE_PERF", m_dir.filePath(QStringLiteral("no-such-perf")).toUtf8());
        ui::ProfileView view(path);
        view.show();
        view.load();
        QTRY_COMPARE_WITH_TIMEOUT(view.state(), ui::ProfileView::State::Failed, 10000);
        QVERIFY2(view.errorMessage().contains(QStringLiteral("apt install linux-perf")),
                 qPrintable(view.errorMessage()));
        qunsetenv("EMBERLINE_PERF");
    }

    // If this fails, a perf.data being read shows no activity, or Cancel does not stop `perf script` promptly.
    void perfScriptCancelled()
    {
        const QString path = m_dir.filePath(QStringLiteral("slow.data"));
        QVERIFY(writeFile(path, QByteArray("PERFILE2") + QByteArray(200, '\0')));
        const QString slowPerf = m_dir.filePath(QStringLiteral("slow-perf"));
        QVERIFY(writeFile(slowPerf, "#!/bin/sh\nsleep 60\n", true));
        qputenv("EMBERLINE_PERF", slowPerf.toUtf8());
        ui::ProfileView view(path);
        QSignalSpy closed(&view, &ui::ProfileView::closeRequested);
        view.show();
        view.load();
        auto *progress = view.findChild<QProgressBar *>(QStringLiteral("loadProgress"));
        QVERIFY(progress && progress->isVisible());
        QCOMPARE(progress->maximum(), 0); // busy: `perf script` reports no progress
        QTest::qWait(300);
        QCOMPARE(view.state(), ui::ProfileView::State::Loading);
        QElapsedTimer timer;
        timer.start();
        QTest::mouseClick(view.findChild<QPushButton *>(QStringLiteral("loadCancelButton")), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(closed.count(), 1, 10000);
        QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
        qunsetenv("EMBERLINE_PERF");
    }
};

QTEST_MAIN(TestProfileImport)
#include "tst_profile_import.moc"
