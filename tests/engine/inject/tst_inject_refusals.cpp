// Why injection is impossible, each case on a real process and said in words that name its cause, and the process
// left as it was: a static program, a stopped one (still stopped), a traced one, one that exits during the call, a
// library whose dependency is missing (named), a vfork child, a setuid program, a program without dlopen, one in strict
// seccomp mode, no such process, a kernel thread, a refused ptrace (another user), an injector killed by a seccomp
// filter, and a called function that never returns (abandoned). And a program of 500 threads, of which only the one
// called on is ever stopped.

#include "tests/engine/inject/inject_test_support.h"

#include <QStandardPaths>
#include <QTemporaryDir>

#include <pwd.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <atomic>
#include <thread>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

#define VERIFY_ERROR(result, text)                                                                                     \
    do {                                                                                                               \
        QVERIFY2(!(result).ok(), "the injection succeeded");                                                           \
        QVERIFY2(QString::fromStdString((result).error().message).contains(QLatin1String(text)),                       \
                 (result).error().message.c_str());                                                                    \
    } while (0)

// An executable script at `path` that runs `command` with the helper's arguments.
bool writeScript(const QString &path, const QString &command)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    f.write(QStringLiteral("#!/bin/sh\nexec %1 \"$@\"\n").arg(command).toUtf8());
    f.close();
    return QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadOther |
                                           QFile::ExeOther | QFile::ReadGroup | QFile::ExeGroup);
}

} // namespace

class TestInjectRefusals : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void staticProgram()
    {
        REQUIRE_PTRACE();
        Target target(injectTarget("hot_loop_static"), {QStringLiteral("2")});
        QVERIFY(target.started());
        QTest::qWait(100);
        auto result = injectAndCall(probeRequest(target.pid(), "/dev/null"));
        VERIFY_ERROR(result, "cannot load a library into a statically linked program");
    }

    // A stopped program is refused and stays stopped, untraced; continued, it finishes.
    void stoppedProgram()
    {
        REQUIRE_PTRACE();
        Target target(injectTarget(), {QStringLiteral("idle"), QStringLiteral("1")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        ::kill(static_cast<pid_t>(target.pid()), SIGSTOP);
        QTRY_VERIFY(statusField(target.pid(), "State").startsWith('T'));
        auto result = injectAndCall(probeRequest(target.pid(), "/dev/null"));
        VERIFY_ERROR(result, "is stopped");
        QTest::qWait(50);
        QVERIFY(statusField(target.pid(), "State").startsWith('T'));
        QCOMPARE(statusField(target.pid(), "TracerPid"), QByteArray("0"));
        ::kill(static_cast<pid_t>(target.pid()), SIGCONT);
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // A program a debugger traces: refused, naming the tracer.
    void tracedProgram()
    {
        REQUIRE_PTRACE();
        Target target(injectTarget(), {QStringLiteral("idle"), QStringLiteral("1")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const pid_t victim = static_cast<pid_t>(target.pid());
        const pid_t debugger = ::fork();
        if (debugger == 0) {
            // Only system calls after fork: seize and wait to be killed.
            if (::ptrace(PTRACE_SEIZE, victim, nullptr, nullptr) != 0)
                ::_exit(1);
            for (;;)
                ::pause();
        }
        QTRY_COMPARE(statusField(target.pid(), "TracerPid"), QByteArray::number(debugger));
        auto result = injectAndCall(probeRequest(target.pid(), "/dev/null"));
        VERIFY_ERROR(result, QStringLiteral("traced by PID %1 (a debugger?)").arg(debugger).toLatin1().constData());
        ::kill(debugger, SIGKILL);
        ::waitpid(debugger, nullptr, 0);
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // The program ends (exit(0) from another thread) while the called function sleeps. Through the helper: it is not
    // the program's parent, so the program's exit stays for its parent (this test's QProcess) to collect.
    void programExitsDuringTheCall()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget(), {QStringLiteral("exit_after"), QStringLiteral("700")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const std::string file = dir.filePath(QStringLiteral("exit.txt")).toStdString();
        auto result = injectWithHelper(probeRequest(target.pid(), file + ";sleep=3000"), injectHelper());
        VERIFY_ERROR(result, "the program exited during the injection");
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // dlopen fails (a dependency nowhere on the search path): the error is dlerror()'s, which names it.
    void failingDlopenNamesTheCause()
    {
        REQUIRE_PTRACE();
        Target target(injectTarget(), {QStringLiteral("idle"), QStringLiteral("2")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        InjectRequest r = probeRequest(target.pid(), "/dev/null");
        r.library = probeLibrary("libinject_probe_needs_gone.so");
        auto result = injectAndCall(r);
        VERIFY_ERROR(result, "libemberline_gone.so: cannot open shared object file");
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    void vforkChild()
    {
        REQUIRE_PTRACE();
        Target target(injectTarget(), {QStringLiteral("vfork"), QStringLiteral("2")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const std::string children =
            "/proc/" + std::to_string(target.pid()) + "/task/" + std::to_string(target.pid()) + "/children";
        QTRY_VERIFY(std::atoi(readProcFile(children).c_str()) > 0);
        const int child = std::atoi(readProcFile(children).c_str());
        auto result = injectAndCall(probeRequest(child, "/dev/null"));
        VERIFY_ERROR(result, "shares its memory with its parent");
        VERIFY_ERROR(result, "(a vfork child)");
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // A copy of the target owned by nobody with the set-user-ID bit, run by us: real and effective uids differ.
    void setuidProgram()
    {
        REQUIRE_PTRACE();
        if (::geteuid() != 0)
            QSKIP("making a set-user-ID program of another user needs root");
        const passwd *nobody = ::getpwnam("nobody");
        if (!nobody)
            QSKIP("no user nobody");
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("inject_target"));
        QVERIFY(QFile::copy(injectTarget(), copy));
        QVERIFY(::chown(copy.toLocal8Bit().constData(), nobody->pw_uid, static_cast<gid_t>(-1)) == 0);
        QVERIFY(::chmod(copy.toLocal8Bit().constData(), 04755) == 0);
        Target target(copy, {QStringLiteral("idle"), QStringLiteral("1")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        if (statusField(target.pid(), "Uid").split('\t').value(1) == "0")
            QSKIP("the set-user-ID bit does not take effect here (a nosuid mount)");
        auto result = injectAndCall(probeRequest(target.pid(), "/dev/null"));
        VERIFY_ERROR(result, "runs set-user-ID or set-group-ID");
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // A dynamically linked program without the C library: the loader ran it, but nothing exports dlopen.
    void noDlopen()
    {
        REQUIRE_PTRACE();
        Target target(injectTarget("inject_nolibc"), {});
        QVERIFY(target.started());
        QTest::qWait(100);
        auto result = injectAndCall(probeRequest(target.pid(), "/dev/null"));
        VERIFY_ERROR(result, "has no dlopen: none of its libraries exports dlopen or __libc_dlopen_mode");
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // Strict seccomp mode: any system call but read, write and exit kills the program, so dlopen would.
    void strictSeccomp()
    {
        REQUIRE_PTRACE();
        Target target(injectTarget(), {QStringLiteral("seccomp_strict")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        QTRY_COMPARE(statusField(target.pid(), "Seccomp"), QByteArray("1"));
        auto result = injectAndCall(probeRequest(target.pid(), "/dev/null"));
        VERIFY_ERROR(result, "runs in strict seccomp mode");
        target.process().closeWriteChannel();
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    void noSuchProcessOrKernelThread()
    {
        auto none = injectAndCall(probeRequest(0x3fffffff, "/dev/null"));
        VERIFY_ERROR(none, "no process with pid");
        auto kernel = injectAndCall(probeRequest(2, "/dev/null")); // kthreadd
        VERIFY_ERROR(kernel, "is a kernel thread");
        auto self = injectAndCall(probeRequest(QCoreApplication::applicationPid(), "/dev/null"));
        VERIFY_ERROR(self, "a process cannot trace itself");
    }

    // The injector run as another user (nobody) than the program's: ptrace is refused, and the reason says so.
    void refusedPtraceIsExplained()
    {
        REQUIRE_PTRACE();
        const QString setpriv = QStandardPaths::findExecutable(QStringLiteral("setpriv"));
        if (::geteuid() != 0 || setpriv.isEmpty())
            QSKIP("running the injector as another user needs root and setpriv (util-linux)");
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                                                      QFile::ReadOther | QFile::ExeOther));
        const QString script = dir.filePath(QStringLiteral("as_nobody"));
        QVERIFY(writeScript(script, setpriv + QStringLiteral(" --reuid=65534 --regid=65534 --clear-groups ") +
                                        QString::fromStdString(injectHelper())));
        Target target(injectTarget(), {QStringLiteral("idle"), QStringLiteral("1")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        auto result = injectWithHelper(probeRequest(target.pid(), "/dev/null"), script.toStdString());
        if (!result.ok() && result.error().message.find("cannot start") != std::string::npos)
            QSKIP("user nobody cannot run the injector from the build tree");
        VERIFY_ERROR(result, "the process belongs to user 0 and Emberline runs as 65534");
        QCOMPARE(result.error().code, Error::Code::Permission);
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // A seccomp filter that kills on ptrace (no_ptrace) kills the injector with SIGSYS: the client says so.
    void injectorKilledBySeccomp()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        const QString script = dir.filePath(QStringLiteral("no_ptrace_helper"));
        QVERIFY(
            writeScript(script, injectTarget("no_ptrace") + QLatin1Char(' ') + QString::fromStdString(injectHelper())));
        Target target(injectTarget(), {QStringLiteral("idle"), QStringLiteral("1")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        auto result = injectWithHelper(probeRequest(target.pid(), "/dev/null"), script.toStdString());
        VERIFY_ERROR(result, "the injector was killed by SIGSYS: a seccomp filter forbids ptrace");
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // A called function that does not return within the injector's five seconds: the call is abandoned, the thread
    // (asleep in nanosleep, measured by the program) put back where it was, and the program goes on unharmed: no
    // EINTR, no sleep cut short.
    void aCallThatNeverReturnsIsAbandoned()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget(), {QStringLiteral("waits"), QStringLiteral("7")});
        QVERIFY(target.started());
        const qint64 sleeper = target.announced("nanosleep");
        QVERIFY(sleeper > 0);
        InjectRequest r =
            probeRequest(target.pid(), dir.filePath(QStringLiteral("slow.txt")).toStdString() + ";sleep=8000");
        r.tid = static_cast<int>(sleeper);
        auto result = injectAndCall(r);
        VERIFY_ERROR(result, "did not return within");
        VERIFY_ERROR(result, "the call was abandoned and the thread put back where it was");
        QCOMPARE(statusField(target.pid(), "TracerPid"), QByteArray("0"));
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
        QVERIFY2(output.contains("inject_target ok"), output.constData());
    }

    // 500 threads: the injection works, and while the injector holds its thread (paused before the call), that thread
    // is the only one stopped.
    void fiveHundredThreads()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget(), {QStringLiteral("threads"), QStringLiteral("5"), QStringLiteral("500")});
        QVERIFY(target.started());
        QCOMPARE(target.announced("threads"), 500);
        const std::string file = dir.filePath(QStringLiteral("threads.txt")).toStdString();
        qputenv("EMBERLINE_INJECT_PAUSE_AT", "before");
        std::atomic<bool> done{false};
        Result<InjectReport> result = makeError(Error::Code::Internal, "not run");
        std::thread injector([&] {
            result = injectWithHelper(probeRequest(target.pid(), file), injectHelper());
            done = true;
        });
        int mostStopped = 0, mostOthers = 0;
        while (!done) {
            const std::map<char, int> states = threadStates(target.pid());
            const auto traced = states.find('t');
            mostStopped = std::max(mostStopped, traced == states.end() ? 0 : traced->second);
            const auto stopped = states.find('T');
            mostOthers = std::max(mostOthers, stopped == states.end() ? 0 : stopped->second);
            QTest::qWait(5);
        }
        injector.join();
        qunsetenv("EMBERLINE_INJECT_PAUSE_AT");
        VERIFY_OK(result);
        QCOMPARE(result->result, probeHash(file));
        QCOMPARE(mostStopped, 1);
        QCOMPARE(mostOthers, 0);
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }
};

QTEST_GUILESS_MAIN(TestInjectRefusals)
#include "tst_inject_refusals.moc"
