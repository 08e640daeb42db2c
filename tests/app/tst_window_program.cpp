// `emberline` runs its verbs without the window's libraries, and starts the window's program (emberline-gui) in its
// place for every other command line: the same process, with the arguments it was given; without it, it names it.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");

// The shared objects process `pid` has mapped, as its maps name them.
QString mappedFiles(qint64 pid)
{
    QFile maps(u"/proc/%1/maps"_s.arg(pid));
    return maps.open(QIODevice::ReadOnly) ? QString::fromUtf8(maps.readAll()) : QString();
}

} // namespace

class TestWindowProgram : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void verbsLoadNoWidgetLibrary()
    {
        QTemporaryDir dir;
        QProcess record;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove(u"DEBUGINFOD_URLS"_s);
        record.setProcessEnvironment(environment);
        record.start(kEmberline,
                     {u"record"_s, u"--output"_s, dir.filePath(u"out"_s), u"--"_s, u"/bin/sleep"_s, u"1.5"_s});
        QVERIFY(record.waitForStarted());
        // Mapped once the session has started the program (its libraries are loaded before main).
        QTRY_VERIFY_WITH_TIMEOUT(mappedFiles(record.processId()).contains(u"libQt6Core"_s), 5000);
        const QString maps = mappedFiles(record.processId());
        QVERIFY2(!maps.contains(u"libQt6Widgets"_s) && !maps.contains(u"libQt6Gui"_s) &&
                     !maps.contains(u"libQt6Charts"_s),
                 "a verb loaded the window's libraries");
        // Nor the transport's: libcurl (and its TLS libraries) only for an upload, libdebuginfod only for a fetch.
        QVERIFY2(!maps.contains(u"libcurl"_s) && !maps.contains(u"libgnutls"_s) && !maps.contains(u"libdebuginfod"_s),
                 "a session without upload or debuginfod loaded libcurl or libdebuginfod at its start");
        QVERIFY(record.waitForFinished(30000));
        QCOMPARE(record.exitCode(), 0);
        QVERIFY(QFile::exists(dir.filePath(u"out/profile.pprof"_s)));
    }

    void windowProgramStartsInItsPlace()
    {
        const QString gui = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline-gui");
        QVERIFY(QFile::exists(gui));
        QTemporaryDir settings;
        QProcess window;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"QT_QPA_PLATFORM"_s, u"offscreen"_s);
        env.insert(u"XDG_CONFIG_HOME"_s, settings.path());
        window.setProcessEnvironment(env);
        window.start(kEmberline, {u"--diff"_s, kEmberline, kEmberline}); // two files that exist: the window opens
        QVERIFY(window.waitForStarted());
        const qint64 pid = window.processId();
        QTRY_COMPARE_WITH_TIMEOUT(QFile::symLinkTarget(u"/proc/%1/exe"_s.arg(pid)), QFileInfo(gui).canonicalFilePath(),
                                  10000);
        QTRY_VERIFY_WITH_TIMEOUT(mappedFiles(pid).contains(u"libQt6Widgets"_s), 10000);
        QFile cmdline(u"/proc/%1/cmdline"_s.arg(pid));
        QVERIFY(cmdline.open(QIODevice::ReadOnly));
        const QList<QByteArray> args = cmdline.readAll().split('\0');
        QVERIFY(args.size() >= 4);
        QCOMPARE(args[1], QByteArray("--diff")); // the arguments it was given, untouched
        QCOMPARE(QString::fromLocal8Bit(args[2]), kEmberline);
        window.kill();
        window.waitForFinished();
    }

    // Without the window's program beside it (a copy of `emberline` alone), the window cannot start: it says which
    // program is missing, and the verbs still run.
    void missingWindowProgramIsNamed()
    {
        QTemporaryDir dir;
        const QString alone = dir.filePath(u"emberline"_s);
        QVERIFY(QFile::copy(kEmberline, alone));
        QProcess window;
        window.start(alone, {});
        QVERIFY(window.waitForFinished(10000));
        QCOMPARE(window.exitCode(), 127);
        const QString err = QString::fromUtf8(window.readAllStandardError());
        QVERIFY2(err.contains(u"cannot start the window's program"_s) && err.contains(dir.filePath(u"emberline-gui"_s)),
                 qPrintable(err));
        QProcess help;
        help.start(alone, {u"report"_s, u"--help"_s});
        QVERIFY(help.waitForFinished(10000));
        QCOMPARE(help.exitCode(), 0);
        QVERIFY(help.readAllStandardOutput().contains("report"));
    }
};

QTEST_GUILESS_MAIN(TestWindowProgram)
#include "tst_window_program.moc"
