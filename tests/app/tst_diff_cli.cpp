// `emberline --diff BASE NEW` with a missing file or a wrong count: the error is printed and the exit status is 2
// before any window system starts, so it works without a display. If this fails, a typo in a path aborts with
// "could not connect to display" (or opens a window) instead of naming the file.

#include <QProcess>
#include <QProcessEnvironment>
#include <QTest>

namespace {

struct Run {
    int exitCode = -1;
    QString err;
};

// Runs emberline as on a machine without a display: no DISPLAY, no Wayland, the xcb platform.
Run runWithoutDisplay(const QStringList &args)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("xcb"));
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline"), args);
    Run r;
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

} // namespace

class TestDiffCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void missingFileIsNamedWithoutADisplay()
    {
        const QString base = QStringLiteral("/nonexistent/emberline-base.pprof");
        const Run r = runWithoutDisplay({QStringLiteral("--diff"), base, QStringLiteral("/nonexistent/new.pprof")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(base) && r.err.contains(QStringLiteral("does not exist")), qPrintable(r.err));
        QVERIFY2(!r.err.contains(QStringLiteral("display"), Qt::CaseInsensitive), qPrintable(r.err));
    }

    void wrongCountIsReportedWithoutADisplay()
    {
        const Run r = runWithoutDisplay({QStringLiteral("--diff"), QStringLiteral("/nonexistent/only.pprof")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("exactly two")), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestDiffCli)
#include "tst_diff_cli.moc"
