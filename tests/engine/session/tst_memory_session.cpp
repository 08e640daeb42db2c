// Memory profiling end to end (SessionConfig::memory): real programs launched with the agent preloaded, sampled by the
// real perf sampler, their allocations read from the agent's rings, unwound, recorded and exported. The values are
// checked against what the targets allocate, free and leak by construction (tests/targets/alloc_truths.c,
// alloc_faults.c), every allocation recorded; the sampled estimates' accuracy is tst_memory_accuracy's.

#include "tests/engine/session/memory_test_support.h"
#include "tests/engine/session/session_test_support.h"

#include "engine/model/frame_table.h"
#include "engine/model/sample_kinds.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/session/agent_link.h"
#include "engine/session/record_session.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/vfs.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <map>
#include <set>
#include <thread>

using namespace emberline::engine;
using namespace emberline::test;

class TestMemorySession : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { REQUIRE_PERF_EVENTS(); }

    // The in-process sampler and memory profiling in one program: the session's one reader of the rings hands the
    // CPU records to the sampler and the memory records to the memory side, a forked child's image in ring order. (No
    // exec: the in-process sampler reports no maps, and an exec'd image that ends at once leaves none in /proc to
    // unwind its allocations with.) If this fails, the memory side lost records to the sampler side (a reader chosen
    // by one side, the other's records forwarded or dropped).
    void inprocessSamplerAndMemoryShareTheRings()
    {
        QTemporaryDir dir;
        SessionConfig config = memoryLaunch(
            {targetPath("alloc_truths"), QStringLiteral("no-exec"), QStringLiteral("0"), QStringLiteral("300")}, 1);
        config.sampler = "inprocess";
        const Recorded r = record(config, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY2(QString::fromStdString(r.summary.samplerDescription).startsWith(QStringLiteral("in-process")),
                 r.summary.samplerDescription.c_str());
        QVERIFY(r.summary.memory);
        const MemorySummary &m = *r.summary.memory;
        QCOMPARE(m.processes, uint64_t(2)); // the program and its forked child
        QCOMPARE(m.allocsDropped, uint64_t(0));
        QCOMPARE(m.unknownFrees, uint64_t(0));
        // main: freed 1000 x 777, leaked 100 x 3333, grown in 4 steps, aligned 10 x 5005, the child's 60 x 2221.
        const auto objects = byLeaf(r.profile, "alloc-samples");
        QCOMPARE(at(objects, "main"), int64_t(1000 + 100 + 4 + 10 + 60));
        QCOMPARE(at(objects, "threadWork"), int64_t(500));
        const auto leakedBytes = byLeaf(r.profile, "inuse-space");
        QCOMPARE(at(leakedBytes, "main"), int64_t(333300 + 66630));
        QVERIFY(!r.flushes.empty());
        QCOMPARE(total(*r.flushes.back()->profile, "inuse-space"), total(r.profile, "inuse-space"));
    }

    // The live numbers a memory session reports every quarter second carry the program's resident memory (RSS, its
    // processes together) beside its live heap, timed by the wall clock: the Memory tab's one fast channel. If this
    // fails, the chart's RSS line stays empty.
    void statsCarryResidentMemory()
    {
        QTemporaryDir dir;
        SessionConfig config = memoryLaunch({targetPath("cpu_split"), QStringLiteral("1.5")}, 524288);
        config.outputDirectory = dir.path().toStdString();
        RecordSession session(config);
        SessionControl control;
        RecordSession::Callbacks callbacks;
        std::vector<SessionStats> stats;
        callbacks.onStats = [&](const SessionStats &s) { stats.push_back(s); };
        auto result = session.run(control, callbacks);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        int withResident = 0;
        const int64_t now =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        for (const SessionStats &s : stats) {
            QVERIFY(s.memory);
            if (s.residentBytes <= 0)
                continue; // gone, or exited and not yet reaped (a zombie holds no pages)
            ++withResident;
            QVERIFY2(s.residentBytes > (256 << 10), qPrintable(QString::number(s.residentBytes)));
            QVERIFY(std::abs(s.realNs - now) < 60'000'000'000LL);
        }
        QVERIFY2(withResident >= 3, qPrintable(QStringLiteral("%1 of %2").arg(withResident).arg(stats.size())));
    }

    // Every allocation recorded (interval 1): the counts and bytes per site equal the program's, across a thread, a
    // fork and an exec; profile.pprof's in-use values are the leaks of each process; the flushes' allocations add
    // up to the session's.
    void exactEqualsTruths()
    {
        QTemporaryDir dir;
        const Recorded r = record(memoryLaunch({targetPath("alloc_truths"), QStringLiteral("exec")}, 1), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.memory);
        const MemorySummary &m = *r.summary.memory;
        QVERIFY2(m.problems.empty(), m.problems.empty() ? "" : m.problems.front().c_str());
        QCOMPARE(m.processes, uint64_t(3)); // the program, its forked child, the exec'd image
        QCOMPARE(m.allocsDropped, uint64_t(0));
        QCOMPARE(m.unknownFrees, uint64_t(0)); // every block freed was seen allocated: the agent's own pass by

        std::map<std::string, std::set<int64_t>> pids;
        const auto objects = byLeaf(r.profile, "alloc-samples", &pids);
        const auto bytes = byLeaf(r.profile, "alloc-space");
        // main: freed 1000 x 777, leaked 100 x 3333, grown 1001+2002+3003+4004, aligned 10 x 5005, the child's
        // 60 x 2221 and the exec'd image's 40 x 6007.
        QCOMPARE(at(objects, "main"), int64_t(1000 + 100 + 4 + 10 + 60 + 40));
        QCOMPARE(at(bytes, "main"), int64_t(777000 + 333300 + 10010 + 50050 + 133260 + 240280));
        QCOMPARE(at(objects, "threadWork"), int64_t(500));
        QCOMPARE(at(bytes, "threadWork"), int64_t(500 * 4099));
        QCOMPARE(pids["main"].size(),
                 size_t(2)); // the forked child's samples keep its own pid (the exec keeps the pid)

        // Lifetimes: what the program frees right after allocating it is labelled short-lived (main's 1000 freed,
        // the 4 steps of the realloc chain, the 10 aligned blocks and the child's 30 freed blocks; the thread's 500),
        // what it keeps is not. A free more than 1 ms late (the machine busy) leaves a block out: a tenth at most.
        QVERIFY(tellsLifetimes(r.profile));
        const auto shortLived = byLeaf(r.profile, "alloc-samples", nullptr, true);
        QVERIFY2(at(shortLived, "main") >= 940 && at(shortLived, "main") <= 1044,
                 qPrintable(QString::number(at(shortLived, "main"))));
        QVERIFY2(at(shortLived, "threadWork") >= 450 && at(shortLived, "threadWork") <= 500,
                 qPrintable(QString::number(at(shortLived, "threadWork"))));

        // Block sizes: each allocation row carries its blocks' size (kBlockBytesLabel; a row is one stack's blocks of
        // one power-of-two class, and each site here makes one size), and the Sizes list counts them by class.
        std::map<int64_t, int64_t> objectsBySize;
        const int allocIndex = r.profile.sampleTypeIndex("alloc-samples");
        const StringId bytesKey = r.profile.findString(kBlockBytesLabel);
        QVERIFY(bytesKey != kNoIndex);
        for (size_t i = 0; i < r.profile.sampleCount(); ++i) {
            const int64_t n = r.profile.sampleValues(i)[static_cast<size_t>(allocIndex)];
            if (n == 0)
                continue;
            int64_t size = -1;
            for (const Label &l : r.profile.sampleLabels(i))
                size = l.key == bytesKey ? l.num : size;
            QVERIFY2(size >= 0, "an allocation row without its block size");
            objectsBySize[size] += n;
        }
        QCOMPARE(objectsBySize[777], int64_t(1000));
        QCOMPARE(objectsBySize[3333], int64_t(100));
        QCOMPARE(objectsBySize[5005], int64_t(10));
        QCOMPARE(objectsBySize[4099], int64_t(500));
        QCOMPARE(objectsBySize[2221], int64_t(60));
        QCOMPARE(objectsBySize[6007], int64_t(40));
        int64_t class13 = 0; // 4097 to 8192 bytes: 500 x 4099, 10 x 5005, 40 x 6007 and whatever the C library made
        for (const SizeClassRow &row : memoryByStack(r.profile).sizes)
            class13 += row.sizeClass == 13 ? row.allocObjects : 0;
        QVERIFY2(class13 >= 550, qPrintable(QString::number(class13)));

        // Leaks: the 100 callocs, half the child's blocks, and the exec'd image's 40 blocks; nothing freed.
        const auto leakedObjects = byLeaf(r.profile, "inuse-objects");
        const auto leakedBytes = byLeaf(r.profile, "inuse-space");
        QCOMPARE(at(leakedObjects, "main"), int64_t(100 + 30 + 40));
        QCOMPARE(at(leakedBytes, "main"), int64_t(333300 + 66630 + 240280));
        QVERIFY(!leakedBytes.count("threadWork"));
        QVERIFY(m.leakedBytes >= 640210.0);
        QCOMPARE(m.leakedBytesMargin, 0.0); // every allocation recorded: no sampling error
        QCOMPARE(m.allocatedBytesMargin, 0.0);
        // The hooks' count of every allocation, the child's and the exec'd image's included, is the records'.
        QVERIFY(m.allocatedExact);
        QVERIFY2(m.allocatedObjects >= m.sampledAllocatedObjects &&
                     m.allocatedObjects - m.sampledAllocatedObjects <= 10,
                 qPrintable(
                     QStringLiteral("%1 counted, %2 recorded").arg(m.allocatedObjects).arg(m.sampledAllocatedObjects)));
        for (const auto &f : r.flushes) {
            QCOMPARE(f->inUseBytesMargin, 0.0);
            QCOMPARE(inUseMarginOf(*f->profile), -1.0);
        }

        // The flushes' allocations sum to the session's; their in-use values are snapshots, and the last one's are the
        // leaks (every process had ended), the session's in-use values: the live views take them from there.
        int64_t flushBytes = 0;
        for (const auto &f : r.flushes)
            flushBytes += total(*f->profile, "alloc-space");
        QCOMPARE(flushBytes, total(r.profile, "alloc-space"));
        QVERIFY(!r.flushes.empty());
        QVERIFY(r.flushes.back()->final);
        QCOMPARE(total(*r.flushes.back()->profile, "inuse-space"), total(r.profile, "inuse-space"));
        QCOMPARE(total(*r.flushes.back()->profile, "inuse-objects"), total(r.profile, "inuse-objects"));
        QVERIFY(std::llround(m.allocatedBytes) >= total(r.profile, "alloc-space"));
    }

    // 10,000 threads created and ended one after another, each leaking one block: every thread's allocations are
    // seen, and the leaks are the threads' own.
    void manyShortThreads()
    {
        QTemporaryDir dir;
        const Recorded r =
            record(memoryLaunch({targetPath("alloc_faults"), QStringLiteral("threads"), QStringLiteral("10000")}, 1),
                   dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QCOMPARE(at(byLeaf(r.profile, "alloc-samples"), "threadBody"), int64_t(3 * 10000));
        QCOMPARE(at(byLeaf(r.profile, "inuse-space"), "threadBody"), int64_t(10000 * 1111));
        QCOMPARE(r.summary.memory->allocsDropped, uint64_t(0));
        // The hooks' totals agree with the records, but for the C library's and the agent's own few.
        QVERIFY(r.summary.memory->allocatedExact);
        QVERIFY2(r.summary.memory->allocatedObjects >= 3 * 10000 &&
                     r.summary.memory->allocatedObjects - r.summary.memory->sampledAllocatedObjects <= 50,
                 qPrintable(QStringLiteral("%1 counted, %2 recorded")
                                .arg(r.summary.memory->allocatedObjects)
                                .arg(r.summary.memory->sampledAllocatedObjects)));

        // Sampled, a thread of 3 small blocks is almost never sampled: its count reaches the session when it ends.
        QTemporaryDir sampledDir;
        const Recorded sampled = record(
            memoryLaunch({targetPath("alloc_faults"), QStringLiteral("threads"), QStringLiteral("10000")}, 524288),
            sampledDir.path());
        QCOMPARE(sampled.summary.exitStatus, 0);
        QVERIFY2(std::abs(sampled.summary.memory->allocatedObjects - r.summary.memory->allocatedObjects) <= 50,
                 qPrintable(QStringLiteral("%1 counted sampled, %2 exact")
                                .arg(sampled.summary.memory->allocatedObjects)
                                .arg(r.summary.memory->allocatedObjects)));
    }

    // Every allocation means malloc(0) too, a thread's first allocation among them: exact mode records each. If this
    // fails, a zero-byte allocation, which takes nothing off the countdown, slips past the hooks' count.
    void zeroByteAllocations()
    {
        QTemporaryDir dir;
        const Recorded r = record(
            memoryLaunch({targetPath("alloc_faults"), QStringLiteral("zero"), QStringLiteral("1000")}, 1), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        const auto objects = byLeaf(r.profile, "alloc-samples");
        QCOMPARE(at(objects, "zeroSized") + at(objects, "zeroThread"), int64_t(1001));
        QCOMPARE(at(objects, "zeroThread"), int64_t(1));
    }

    // Allocations from a signal handler while the interrupted code allocates too: every one is recorded once.
    // An interval far larger than the program's heap: no sample stands for it, and a process image's live heap shows
    // as its exact count (the agent's, in the allocator's sizes) under one "[heap no sample saw]" frame, not as
    // nothing: the program's leaks are the calloc site's 100 blocks of 3333 bytes (3344-byte chunks) and the C
    // library's few of its own (stdout's buffer); the forked child's counts are not whole, and it shows none.
    void unsampledHeapCounted()
    {
        QTemporaryDir dir;
        const Recorded r = record(memoryLaunch({targetPath("alloc_truths")}, uint64_t(1) << 40), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QCOMPARE(r.summary.memory->samples, uint64_t(0));
        const int64_t leaked = at(byLeaf(r.profile, "inuse-space"), "[heap no sample saw]");
        constexpr int64_t kCallocChunks = int64_t(100) * 3344;
        QVERIFY2(leaked >= kCallocChunks && leaked <= kCallocChunks + 16384, qPrintable(QString::number(leaked)));
        QCOMPARE(int64_t(std::llround(r.summary.memory->leakedBytes)), leaked);
    }

    void allocationsInSignalHandler()
    {
        QTemporaryDir dir;
        const Recorded r = record(memoryLaunch({targetPath("alloc_faults"), QStringLiteral("signal")}, 1), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QCOMPARE(at(byLeaf(r.profile, "alloc-samples"), "onAlarm"), int64_t(500));
        QCOMPARE(r.summary.memory->unknownFrees, uint64_t(0));
        QCOMPARE(r.summary.memory->allocsDropped, uint64_t(0));
    }

    void endings_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<int>("status");
        QTest::newRow("_exit (no destructors)") << QStringLiteral("_exit") << 0;
        QTest::newRow("abort") << QStringLiteral("abort") << 128 + SIGABRT;
    }

    // A program that ends without running its destructors still has its leaks: its ring says so once the process is
    // gone.
    void endings()
    {
        QFETCH(QString, mode);
        QFETCH(int, status);
        QTemporaryDir dir;
        const Recorded r = record(memoryLaunch({targetPath("alloc_faults"), mode}, 1), dir.path());
        QCOMPARE(r.summary.exitStatus, status);
        QCOMPARE(at(byLeaf(r.profile, "inuse-objects"), "leak"), int64_t(50));
        QCOMPARE(at(byLeaf(r.profile, "inuse-space"), "leak"), int64_t(50 * 2777));
    }

    // The rings' folder is on tmpfs where one has room (here /dev/shm): a ring in a file on disk would be written
    // back as the program writes it.
    void ringsOnTmpfs()
    {
        struct statfs shm {};
        if (::statfs("/dev/shm", &shm) != 0 || shm.f_type != TMPFS_MAGIC ||
            uint64_t(shm.f_bavail) * uint64_t(shm.f_bsize) < (uint64_t(64) << 20))
            QSKIP("/dev/shm is not a tmpfs with 64 MiB free on this machine");
        auto link = AgentLink::create(memoryLaunch({targetPath("alloc_truths")}, 1), "memory profiling");
        QVERIFY2(link.ok(), link.ok() ? "" : link.error().message.c_str());
        struct statfs fs {};
        QCOMPARE(::statfs(link.value()->rings().directory().c_str(), &fs), 0);
        QCOMPARE(fs.f_type, decltype(fs.f_type)(TMPFS_MAGIC));
    }

    // A folder with no room (a full tmpfs, as a full disk). With no room for a ring's first pages, each process
    // image leaves a marker instead of a ring; with room for a ring's first pages but not for the rest, the ring
    // works in what it has (in exact mode too: what finds no room is counted as lost). Never a ring page the program
    // could not write to: the program runs to its end, unharmed, and the summary says why its memory is not wholly
    // profiled.
    void ringsFolderFull_data()
    {
        QTest::addColumn<QString>("size");
        QTest::addColumn<qulonglong>("interval");
        QTest::addColumn<QString>("said");
        QTest::newRow("no room for a ring")
            << QStringLiteral("size=2m") << qulonglong(1) << QStringLiteral("could not make the memory agent's ring");
        QTest::newRow("no room for the rest")
            << QStringLiteral("size=2m") << qulonglong(16384) << QStringLiteral("could not be reserved whole");
        QTest::newRow("exact, no room for the rest")
            << QStringLiteral("size=3m") << qulonglong(1) << QStringLiteral("could not be reserved whole");
    }
    void ringsFolderFull()
    {
        QFETCH(QString, size);
        QFETCH(qulonglong, interval);
        QFETCH(QString, said);
        QTemporaryDir mountPoint;
        // Mounting needs root, as CI runs.
        if (::mount("tmpfs", mountPoint.path().toLocal8Bit().constData(), "tmpfs", 0, size.toLatin1().constData()) !=
            0) {
            if (inCi())
                QFAIL(qPrintable(QStringLiteral("cannot mount a tmpfs (%1), but CI=true").arg(strerror(errno))));
            QSKIP("mounting a tmpfs needs root");
        }
        QTemporaryDir dir;
        SessionConfig c = memoryLaunch({targetPath("alloc_truths")}, interval);
        c.agentFolderParent = mountPoint.path().toStdString();
        const Recorded r = record(c, dir.path());
        ::umount2(mountPoint.path().toLocal8Bit().constData(), MNT_DETACH);
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.memory);
        QString problems;
        for (const std::string &p : r.summary.memory->problems)
            problems += QString::fromStdString(p) + QStringLiteral("; ");
        QVERIFY2(problems.contains(said), qPrintable(problems));
        QVERIFY2(problems.contains(QString::fromUtf8(strerror(ENOSPC))), qPrintable(problems));
        QVERIFY2(!problems.contains(QStringLiteral("LD_PRELOAD")), qPrintable(problems));
    }

    // The session stopped while the program runs: the program is ended, and what it held then is in profile.pprof.
    void stoppedMidRun()
    {
        QTemporaryDir dir;
        SessionConfig c = memoryLaunch({targetPath("alloc_faults"), QStringLiteral("linger"), QStringLiteral("30")}, 1);
        c.outputDirectory = dir.path().toStdString();
        std::atomic<bool> stop{false};
        RecordSession session(c);
        std::thread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
            stop = true;
        });
        auto result = session.run(stop);
        stopper.join();
        QVERIFY(result.ok());
        QCOMPARE(result->endReason, std::string("stopped"));
        auto profile = readPprofFile(result->sessionProfilePath);
        QVERIFY(profile.ok());
        QCOMPARE(at(byLeaf(profile.value(), "inuse-space"), "leak"), int64_t(50 * 2777));
    }

    // A statically linked program cannot take the agent: the summary says so and the CPU profile goes on.
    void staticBinary()
    {
        QTemporaryDir dir;
        const Recorded r =
            record(memoryLaunch({targetPath("hot_loop_static"), QStringLiteral("0.5")}, 524288), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.samples > 0);
        QVERIFY(r.summary.memory);
        QCOMPARE(r.summary.memory->processes, uint64_t(0));
        QVERIFY(!r.summary.memory->problems.empty());
        QVERIFY2(r.summary.memory->problems.front().find("statically linked") != std::string::npos,
                 r.summary.memory->problems.front().c_str());
    }

    // `env LD_PRELOAD= program`: env ran with the agent, the program it exec'd without; the summary names it. In
    // the ordinary runs above (posixSpawn, endings) no program is named.
    void preloadReplacedNamed()
    {
        QTemporaryDir dir;
        const Recorded r = record(
            memoryLaunch({QStringLiteral("/usr/bin/env"), QStringLiteral("LD_PRELOAD="), targetPath("alloc_leaks")},
                         524288),
            dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.memory);
        QString problems;
        for (const std::string &p : r.summary.memory->problems)
            problems += QString::fromStdString(p) + QLatin1Char('\n');
        QVERIFY2(problems.contains(QStringLiteral("alloc_leaks (pid")) &&
                     problems.contains(QStringLiteral("ran without the memory agent")),
                 qPrintable(problems));
        QVERIFY2(!problems.contains(QStringLiteral("env (pid")), qPrintable(problems));
    }

    // A shell that execs its command at once (`bash -c 'exec PROGRAM'`, as wrappers, launch scripts and pyenv's shims
    // do): the shell's ring appears moments before its exec, and is read before the exec is handled, with the shell's
    // own map; the program's ring, which may be there by then, is read with the program's. With perf, the maps come
    // from its mapping records; with the in-process and ptrace samplers, which read /proc, from the agents' module
    // records (the shell is gone from /proc before its ring is read). If this fails, the shell's allocations and
    // leaks show as "[unknown] 0x..." rows, or the program's do.
    void shellExecsAtOnce_data()
    {
        QTest::addColumn<QString>("sampler");
        QTest::addColumn<QString>("described");                                    // as the summary names it
        QTest::newRow("perf") << QStringLiteral("perf") << QStringLiteral("perf"); // its exec record says when
        QTest::newRow("inprocess") << QStringLiteral("inprocess") << QStringLiteral("in-process sampler");
        QTest::newRow("ptrace") << QStringLiteral("ptrace") << QStringLiteral("ptrace");
    }
    void shellExecsAtOnce()
    {
        QFETCH(QString, sampler);
        QFETCH(QString, described);
        QTemporaryDir dir;
        SessionConfig c = memoryLaunch({QStringLiteral("/bin/bash"), QStringLiteral("-c"),
                                        QStringLiteral("exec '%1' after-exec").arg(targetPath("alloc_truths"))},
                                       1);
        c.sampler = sampler.toStdString();
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY2(QString::fromStdString(r.summary.samplerDescription).contains(described),
                 r.summary.samplerDescription.c_str());
        const auto objects = byLeaf(r.profile, "alloc-samples");
        const QString all = leafRows(objects);
        QVERIFY2(!all.contains(QLatin1String("[unknown]")), qPrintable(all));
        QVERIFY2(at(objects, "xmalloc") > 0, qPrintable(all)); // bash's own, named from its symbol table
        QCOMPARE(at(objects, "main"), int64_t(40));            // the program's 40 blocks of 6007 bytes
        QCOMPARE(at(byLeaf(r.profile, "alloc-space"), "main"), int64_t(40 * 6007));
    }

    // A program that dlopens a library, allocates in it and ends at once: the library's module is read before its
    // allocations, even where the program is gone from /proc by then (the in-process and ptrace samplers: the agent
    // lists a module loaded since its last list before the copied or walked stack that may run in it). If this fails,
    // the library's allocations show as "[unknown] 0x..." rows.
    void moduleLoadedJustBeforeTheEnd_data()
    {
        QTest::addColumn<QString>("sampler");
        QTest::newRow("perf") << QStringLiteral("perf");
        QTest::newRow("inprocess") << QStringLiteral("inprocess");
        QTest::newRow("ptrace") << QStringLiteral("ptrace");
    }
    void moduleLoadedJustBeforeTheEnd()
    {
        QFETCH(QString, sampler);
        QTemporaryDir dir;
        SessionConfig c =
            memoryLaunch({targetPath("dlopener"), targetPath("libdlwork.so"), QStringLiteral("alloc")}, 1);
        c.sampler = sampler.toStdString();
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        const auto objects = byLeaf(r.profile, "alloc-samples");
        const QString all = leafRows(objects);
        QVERIFY2(!all.contains(QLatin1String("[unknown]")), qPrintable(all));
        QCOMPARE(at(objects, "dl_allocate"), int64_t(31)); // its 30 blocks of 4099 bytes, and their list
        QCOMPARE(at(byLeaf(r.profile, "alloc-space"), "dl_allocate"), int64_t(30 * 4099 + 30 * 8));
    }

    // A program that allocates nothing through malloc (/bin/true; Go's runtime keeps a heap of its own): the summary
    // says why its memory profile is empty. If this fails, such a session shows 0 B and says nothing.
    void noAllocationNamed()
    {
        QTemporaryDir dir;
        const Recorded r = record(memoryLaunch({QStringLiteral("/bin/true")}, 524288), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.memory);
        QCOMPARE(r.summary.memory->processes, uint64_t(1));
        QString problems;
        for (const std::string &p : r.summary.memory->problems)
            problems += QString::fromStdString(p) + QLatin1Char('\n');
        QVERIFY2(problems.contains(QStringLiteral("made no allocation through malloc or operator new")),
                 qPrintable(problems));
    }

    // posix_spawn (a vfork-like clone, then exec): the spawned program is a process image of its own, with its own
    // agent, leaks and pid; the parent's leaks stay the parent's.
    void posixSpawn()
    {
        QTemporaryDir dir;
        const QString self = targetPath("alloc_faults");
        const Recorded r = record(memoryLaunch({self, QStringLiteral("spawn"), self}, 1), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QCOMPARE(r.summary.memory->processes, uint64_t(2));
        std::map<std::string, std::set<int64_t>> pids;
        QCOMPARE(at(byLeaf(r.profile, "inuse-objects", &pids), "leak"), int64_t(100)); // 50 each
        QCOMPARE(pids["leak"].size(), size_t(2));
        for (const std::string &p : r.summary.memory->problems)
            QVERIFY2(p.find("ran without the memory agent") == std::string::npos, p.c_str());
    }

    // A program that brings its own allocator (jemalloc, tcmalloc or mimalloc, Debian's, preloaded as a user would):
    // the agent comes first in LD_PRELOAD and is profiled through it, every allocation counted.
    void throughOwnAllocator_data() { allocatorRows(false); }
    void throughOwnAllocator()
    {
        QFETCH(QString, library);
        QFETCH(QString, package);
        REQUIRE_ALLOCATOR(library, package);
        QTemporaryDir dir;
        SessionConfig c = memoryLaunch({targetPath("alloc_truths")}, 1);
        c.environment.emplace_back("LD_PRELOAD", library.toStdString());
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QCOMPARE(at(byLeaf(r.profile, "alloc-samples"), "main"), int64_t(1000 + 100 + 4 + 10 + 60));
        QCOMPARE(at(byLeaf(r.profile, "alloc-samples"), "threadWork"), int64_t(500));
        QCOMPARE(at(byLeaf(r.profile, "inuse-space"), "main"), int64_t(333300 + 66630));
        QCOMPARE(r.summary.memory->unknownFrees, uint64_t(0));
    }

    // C++'s operators in every form (plain, array, nothrow, aligned, sized delete), with the C++ runtime's own (which
    // allocate through malloc: counted once, there) and under allocators that bring their own (tcmalloc's go around
    // malloc: counted in the agent's operators): every allocation counted exactly once, the leak held at the end.
    void cxxOperators_data() { allocatorRows(true); }
    void cxxOperators()
    {
        QFETCH(QString, library);
        QFETCH(QString, package);
        REQUIRE_ALLOCATOR(library, package);
        QTemporaryDir dir;
        SessionConfig c = memoryLaunch({targetPath("alloc_cxx")}, 1);
        if (!library.isEmpty())
            c.environment.emplace_back("LD_PRELOAD", library.toStdString());
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        // alloc_cxx's truth (it prints it): 300 x 1111 + 200 x 2223 + 50 x 4608 (4447 bytes aligned to 256) + 20 x
        // 3331 (leaked) + 40 x 5557.
        QCOMPARE(through(r.profile, "alloc-samples", "cxx_work"), int64_t(610));
        QCOMPARE(through(r.profile, "alloc-space", "cxx_work"), int64_t(1297200));
        QCOMPARE(through(r.profile, "inuse-objects", "cxx_work"), int64_t(20));
        QCOMPARE(through(r.profile, "inuse-space", "cxx_work"), int64_t(66620));
        QCOMPARE(r.summary.memory->unknownFrees, uint64_t(0));
    }

    // A library opened with RTLD_DEEPBIND binds its allocations around the agent: the summary says so.
    void deepBindNamed()
    {
        QTemporaryDir dir;
        const Recorded r =
            record(memoryLaunch({targetPath("alloc_faults"), QStringLiteral("deepbind")}, 1), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        const auto &problems = r.summary.memory->problems;
        QVERIFY(std::any_of(problems.begin(), problems.end(),
                            [](const std::string &p) { return p.find("RTLD_DEEPBIND") != std::string::npos; }));
    }
};

QTEST_GUILESS_MAIN(TestMemorySession)
#include "tst_memory_session.moc"
