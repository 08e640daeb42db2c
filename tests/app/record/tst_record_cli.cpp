// `emberline record` as a user runs it: the real binary launching or attaching to real targets, with the
// program's stdio and exit status passed through, Ctrl+C handled, and files that other tools can read.

#include "tests/engine/process/child_process.h"
#include "tests/engine/session/perf_guard.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>
#include <unistd.h>

namespace {

const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");

// The unprivileged user of the tests (nobody) may not be able to reach the build tree (a checkout under a
// private directory), so it runs a copy of the program from the shared directory; empty if the copy failed.
QString copyForNobody(const QTemporaryDir &dir, const QString &program)
{
    QString copy = dir.filePath(QFileInfo(program).fileName());
    if (!QFile::copy(program, copy) || !QFile::setPermissions(copy, QFileDevice::Permissions(0x7755)))
        return {};
    return copy;
}

QString targetPath(const char *name)
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/") + QLatin1String(name);
}

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run runEmberline(const QStringList &args, const QByteArray &input = {}, int timeoutMs = 60000)
{
    QProcess p;
    p.start(kEmberline, args);
    p.waitForStarted();
    if (!input.isEmpty())
        p.write(input);
    p.closeWriteChannel();
    p.waitForFinished(timeoutMs);
    return Run{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
               p.readAllStandardError()};
}

// The first line of `text` that holds `what`.
QByteArray lineWith(const QByteArray &text, const char *what)
{
    for (const QByteArray &line : text.split('\n')) {
        if (line.contains(what))
            return line;
    }
    return {};
}

} // namespace

class TestRecordCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The target's exit status is emberline's: scripts that wrap a program in `emberline record` keep working.
    void exitStatusPassesThrough()
    {
        REQUIRE_PERF_EVENTS();
        QTemporaryDir dir;
        const Run r =
            runEmberline({QStringLiteral("record"), QStringLiteral("--output"), dir.path(), QStringLiteral("--"),
                          targetPath("crasher"), QStringLiteral("1.2"), QStringLiteral("exit3")});
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.contains("target exited with status 3"), r.err.constData());
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("flush-0001.pprof"))));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("profile.pprof"))));
    }

    // If this fails, `record --memory` ends without naming where the memory went: the seeded leaks' functions, the
    // busiest allocator (churn_small's 400,000 blocks, called twice) and what it freed at once, as heaptrack_print
    // ends.
    void memoryDigestNamesTheFunctions()
    {
        REQUIRE_PERF_EVENTS();
        QTemporaryDir dir;
        const Run r = runEmberline({QStringLiteral("record"), QStringLiteral("--memory"),
                                    QStringLiteral("--alloc-interval"), QStringLiteral("1"), QStringLiteral("--output"),
                                    dir.path(), QStringLiteral("--"), targetPath("alloc_leaks")});
        QCOMPARE(r.exitCode, 0);
        const QByteArray leaks = lineWith(r.err, "largest leaks");
        QVERIFY2(leaks.contains("leak_chunks 12.0 MiB in 192 blocks; leak_pages 6.00 MiB in 1536 blocks"),
                 r.err.constData());
        QVERIFY2(leaks.contains("leak_records") && !leaks.contains("churn_"), leaks.constData());
        const QByteArray most = lineWith(r.err, "most allocations");
        QVERIFY2(most.contains(": churn_small 400000 (76.3 MiB)"), most.constData());
        const QByteArray soon = lineWith(r.err, "most short-lived (freed within 1 ms)");
        QVERIFY2(soon.contains(": churn_small "), soon.constData());
    }

    // The summary's health lines name why a deep stack is cut short with a small copy, and the size to ask for.
    void summaryNamesStackCopyTooSmall()
    {
        REQUIRE_PERF_EVENTS();
        QTemporaryDir dir;
        const Run r = runEmberline({QStringLiteral("record"), QStringLiteral("--stack-size"), QStringLiteral("4096"),
                                    QStringLiteral("--output"), dir.path(), QStringLiteral("--"),
                                    targetPath("deep_stack"), QStringLiteral("1")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains("emberline: unwind health: "), r.err.constData());
        QVERIFY2(r.err.contains("deep_stack: "), r.err.constData());
        QVERIFY2(r.err.contains("cause: stack copy too small"), r.err.constData());
        QVERIFY2(r.err.contains("fix: copy more stack: --stack-size "), r.err.constData());
    }

    // stdin reaches the program and its stdout reaches ours, byte for byte.
    void stdioPassesThrough()
    {
        REQUIRE_PERF_EVENTS();
        QTemporaryDir dir;
        const QByteArray input = "first line\nsecond line\n";
        const Run r = runEmberline({QStringLiteral("record"), QStringLiteral("--output"), dir.path(),
                                    QStringLiteral("--"), QStringLiteral("cat")},
                                   input);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, input);
    }

    // With --memory, Emberline restarts itself with glibc's huge-page tunable (app/huge_page_malloc.h) and gives the
    // program it launches the environment it was started with: the target reads emberline's start environment from
    // /proc (the restart leaves its mark there; glibc rewrites GLIBC_TUNABLES itself as it reads it) and its own. If
    // this fails, the profiler runs on 4 KiB pages (slow on large profiles), or a profiled program runs with a
    // malloc setting its user never chose. A recording of time alone keeps small tables: no restart.
    void hugePagesForEmberlineOnly()
    {
        REQUIRE_PERF_EVENTS();
        const QString script = QStringLiteral(
            "cat /proc/$PPID/comm; tr '\\0' '\\n' < /proc/$PPID/environ | grep -c '^EMBERLINE_SAVED_GLIBC_TUNABLES='; "
            "echo \"[${GLIBC_TUNABLES-unset}] [${EMBERLINE_SAVED_GLIBC_TUNABLES-unset}]\"");
        QTemporaryDir dir;
        const Run plain = runEmberline({QStringLiteral("record"), QStringLiteral("--memory"),
                                        QStringLiteral("--output"), dir.filePath("a"), QStringLiteral("--"),
                                        QStringLiteral("/bin/sh"), QStringLiteral("-c"), script});
        QCOMPARE(plain.exitCode, 0);
        QCOMPARE(plain.out, QByteArray("emberline\n1\n[unset] [unset]\n")); // named emberline in ps, not exe
        const Run time = runEmberline({QStringLiteral("record"), QStringLiteral("--output"), dir.filePath("t"),
                                       QStringLiteral("--"), QStringLiteral("/bin/sh"), QStringLiteral("-c"), script});
        QCOMPARE(time.exitCode, 0);
        QCOMPARE(time.out, QByteArray("emberline\n0\n[unset] [unset]\n"));

        // A user's own tunables reach the target as they were, and emberline adds its own to them.
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("GLIBC_TUNABLES"), QStringLiteral("glibc.malloc.check=0"));
        p.setProcessEnvironment(env);
        p.start(kEmberline,
                {QStringLiteral("record"), QStringLiteral("--memory"), QStringLiteral("--output"), dir.filePath("b"),
                 QStringLiteral("--"), QStringLiteral("/bin/sh"), QStringLiteral("-c"), script});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(p.readAllStandardOutput(), QByteArray("emberline\n1\n[glibc.malloc.check=0] [unset]\n"));

        // EMBERLINE_HUGE_PAGES=0 keeps the ordinary pages: no restart, nothing added.
        QProcess off;
        env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("EMBERLINE_HUGE_PAGES"), QStringLiteral("0"));
        off.setProcessEnvironment(env);
        off.start(kEmberline,
                  {QStringLiteral("record"), QStringLiteral("--memory"), QStringLiteral("--output"), dir.filePath("c"),
                   QStringLiteral("--"), QStringLiteral("/bin/sh"), QStringLiteral("-c"), script});
        QVERIFY(off.waitForFinished(60000));
        QCOMPARE(off.readAllStandardOutput(), QByteArray("emberline\n0\n[unset] [unset]\n"));
    }

    // Ctrl+C ends the session with a final flush; the launched program is ended too.
    void interruptWritesFinalFlush()
    {
        REQUIRE_PERF_EVENTS();
        QTemporaryDir dir;
        QProcess p;
        p.start(kEmberline, {QStringLiteral("record"), QStringLiteral("--output"), dir.path(), QStringLiteral("--"),
                             targetPath("cpu_split"), QStringLiteral("60")});
        QVERIFY(p.waitForStarted());
        QTest::qWait(1500);
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(15000));
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(err.contains("stopped after"), err.constData());
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("profile.pprof"))));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("flush-0001.pprof"))));
    }

    // Ctrl+C on an attached session detaches and leaves the target running.
    void interruptLeavesAttachedTargetRunning()
    {
        REQUIRE_PERF_EVENTS();
        QProcess target;
        target.start(targetPath("cpu_split"), {QStringLiteral("4")});
        QVERIFY(target.waitForStarted());
        QTemporaryDir dir;
        QProcess p;
        p.start(kEmberline, {QStringLiteral("record"), QStringLiteral("--pid"), QString::number(target.processId()),
                             QStringLiteral("--output"), dir.path()});
        QVERIFY(p.waitForStarted());
        QTest::qWait(1500);
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(15000));
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(target.state(), QProcess::Running);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("profile.pprof"))));
        QVERIFY(target.waitForFinished(15000));
        QCOMPARE(target.exitCode(), 0);
    }

    // A shell that waits for the command it runs does no work of its own: attaching to it says which child to attach
    // to instead, before the attach; a process at work gets no such note.
    void attachingToAWaitingShellNamesItsChild()
    {
        QProcess shell;
        shell.start(QStringLiteral("bash"), {QStringLiteral("-c"), QStringLiteral("sleep 30; :")});
        QVERIFY(shell.waitForStarted());
        const QString pid = QString::number(shell.processId());
        const QString child = emberline::test::firstChildOf(shell.processId());
        QVERIFY2(!child.isEmpty(), "the shell started no child");
        const auto record = [](const QString &target) {
            QTemporaryDir dir;
            QProcess p;
            p.start(kEmberline,
                    {QStringLiteral("record"), QStringLiteral("--pid"), target, QStringLiteral("--duration"),
                     QStringLiteral("0.3"), QStringLiteral("--output"), dir.path()});
            p.waitForFinished(30000);
            return QString::fromUtf8(p.readAllStandardError());
        };
        const QString said = record(pid);
        ::kill(child.toInt(), SIGKILL);
        shell.waitForFinished(5000);
        QVERIFY2(said.contains(QStringLiteral("(bash) is waiting for its child %1 (sleep)").arg(child)),
                 qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("--pid %1").arg(child)), qPrintable(said));
        QProcess busy;
        busy.start(targetPath("cpu_split"), {QStringLiteral("2")});
        QVERIFY(busy.waitForStarted());
        const QString busySaid = record(QString::number(busy.processId()));
        QVERIFY2(!busySaid.contains(QStringLiteral("waiting for its")), qPrintable(busySaid));
        busy.kill();
        busy.waitForFinished(5000);
    }

    // A process we may not trace (pid 1, seen from an unprivileged user) is refused with what to change,
    // by either backend.
    void refusesProcessItMayNotTrace_data()
    {
        QTest::addColumn<QString>("sampler");
        QTest::addColumn<QString>("message");
        QTest::newRow("perf") << QStringLiteral("perf") << QStringLiteral("not allowed to sample process 1");
        QTest::newRow("ptrace") << QStringLiteral("ptrace") << QStringLiteral("not allowed to trace process 1");
    }
    void refusesProcessItMayNotTrace()
    {
        QFETCH(QString, sampler);
        QFETCH(QString, message);
        if (::geteuid() != 0) {
            if (emberline::test::inCi())
                QFAIL("this test switches to an unprivileged user and needs root, which CI has");
            QSKIP("needs root to run emberline as an unprivileged user");
        }
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFileDevice::Permissions(0x7777)));
        const QString emberline = copyForNobody(dir, kEmberline);
        QVERIFY(!emberline.isEmpty());
        QProcess p;
        p.start(QStringLiteral("setpriv"),
                {QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"), QStringLiteral("--clear-groups"),
                 emberline, QStringLiteral("record"), QStringLiteral("--sampler"), sampler, QStringLiteral("--pid"),
                 QStringLiteral("1"), QStringLiteral("--output"), dir.filePath(QStringLiteral("out"))});
        QVERIFY(p.waitForFinished(30000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(err.contains(message), qPrintable(err));
        QVERIFY2(err.contains(QLatin1String("root")), qPrintable(err));
        // pid 1 was not stopped or traced by the attempt
        QFile status(QStringLiteral("/proc/1/status"));
        QVERIFY(status.open(QIODevice::ReadOnly));
        QVERIFY(status.readAll().contains("TracerPid:\t0"));
    }

    // An unprivileged user with perf_event_paranoid 2 may sample its own program's CPU but not its context
    // switches: the session still runs, and says why wall time is missing instead of silently dropping it.
    void wallTimeUnavailableIsExplained()
    {
        if (::geteuid() != 0) {
            if (emberline::test::inCi())
                QFAIL("this test switches to an unprivileged user and needs root, which CI has");
            QSKIP("needs root to run emberline as an unprivileged user");
        }
        QFile paranoid(QStringLiteral("/proc/sys/kernel/perf_event_paranoid"));
        QVERIFY(paranoid.open(QIODevice::ReadOnly));
        const int level = paranoid.readAll().trimmed().toInt();
        if (level < 2 || level > 2)
            QSKIP("needs kernel.perf_event_paranoid = 2 (user-space sampling allowed, kernel events not)");
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFileDevice::Permissions(0x7777)));
        const QString emberline = copyForNobody(dir, kEmberline);
        const QString target = copyForNobody(dir, targetPath("cpu_split"));
        QVERIFY(!emberline.isEmpty() && !target.isEmpty());
        QProcess p;
        p.start(QStringLiteral("setpriv"),
                {QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"), QStringLiteral("--clear-groups"),
                 emberline, QStringLiteral("record"), QStringLiteral("--wall-time"), QStringLiteral("--output"),
                 dir.filePath(QStringLiteral("out")), QStringLiteral("--"), target, QStringLiteral("0.5")});
        QVERIFY(p.waitForFinished(30000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() == 0, qPrintable(err));
        QVERIFY2(err.contains(QLatin1String("wall time is not available")), qPrintable(err));
        QVERIFY2(err.contains(QLatin1String("--sampler ptrace")), qPrintable(err));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("out/profile.pprof"))));
    }

    // What cannot be profiled is said clearly on stderr with a non-zero exit, before anything runs.
    void clearErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("missing command") << QStringList{QStringLiteral("--"), QStringLiteral("/no/such/program")} << 1
                                         << QStringLiteral("command not found");
        QTest::newRow("no target") << QStringList{} << 2 << QStringLiteral("either a command to launch or a pid");
        QTest::newRow("dead pid") << QStringList{QStringLiteral("--pid"), QStringLiteral("1073741823")} << 1
                                  << QStringLiteral("no process with pid");
        QTest::newRow("bad frequency") << QStringList{QStringLiteral("--frequency"), QStringLiteral("fast"),
                                                      QStringLiteral("--"), QStringLiteral("true")}
                                       << 2 << QStringLiteral("--frequency needs a number");
        QTest::newRow("wall time both ways")
            << QStringList{QStringLiteral("--wall-time"), QStringLiteral("--no-wall-time"), QStringLiteral("--"),
                           QStringLiteral("true")}
            << 2 << QStringLiteral("contradict");
        QTest::newRow("flush period") << QStringList{QStringLiteral("--flush-period"), QStringLiteral("0.2"),
                                                     QStringLiteral("--"), QStringLiteral("true")}
                                      << 2 << QStringLiteral("between 1 and 60 seconds");
        QTest::newRow("sampler") << QStringList{QStringLiteral("--sampler"), QStringLiteral("magic"),
                                                QStringLiteral("--"), QStringLiteral("true")}
                                 << 2 << QStringLiteral("unknown sampler");
    }
    void clearErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const Run r =
            runEmberline(QStringList{QStringLiteral("record"), QStringLiteral("--output"), dir.path()} + args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    }

    // Wall time is recorded unless --no-wall-time says otherwise (--wall-time is still accepted), and the summary
    // says how many samples of other processes were dropped. If this fails, the default is not Datadog's, or the
    // switch does nothing.
    void wallTimeByDefault_data()
    {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<bool>("wallTime");
        QTest::newRow("default") << QStringList{} << true;
        QTest::newRow("--wall-time") << QStringList{QStringLiteral("--wall-time")} << true;
        QTest::newRow("--no-wall-time") << QStringList{QStringLiteral("--no-wall-time")} << false;
    }

    void wallTimeByDefault()
    {
        REQUIRE_PERF_EVENTS();
        QFETCH(QStringList, options);
        QFETCH(bool, wallTime);
        QTemporaryDir dir;
        const Run r =
            runEmberline(QStringList{QStringLiteral("record"), QStringLiteral("--output"), dir.path()} + options +
                         QStringList{QStringLiteral("--"), targetPath("cpu_split"), QStringLiteral("0.5")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.contains("sample(s) of other processes dropped"), r.err.constData());
        QCOMPARE(r.err.contains("context switches (wall time)"), wallTime);
        const Run report = runEmberline(
            {QStringLiteral("report"), QStringLiteral("--json"), dir.filePath(QStringLiteral("profile.pprof"))});
        QVERIFY2(report.exitCode == 0, report.err.constData());
        QCOMPARE(report.out.contains("\"wall-time\""), wallTime);
    }

    // go tool pprof, an independent reader, loads every file without a warning and sees the target's functions.
    void filesReadByGoPprof()
    {
        REQUIRE_PERF_EVENTS();
        const QString go = QStandardPaths::findExecutable(QStringLiteral("go"));
        if (go.isEmpty()) {
            if (emberline::test::inCi())
                QFAIL("go is not installed but CI=true: the independent reader check cannot run");
            QSKIP("go (golang-go) is not installed");
        }
        QTemporaryDir dir;
        const Run r = runEmberline({QStringLiteral("record"), QStringLiteral("--flush-period"), QStringLiteral("1"),
                                    QStringLiteral("--frequency"), QStringLiteral("499"), QStringLiteral("--output"),
                                    dir.path(), QStringLiteral("--"), targetPath("cpu_split"), QStringLiteral("2.5")});
        QCOMPARE(r.exitCode, 0);
        const QStringList files = QDir(dir.path()).entryList({QStringLiteral("*.pprof")});
        QVERIFY2(files.size() >= 3, qPrintable(files.join(QLatin1Char(' '))));
        for (const QString &f : files) {
            QProcess pprof;
            pprof.start(go, {QStringLiteral("tool"), QStringLiteral("pprof"), QStringLiteral("-top"),
                             QStringLiteral("-sample_index=cpu-time"), dir.filePath(f)});
            QVERIFY(pprof.waitForFinished(120000));
            const QByteArray out = pprof.readAllStandardOutput();
            const QByteArray err = pprof.readAllStandardError();
            QCOMPARE(pprof.exitCode(), 0);
            QVERIFY2(err.trimmed().isEmpty(), err.constData());
            QVERIFY2(out.contains("hot_sixty") || out.contains("burn"), out.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestRecordCli)
#include "tst_record_cli.moc"
