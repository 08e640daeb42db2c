// The launcher: a child held before exec until released, exec failures reported, the working directory and
// added environment applied, and a session of its own on request.

#include "engine/process/launcher.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace emberline::engine;

class TestLauncher : public QObject {
    Q_OBJECT
private:
    static int waitExit(LaunchedProcess &child)
    {
        int status = -1;
        for (int i = 0; i < 500 && !child.poll(status); ++i)
            QTest::qWait(10);
        return status;
    }

private Q_SLOTS:
    void ownSessionSeparatesTheChild_data()
    {
        QTest::addColumn<bool>("ownSession");
        QTest::newRow("shared session") << false;
        QTest::newRow("own session") << true;
    }

    void ownSessionSeparatesTheChild()
    {
        QFETCH(bool, ownSession);
        LaunchOptions options;
        options.argv = {"sleep", "5"};
        options.ownSession = ownSession;
        auto child = LaunchedProcess::spawn(options);
        QVERIFY2(child.ok(), child ? "" : child.error().message.c_str());
        QVERIFY(child->release().ok());
        // release() returns once the exec succeeded, and setsid() comes before it.
        const pid_t sid = ::getsid(child->pid());
        if (ownSession)
            QCOMPARE(sid, child->pid());
        else
            QCOMPARE(sid, ::getsid(0));
        int status = 0;
        child->terminate(1000, status);
        QCOMPARE(status, 128 + SIGTERM);
    }

    void execFailureIsReported()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString script = dir.filePath(QStringLiteral("no-interpreter"));
        {
            std::ofstream out(script.toStdString());
            out << "#!/nonexistent/interpreter\n";
        }
        QFile::setPermissions(script, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        LaunchOptions options;
        options.argv = {script.toStdString()};
        auto child = LaunchedProcess::spawn(options);
        QVERIFY(child.ok());
        auto released = child->release();
        QVERIFY(!released.ok());
        QVERIFY2(released.error().message.find("cannot execute") != std::string::npos,
                 released.error().message.c_str());
    }

    // The GUI's session thread launches the target; if that thread goes away without ending it (the profiler
    // crashed), a target in a session of its own must not be left running.
    void ownSessionEndsWithItsLauncher()
    {
        std::optional<LaunchedProcess> child;
        std::string error;
        std::thread launcher([&] {
            LaunchOptions options;
            options.argv = {"sleep", "30"};
            options.ownSession = true;
            auto spawned = LaunchedProcess::spawn(options);
            if (!spawned) {
                error = spawned.error().message;
                return;
            }
            if (auto released = spawned->release(); !released) {
                error = released.error().message;
                return;
            }
            child.emplace(std::move(spawned).value());
        });
        launcher.join();
        QVERIFY2(error.empty(), error.c_str());
        QVERIFY(child.has_value());
        QCOMPARE(waitExit(*child), 128 + SIGTERM);
    }

    void workingDirectoryAndEnvironment()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        LaunchOptions options;
        options.argv = {"sh", "-c", "printf '%s' \"$EMBERLINE_PROBE\" > probe.txt"};
        options.workingDirectory = dir.path().toStdString();
        options.environment = {{"EMBERLINE_PROBE", "seen"}};
        auto child = LaunchedProcess::spawn(options);
        QVERIFY(child.ok());
        QVERIFY(child->release().ok());
        QCOMPARE(waitExit(child.value()), 0);
        std::ifstream in(dir.filePath(QStringLiteral("probe.txt")).toStdString());
        std::string text;
        std::getline(in, text);
        QCOMPARE(text, std::string("seen"));
    }

    void missingWorkingDirectoryIsRefused()
    {
        LaunchOptions options;
        options.argv = {"true"};
        options.workingDirectory = "/nonexistent/emberline-launcher-test";
        auto child = LaunchedProcess::spawn(options);
        QVERIFY(!child.ok());
        QVERIFY2(child.error().message.find("No such file") != std::string::npos, child.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLauncher)
#include "tst_launcher.moc"
