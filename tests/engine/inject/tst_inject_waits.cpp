// Injection does not disturb a thread's wait: calls injected into threads blocked in poll, epoll_wait, select,
// nanosleep, a pipe read, a vfork parent's wait, a futex with and without timeout, each of which treats EINTR as a
// failure, leave every wait to complete as if nothing had happened, and a 300 ms nanosleep is not cut short (the
// target measures it), and a thread's own signals reach it. If this failed, attaching the agent would make a program
// see spurious errors, wake early or lose signals.

#include "tests/engine/inject/inject_test_support.h"

#include <QElapsedTimer>
#include <QTemporaryDir>

#include <signal.h>

#include <thread>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

QList<qint64> threadsOf(qint64 pid)
{
    QList<qint64> tids;
    for (const QString &tid :
         QDir(QStringLiteral("/proc/%1/task").arg(pid)).entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        tids << tid.toLongLong();
    return tids;
}

} // namespace

class TestInjectWaits : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // strict_waits: six threads in poll, epoll_wait, select, nanosleep, a pipe read and a vfork, and the main thread
    // in nanosleep; three calls on each. Exit 3 would name the wait that saw EINTR.
    void strictWaits()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget("strict_waits"), {QStringLiteral("5")});
        QVERIFY(target.started());
        QTest::qWait(300);
        const QList<qint64> tids = threadsOf(target.pid());
        QCOMPARE(tids.size(), 7);
        const std::string file = dir.filePath(QStringLiteral("waits.txt")).toStdString();
        for (int round = 0; round < 3; ++round) {
            for (const qint64 tid : tids) {
                InjectRequest r = probeRequest(target.pid(), file);
                r.tid = static_cast<int>(tid);
                auto result = injectAndCall(r);
                VERIFY_OK(result);
                QCOMPARE(result->result, probeHash(file));
            }
            QTest::qWait(100);
        }
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
        QVERIFY2(output.contains("strict_waits ok"), output.constData());
    }

    // inject_target's waits: a futex without timeout (woken only at the end), a futex with a 200 ms timeout and a
    // 300 ms nanosleep, each measured; five calls on each, and on the main thread (in nanosleep of the run's length).
    void futexAndSleepWaits()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget(), {QStringLiteral("waits"), QStringLiteral("4")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const QList<qint64> tids = {target.announced("futex"), target.announced("timed_futex"),
                                    target.announced("nanosleep"), target.pid()};
        QVERIFY(!tids.contains(0));
        const std::string file = dir.filePath(QStringLiteral("waits.txt")).toStdString();
        for (int round = 0; round < 5; ++round) {
            for (const qint64 tid : tids) {
                InjectRequest r = probeRequest(target.pid(), file);
                r.tid = static_cast<int>(tid);
                auto result = injectAndCall(r);
                VERIFY_OK(result);
                QCOMPARE(result->tries, 1); // a thread asleep in the kernel is at a safe point
            }
            QTest::qWait(130); // other phases of the timed waits
        }
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
        QVERIFY2(output.contains("inject_target ok"), output.constData());
    }

    // A thread that takes a SIGALRM every millisecond and a queued real-time signal every 200 us: a signal that stops
    // it before our interrupt does is held and delivered when it is let go, with its siginfo, and those that come
    // during the (slow) call are passed on at once, their handler running nested as for any signal. Every real-time
    // signal is handled exactly once (exit 10 otherwise), at least half the ticks are, and the probe's calls all
    // complete.
    void signalsPassThrough()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        QElapsedTimer clock;
        clock.start();
        Target target(injectTarget(), {QStringLiteral("signals"), QStringLiteral("4")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const std::string file = dir.filePath(QStringLiteral("signals.txt")).toStdString();
        // Ten calls take about 1.3 s; on a loaded machine, as many as fit while the program has most of a second
        // left to run (a call begun as it exits would find no program).
        int calls = 0;
        for (; calls < 10 && clock.elapsed() < 3000; ++calls) {
            auto result = injectAndCall(probeRequest(target.pid(), file + ";sleep=30"));
            VERIFY_OK(result);
            QCOMPARE(result->result, probeHash(file + ";sleep=30"));
            QTest::qWait(50);
        }
        QVERIFY2(calls >= 3, qPrintable(QString::number(calls)));
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
        QVERIFY2(output.contains("inject_target ok"), output.constData());
    }

    // The program's handler runs during the call (SIGUSR1 sent while the probe sleeps), while its thread, as the
    // program sees it, waits in pause() for that handler: pause() must return, as it would have without us, not be
    // restarted into a wait that never ends.
    void aHandlerDuringTheCallEndsTheWait()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget(), {QStringLiteral("pause_flag")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        QTest::qWait(50); // in pause()
        const std::string file = dir.filePath(QStringLiteral("pause.txt")).toStdString();
        Result<InjectReport> result = makeError(Error::Code::Internal, "not run");
        std::thread injector([&] { result = injectAndCall(probeRequest(target.pid(), file + ";sleep=500")); });
        QTRY_VERIFY(QFile::exists(QString::fromStdString(file + ".started")));
        ::kill(static_cast<pid_t>(target.pid()), SIGUSR1);
        injector.join();
        VERIFY_OK(result);
        QByteArray output;
        QCOMPARE(target.finish(output, 5000), 0);
        QVERIFY2(output.contains("woken"), output.constData());
    }
};

QTEST_GUILESS_MAIN(TestInjectWaits)
#include "tst_inject_waits.moc"
