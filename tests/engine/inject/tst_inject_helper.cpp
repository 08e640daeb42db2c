// The injector as a helper process (emberline-inject, engine/inject/inject_client.h): its answer is the in-process
// injection's, a missing helper is said so, and the profiler killed before, during or after the call leaves the
// injection to complete: the helper finishes it, the program is left running, untraced, and finishes well. If this
// failed, a profiler that crashed or was killed mid-injection could leave a program stopped or broken.

#include "tests/engine/inject/inject_test_support.h"

#include <QTemporaryDir>

#include <signal.h>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

QString driverPath()
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/engine/inject/inject_driver");
}

bool exists(const std::string &path)
{
    return QFile::exists(QString::fromStdString(path));
}

} // namespace

class TestInjectHelper : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void answersThroughTheHelper()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        // Six seconds: both injections (the helper started twice) within its life on a machine busy with other tests.
        Target target(injectTarget(), {QStringLiteral("alloc"), QStringLiteral("6"), QStringLiteral("2")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const std::string file = dir.filePath(QStringLiteral("helper.txt")).toStdString();
        auto first = injectWithHelper(probeRequest(target.pid(), file), injectHelper());
        VERIFY_OK(first);
        QCOMPARE(first->result, probeHash(file));
        QVERIFY(!first->loadedBefore);
        QCOMPARE(first->pathInTarget, canonical(probeLibrary()));
        QVERIFY(first->libraryBase != 0 && first->stoppedNs > 0 && first->tries >= 1);
        InjectRequest count = probeRequest(target.pid(), {});
        count.function = "inject_probe_constructed";
        count.loadIfMissing = false;
        auto constructed = injectWithHelper(count, injectHelper());
        VERIFY_OK(constructed);
        QCOMPARE(constructed->result, 1);
        QCOMPARE(constructed->libraryBase, first->libraryBase);
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    void missingHelper()
    {
        auto result = injectWithHelper(probeRequest(1, "/dev/null"), "/nonexistent/emberline-inject");
        QVERIFY(!result.ok());
        QVERIFY2(result.error().message.find("was not found at /nonexistent/emberline-inject") != std::string::npos,
                 result.error().message.c_str());
    }

    void profilerKilled_data()
    {
        QTest::addColumn<QString>("step");
        QTest::newRow("before the call") << QStringLiteral("before");
        QTest::newRow("during the call") << QStringLiteral("during");
        QTest::newRow("after the call") << QStringLiteral("after");
    }

    // The profiler (inject_driver) is killed with SIGKILL while the helper it started pauses at the step (and, for
    // "during", while the called function sleeps): the probe's call still completes, and the program finishes with
    // status 0, neither stopped nor traced.
    void profilerKilled()
    {
        QFETCH(QString, step);
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget(), {QStringLiteral("idle"), QStringLiteral("4")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const std::string file = dir.filePath(QStringLiteral("killed.txt")).toStdString();
        const std::string argument = step == QLatin1String("during") ? file + ";sleep=1000" : file;
        QProcess driver;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("EMBERLINE_INJECT_PAUSE_AT"), step);
        driver.setProcessEnvironment(env);
        driver.start(driverPath(),
                     {QString::fromStdString(injectHelper()), QStringLiteral("--pid"), QString::number(target.pid()),
                      QStringLiteral("--library"), QString::fromStdString(probeLibrary()), QStringLiteral("--function"),
                      QStringLiteral("inject_probe_entry"), QStringLiteral("--argument"),
                      QString::fromStdString(argument)});
        QVERIFY(driver.waitForStarted());
        // Where the helper stands: attached (before), inside the called function (during), past it (after).
        if (step == QLatin1String("before"))
            QTRY_VERIFY_WITH_TIMEOUT(statusField(target.pid(), "TracerPid") != "0", 5000);
        else if (step == QLatin1String("during"))
            QTRY_VERIFY_WITH_TIMEOUT(exists(file + ".started"), 5000);
        else
            QTRY_VERIFY_WITH_TIMEOUT(exists(file), 5000);
        QVERIFY2(statusField(target.pid(), "TracerPid") != "0", "the helper was not at its pause any more");
        driver.kill();
        QVERIFY(driver.waitForFinished(5000));
        QCOMPARE(driver.exitStatus(), QProcess::CrashExit);
        QVERIFY(driver.readAllStandardOutput().isEmpty()); // killed before it could answer

        // The helper finishes on its own and lets the program go.
        QTRY_VERIFY_WITH_TIMEOUT(statusField(target.pid(), "TracerPid") == "0", 10000);
        QTRY_VERIFY_WITH_TIMEOUT(exists(file), 5000);
        QFile calls(QString::fromStdString(file));
        QVERIFY(calls.open(QIODevice::ReadOnly));
        QCOMPARE(calls.readAll(), "1 " + QByteArray::fromStdString(argument) + "\n");
        const std::map<char, int> states = threadStates(target.pid());
        QVERIFY(!states.contains('t') && !states.contains('T'));
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
        QVERIFY2(output.contains("inject_target ok"), output.constData());
    }
};

QTEST_GUILESS_MAIN(TestInjectHelper)
#include "tst_inject_helper.moc"
