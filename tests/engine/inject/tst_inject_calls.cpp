// Injection into real programs (engine/inject/injector.h), in this process: the probe library loaded once and its
// function called with the result returned, a second injection finding it loaded, a call without loading, a thread's
// registers, signal mask and scheduling as they were after twenty calls, and a target in another mount namespace.

#include "tests/engine/inject/inject_test_support.h"

#include "engine/inject/target_modules.h"
#include "engine/inject/unsafe_code.h"

#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>

using namespace emberline::engine;
using namespace emberline::test;

class TestInjectCalls : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A multi-threaded program whose every thread allocates without pause: the injector must find its thread outside
    // the allocator, load the probe, call it and hand back its result. A second injection finds the library loaded
    // (the same base, the constructor not run again), and a call of another function without loading reads the
    // constructor's count: 1. If this failed, the profiler could not load its agent into a busy program, or would load
    // it twice.
    void loadsOnceAndCalls()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget(), {QStringLiteral("alloc"), QStringLiteral("8"), QStringLiteral("4")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const std::string file = dir.filePath(QStringLiteral("calls.txt")).toStdString();

        auto first = injectAndCall(probeRequest(target.pid(), file));
        VERIFY_OK(first);
        QCOMPARE(first->result, probeHash(file));
        QVERIFY(!first->loadedBefore);
        QCOMPARE(first->pathInTarget, canonical(probeLibrary()));
        QVERIFY(first->libraryBase != 0);
        QVERIFY(first->tries >= 1 && first->tries <= 200);
        QVERIFY(first->stoppedNs > 0);
        // The pause is the dlopen and the call, and a little more (the state saved and put back).
        QVERIFY(first->dlopenNs > 0 && first->callNs > 0 && first->dlopenNs + first->callNs <= first->stoppedNs);

        auto second = injectAndCall(probeRequest(target.pid(), file + ";again"));
        VERIFY_OK(second);
        QCOMPARE(second->result, probeHash(file + ";again"));
        QVERIFY(second->loadedBefore);
        QCOMPARE(second->libraryBase, first->libraryBase);

        InjectRequest count = probeRequest(target.pid(), {});
        count.function = "inject_probe_constructed";
        count.loadIfMissing = false;
        auto constructed = injectAndCall(count);
        VERIFY_OK(constructed);
        QCOMPARE(constructed->result, 1);
        QVERIFY(constructed->loadedBefore);

        // The probe recorded both calls, each after one run of its constructor; the program was never stopped for good.
        QFile calls(QString::fromStdString(file));
        QVERIFY(calls.open(QIODevice::ReadOnly));
        QCOMPARE(calls.readAll(), QByteArray("1 " + QByteArray::fromStdString(file) + "\n1 " +
                                             QByteArray::fromStdString(file) + ";again\n"));
        QCOMPARE(statusField(target.pid(), "TracerPid"), QByteArray("0"));
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
        QVERIFY2(output.contains("inject_target ok"), output.constData());
    }

    // Calling a function of a library that is not loaded, without loading it, fails with "not loaded" and leaves the
    // program untouched (what detaching the agent from a program that never had it does).
    void notLoadedIsAnError()
    {
        REQUIRE_PTRACE();
        Target target(injectTarget(), {QStringLiteral("idle"), QStringLiteral("2")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        InjectRequest r = probeRequest(target.pid(), "/dev/null");
        r.loadIfMissing = false;
        auto result = injectAndCall(r);
        QVERIFY(!result.ok());
        QVERIFY2(QString::fromStdString(result.error().message).contains(QLatin1String("not loaded")),
                 result.error().message.c_str());
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
    }

    // A program whose allocator is a shared object of its own (jemalloc, preloaded): a thread anywhere in that
    // object's code may hold the allocator's locks, which dlopen takes through malloc, so the whole of it is no safe
    // point, while libc's and the loader's ranges are found as before. If this failed, an injection could stop a
    // thread inside jemalloc and its dlopen would wait for that thread's own lock (the call abandoned at 5 s).
    void allocatorLibraryIsNoSafePoint()
    {
        const QString jemalloc = QStringLiteral("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
        if (!QFileInfo::exists(jemalloc)) {
            if (inCi())
                QFAIL("libjemalloc2 is missing (installer/install-deps.sh --test installs it)");
            QSKIP("libjemalloc2 is not installed");
        }
        QProcess target;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("LD_PRELOAD"), jemalloc);
        target.setProcessEnvironment(environment);
        target.start(QStringLiteral("/bin/sleep"), {QStringLiteral("30")});
        QVERIFY(target.waitForStarted());
        const int pid = static_cast<int>(target.processId());
        // The preloaded object and libc are mapped before sleep's main runs: wait for both in the map.
        std::vector<TargetModule> modules;
        std::vector<TargetMapping> maps;
        QElapsedTimer waited;
        waited.start();
        const TargetModule *allocator = nullptr;
        const TargetModule *libc = nullptr;
        while ((!allocator || !libc) && waited.elapsed() < 5000) {
            auto read = readTargetMaps(pid);
            QVERIFY(read.ok());
            maps = read.value();
            modules = targetModules(maps);
            allocator = findModuleByName(modules, "libjemalloc");
            libc = findModuleByName(modules, "libc");
            // libc mapped whole: its code's mapping made executable (the loader maps the file, then its segments).
            const bool libcCode = libc && std::any_of(maps.begin(), maps.end(), [libc](const TargetMapping &m) {
                                      return m.executable && m.inode == libc->inode;
                                  });
            if (!libcCode)
                libc = nullptr;
            if (!allocator || !libc)
                usleep(1000);
        }
        QVERIFY(allocator && libc);
        const UnsafeCode code = UnsafeCode::find(pid, maps, modules);
        int inside = 0;
        for (const TargetMapping &m : maps) {
            if (!m.executable || m.inode != allocator->inode)
                continue;
            for (const uint64_t pc : {m.start, m.start + (m.end - m.start) / 2, m.end - 1}) {
                const UnsafeCode::Range *range = code.rangeOf(pc);
                QVERIFY(range);
                QVERIFY2(QString::fromStdString(range->name).contains(QLatin1String("the allocator in libjemalloc")),
                         range->name.c_str());
                ++inside;
            }
        }
        QVERIFY(inside >= 3);
        QVERIFY(!code.source().empty()); // libc's ranges still found
        target.kill();
        target.waitForFinished();
    }

    // A thread in a tight loop over known values in its general, x87, vector and AVX-512 registers, MXCSR and the x87
    // control word, checked every iteration: twenty calls on that very thread (InjectRequest::tid) change none of
    // them, nor its signal mask, nor its scheduling (a batch policy at nice 3; each call runs at a real-time priority
    // where the kernel allows it). If this failed, injecting the agent would corrupt the computation of the thread it
    // borrowed, or leave it scheduled otherwise than the program set it.
    void registersAndSignalMaskIntact()
    {
        REQUIRE_PTRACE();
        QTemporaryDir dir;
        Target target(injectTarget(), {QStringLiteral("registers"), QStringLiteral("6")});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        const qint64 tid = target.announced("registers");
        QVERIFY(tid > 0);
        const QByteArray mask = statusField(target.pid(), "SigBlk", tid);
        QVERIFY(!mask.isEmpty() && mask != QByteArray("0000000000000000"));
        const sched_param normal{};
        QCOMPARE(sched_setscheduler(static_cast<pid_t>(tid), SCHED_BATCH, &normal), 0);
        QCOMPARE(setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 3), 0);
        const std::string file = dir.filePath(QStringLiteral("registers.txt")).toStdString();
        const std::string arg = file + ";policy";
        for (int i = 0; i < 20; ++i) {
            InjectRequest r = probeRequest(target.pid(), arg);
            r.tid = static_cast<int>(tid);
            auto result = injectAndCall(r);
            VERIFY_OK(result);
            QCOMPARE(result->result, probeHash(arg));
            QCOMPARE(statusField(target.pid(), "SigBlk", tid), mask);
            QCOMPARE(sched_getscheduler(static_cast<pid_t>(tid)), SCHED_BATCH);
            errno = 0;
            QCOMPARE(getpriority(PRIO_PROCESS, static_cast<id_t>(tid)), 3);
            QCOMPARE(errno, 0);
            QTest::qWait(20);
        }
        // Each call ran ahead of the program's other threads where the kernel allows it (as root, in CI), as this
        // test's own thread finds out.
        QFile calls(QString::fromStdString(file));
        QVERIFY(calls.open(QIODevice::ReadOnly));
        const QByteArray lines = calls.readAll();
        QCOMPARE(lines.count('\n'), 20);
        sched_param realTime{};
        realTime.sched_priority = sched_get_priority_min(SCHED_FIFO);
        const int own = sched_getscheduler(0);
        sched_param ownParam{};
        QCOMPARE(sched_getparam(0, &ownParam), 0);
        if (sched_setscheduler(0, SCHED_FIFO, &realTime) == 0) {
            QCOMPARE(sched_setscheduler(0, own, &ownParam), 0);
            QCOMPARE(lines.count(" policy=" + QByteArray::number(SCHED_FIFO) + "\n"), 20);
        } else {
            QCOMPARE(lines.count(" policy=" + QByteArray::number(SCHED_BATCH) + "\n"), 20);
        }
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
        QVERIFY2(output.contains("registers_blocks") && output.contains("inject_target ok"), output.constData());
    }

    // A program in a mount namespace of its own where the probe's folder is hidden (a tmpfs mounted over it) cannot
    // open the probe by our path: the injector copies it into the program's /tmp and loads the copy; a second
    // injection finds that copy loaded. If this failed, programs in containers could not be injected.
    void otherMountNamespace()
    {
        REQUIRE_PTRACE();
        if (::geteuid() != 0)
            QSKIP("mounting in a new mount namespace needs root here");
        const QString unshare = QStandardPaths::findExecutable(QStringLiteral("unshare"));
        if (unshare.isEmpty())
            QSKIP("unshare (util-linux) is not installed");
        QTemporaryDir dir;
        const QString hidden = QString::fromStdString(canonical(probeLibrary())).section(QLatin1Char('/'), 0, -2);
        const QString script =
            QStringLiteral("mount -t tmpfs tmpfs '%1' && exec '%2' idle 4").arg(hidden, injectTarget());
        Target target(unshare, {QStringLiteral("--mount"), QStringLiteral("--propagation"), QStringLiteral("private"),
                                QStringLiteral("sh"), QStringLiteral("-c"), script});
        QVERIFY(target.started());
        QVERIFY(target.announced("pid") > 0);
        QVERIFY(!QFile::exists(QStringLiteral("/proc/%1/root%2").arg(target.pid()).arg(hidden) +
                               QStringLiteral("/libinject_probe.so")));
        const std::string file = dir.filePath(QStringLiteral("namespace.txt")).toStdString();
        auto first = injectAndCall(probeRequest(target.pid(), file));
        VERIFY_OK(first);
        QCOMPARE(first->result, probeHash(file));
        QVERIFY2(first->pathInTarget.find("/emberline-inject/libinject_probe-") != std::string::npos,
                 first->pathInTarget.c_str());
        auto second = injectAndCall(probeRequest(target.pid(), file));
        VERIFY_OK(second);
        QVERIFY(second->loadedBefore);
        QCOMPARE(second->pathInTarget, first->pathInTarget);
        QByteArray output;
        QCOMPARE(target.finish(output), 0);
        QFile::remove(QString::fromStdString(first->pathInTarget));
    }
};

QTEST_GUILESS_MAIN(TestInjectCalls)
#include "tst_inject_calls.moc"
