// Memory profiling of a running program: `record --pid PID --memory` loads Emberline's agent into it (engine/inject)
// and points its modules' allocation functions at the agent's hooks. tests/targets/attach_rates allocates at known
// rates on threads while two more wait (a futex, nanosleep) and must not see the attach: after an exact attach the
// bytes through its two churners keep their 3:1 ratio, its keeper's blocks in use are a quarter of those it
// allocated since the attach; C++'s operators are counted once, whoever defines them; attach and detach five times in a
// row leave it running as before, its tables put back and no ring left mapped; a statically linked program is refused,
// unharmed.
#include "tests/engine/session/memory_test_support.h"

#include "engine/session/record_session.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;
using namespace emberline::test;

namespace attach_memory_test {

#define REQUIRE_ATTACH()                                                                                               \
    do {                                                                                                               \
        if (::geteuid() != 0) {                                                                                        \
            if (inCi())                                                                                                \
                QFAIL("loading the agent into a running program needs ptrace on a process that is not our child: "     \
                      "root, which CI has");                                                                           \
            QSKIP("loading the agent into a running program needs ptrace on a process that is not our child (root)");  \
        }                                                                                                              \
    } while (0)

// A session attached to `pid` for `seconds`, memory every `interval` bytes, CPU by perf events.
SessionConfig attachMemory(int pid, uint64_t interval, double seconds)
{
    SessionConfig c;
    c.pid = pid;
    c.frequency = 99;
    c.memory = true;
    c.allocInterval = interval;
    c.agentPath = EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so";
    c.flushPeriodNs = 1'000'000'000;
    c.durationNs = static_cast<int64_t>(seconds * 1e9);
    c.wallTime = false;
    return c;
}

// The target started and running all its threads (`level`: its heap level, for measuring what a session leaves).
bool startRates(QProcess &target, bool level = false, const char *program = "attach_rates")
{
    if (level) {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("ATTACH_RATES_LEVEL"), QStringLiteral("1"));
        target.setProcessEnvironment(environment);
    }
    target.start(targetPath(program), {QStringLiteral("120")});
    if (!target.waitForStarted() || !target.waitForReadyRead(10000))
        return false;
    return target.readLine().trimmed() == "ready";
}

// The target asked to end (its stdin closed); its status, and whether it said why it failed.
int endRates(QProcess &target, QByteArray &output)
{
    target.closeWriteChannel();
    if (!target.waitForFinished(20000)) {
        target.kill();
        target.waitForFinished();
        return -1;
    }
    output = target.readAllStandardOutput() + target.readAllStandardError();
    return target.exitStatus() == QProcess::NormalExit ? target.exitCode() : -1;
}

QByteArray mapsOf(qint64 pid)
{
    QFile maps(QStringLiteral("/proc/%1/maps").arg(pid));
    return maps.open(QIODevice::ReadOnly) ? maps.readAll() : QByteArray();
}

// The process's state letter (/proc/PID/stat: R, S, Z...), "gone" when it has none: a program that died during a
// cycle shows as Z (its parent has not reaped it) with an empty map.
QString stateOf(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return QStringLiteral("gone");
    const QByteArray text = stat.readAll();
    const int paren = text.lastIndexOf(')');
    return paren < 0 ? QStringLiteral("?") : QString::fromLatin1(text.mid(paren + 2, 1));
}

QString join(const std::vector<std::string> &lines)
{
    QStringList all;
    for (const std::string &line : lines)
        all << QString::fromStdString(line);
    return all.join(QLatin1Char('\n'));
}

// Which signals the program ignores and which it catches (/proc/PID/status's masks).
QByteArray signalActions(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return {};
    QByteArray masks;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("SigIgn:") || line.startsWith("SigCgt:"))
            masks += line + '\n';
    return masks;
}

// The process's resident anonymous memory in KiB (/proc/PID/smaps_rollup's Anonymous), -1 when unread.
qint64 anonymousKib(qint64 pid)
{
    QFile rollup(QStringLiteral("/proc/%1/smaps_rollup").arg(pid));
    if (!rollup.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : rollup.readAll().split('\n'))
        if (line.startsWith("Anonymous:"))
            return line.mid(10).simplified().split(' ').value(0).toLongLong();
    return -1;
}

} // namespace attach_memory_test
using namespace attach_memory_test;

class TestAttachMemory : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Every allocation from the attach on: the churners' bytes keep their ratio (1536 to 512 bytes a turn) within
    // 5%, and what the keeper keeps (one block in four) is in use at the end within 3 points. If this fails, an
    // attached session misses allocations (a module not redirected), counts blocks allocated before the attach as
    // its own, or loses frees. Also for a program built without position independence that owns malloc's canonical
    // address (a stub in its PLT, which the C library's own table holds too) and whose small blocks come from the C
    // library's strdup: the C library's table is redirected like any other, and no module is said to escape.
    void exactAfterTheAttach_data()
    {
        QTest::addColumn<QString>("program");
        QTest::newRow("position-independent") << QStringLiteral("attach_rates");
        QTest::newRow("malloc's canonical address in the program's PLT") << QStringLiteral("attach_rates_nopie");
    }
    void exactAfterTheAttach()
    {
        REQUIRE_ATTACH();
        QFETCH(QString, program);
        QProcess target;
        QVERIFY(startRates(target, false, qPrintable(program)));
        QTest::qWait(300); // blocks allocated before the attach, some kept
        QTemporaryDir dir;
        const Recorded r = record(attachMemory(static_cast<int>(target.processId()), 1, 2.0), dir.path());
        QVERIFY(r.summary.memory);
        const MemorySummary &m = *r.summary.memory;
        QVERIFY(m.attached);
        QVERIFY2(m.modulesRedirected >= 2, qPrintable(QString::number(m.modulesRedirected))); // the program, libc
        QVERIFY2(m.problems.empty(), qPrintable(join(m.problems)));
        QVERIFY(m.attachStoppedNs > 0);
        QCOMPARE(m.allocsDropped, uint64_t(0));
        const double large = static_cast<double>(through(r.profile, "alloc-space", "churn_large"));
        const double small = static_cast<double>(through(r.profile, "alloc-space", "churn_small"));
        QVERIFY2(small > 0 && std::abs(large / small - 3.0) < 0.15,
                 qPrintable(QStringLiteral("%1 / %2").arg(large).arg(small)));
        const double kept = static_cast<double>(through(r.profile, "inuse-space", "keep_one"));
        const double allocated = static_cast<double>(through(r.profile, "alloc-space", "keep_one"));
        QVERIFY2(allocated > 0 && std::abs(kept / allocated - 0.25) < 0.03,
                 qPrintable(QStringLiteral("%1 of %2").arg(kept).arg(allocated)));
        // Left running as it was: its waits untouched, no ring mapped, the agent's library loaded (idle).
        const QByteArray maps = mapsOf(target.processId());
        QVERIFY2(!maps.contains(".ring"), maps.constData());
        QVERIFY(maps.contains("libemberline_agent.so"));
        QByteArray output;
        QCOMPARE(endRates(target, output), 0);
        QVERIFY2(output.contains("kept "), output.constData());
    }

    // C++'s operators in every form, after an attach, with the C++ runtime's own (through malloc: counted there) and
    // under allocators that bring their own operators (tcmalloc's go around malloc: counted only if the programs'
    // tables for operator new and delete lead to the agent's). alloc_cxx's cxx_work makes 610 allocations of
    // 1,297,200 bytes a turn: whole turns keep that mean. If this fails, an attached session misses the operators of
    // an allocator of their own, or counts an allocation twice (in the operator and in its malloc).
    void cxxOperatorsAfterTheAttach_data() { allocatorRows(true); }
    void cxxOperatorsAfterTheAttach()
    {
        QFETCH(QString, library);
        QFETCH(QString, package);
        REQUIRE_ATTACH();
        REQUIRE_ALLOCATOR(library, package);
        QProcess target;
        if (!library.isEmpty()) {
            QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
            environment.insert(QStringLiteral("LD_PRELOAD"), library);
            target.setProcessEnvironment(environment);
        }
        target.start(targetPath("alloc_cxx"), {QStringLiteral("repeat")});
        QVERIFY(target.waitForStarted() && target.waitForReadyRead(10000));
        QCOMPARE(target.readLine().trimmed(), QByteArray("ready"));
        QTemporaryDir dir;
        const Recorded r = record(attachMemory(static_cast<int>(target.processId()), 1, 1.5), dir.path());
        QVERIFY(r.summary.memory && r.summary.memory->attached);
        QCOMPARE(r.summary.memory->allocsDropped, uint64_t(0));
        const double count = static_cast<double>(through(r.profile, "alloc-samples", "cxx_work"));
        const double bytes = static_cast<double>(through(r.profile, "alloc-space", "cxx_work"));
        QVERIFY2(count >= 610 * 20, qPrintable(QString::number(count)));
        QVERIFY2(std::abs(bytes / count / (1297200.0 / 610) - 1) < 0.03,
                 qPrintable(QStringLiteral("%1 bytes in %2").arg(bytes).arg(count)));
        target.closeWriteChannel();
        QVERIFY(target.waitForFinished(20000));
        QCOMPARE(target.exitStatus(), QProcess::NormalExit);
        QCOMPARE(target.exitCode(), 0);
    }

    // A plugin opened with RTLD_DEEPBIND before the attach, bound to an allocator of its own: its tables are left
    // alone (taking them would hand the blocks it allocated before the attach to the program's free: own_malloc
    // aborts on that), and the summary and every flush's health name it. If this fails, the attach takes a module's
    // entries that lead elsewhere than the hooks do, or says nothing of what escapes.
    // Opened lazily, its realloc is bound at its first call, after the attach: that entry is left alone too (the
    // module's allocation functions all or none), else its first realloc hands own_malloc's block to the program's.
    void deepBoundModuleLeftAlone_data()
    {
        QTest::addColumn<QString>("opened");
        QTest::newRow("bound now") << QStringLiteral("1");
        QTest::newRow("lazily, realloc first called after the attach") << QStringLiteral("lazy");
    }
    void deepBoundModuleLeftAlone()
    {
        REQUIRE_ATTACH();
        QFETCH(QString, opened);
        QProcess target;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("ATTACH_RATES_DEEPBIND"), opened);
        target.setProcessEnvironment(environment);
        target.start(targetPath("attach_rates"),
                     {QStringLiteral("120"), targetPath("libdeep_user.so"), QStringLiteral("0")});
        QVERIFY(target.waitForStarted() && target.waitForReadyRead(10000));
        QVERIFY(QTest::qWaitFor([&] { return mapsOf(target.processId()).contains("libdeep_user.so"); }, 5000));
        QTest::qWait(200); // its blocks from before the attach
        QTemporaryDir dir;
        const Recorded r = record(attachMemory(static_cast<int>(target.processId()), 65536, 1.0), dir.path());
        QVERIFY2(!target.waitForFinished(200), target.readAllStandardError().constData()); // own_malloc's abort
        QVERIFY(r.summary.memory && r.summary.memory->attached);
        const auto named = [](const std::vector<std::string> &lines) {
            return std::any_of(lines.begin(), lines.end(), [](const std::string &line) {
                return line.find("libdeep_user.so") != std::string::npos && line.find("escape") != std::string::npos;
            });
        };
        QVERIFY2(named(r.summary.memory->problems), qPrintable(join(r.summary.memory->problems)));
        QVERIFY(r.summary.health);
        QVERIFY2(named(r.summary.health->faults), qPrintable(join(r.summary.health->faults)));
        QVERIFY2(through(r.profile, "alloc-space", "late_alloc") == 0, "its allocations were taken by the hooks");
        QTest::qWait(300); // its frees of blocks from the attach's time, after the detach
        QByteArray output;
        QCOMPARE(endRates(target, output), 0);
    }

    // Five sampled attaches and detaches in a row on the same running program (every other one with the in-process
    // CPU sampler): each session sees its allocations, the agent loaded once and reused, the program's signals as
    // they were after each detach, the agent's tables and caches given back (the program's resident anonymous memory,
    // its heap kept level, within 1 MiB of what it was before the first attach, where the tracking table alone is
    // 2 MiB), and the program ends as it would have. If this fails, a detach leaves a hook, a ring or the agent's
    // memory behind, or a second attach cannot start the agent again.
    void attachFiveTimes()
    {
        REQUIRE_ATTACH();
        QProcess target;
        QVERIFY(startRates(target, true));
        const QByteArray signalsBefore = signalActions(target.processId());
        QTest::qWait(300); // the keeper's level reached
        const qint64 anonymousBefore = anonymousKib(target.processId());
        QVERIFY(anonymousBefore > 0);
        for (int cycle = 0; cycle < 5; ++cycle) {
            QTemporaryDir dir;
            SessionConfig c = attachMemory(static_cast<int>(target.processId()), 65536, 0.8);
            if (cycle % 2 == 1)
                c.sampler = "inprocess"; // its timers' signal taken and given back
            const Recorded r = record(c, dir.path());
            QVERIFY(r.summary.memory && r.summary.memory->attached);
            QVERIFY2(r.summary.memory->samples > 20,
                     qPrintable(QStringLiteral("cycle %1: %2 samples").arg(cycle).arg(r.summary.memory->samples)));
            QStringList leaves;
            for (const auto &[leaf, bytes] : byLeaf(r.profile, "alloc-space"))
                leaves << QStringLiteral("%1=%2").arg(QString::fromStdString(leaf)).arg(bytes);
            QVERIFY2(through(r.profile, "alloc-space", "churn_large") > 0,
                     qPrintable(QStringLiteral("cycle %1: %2").arg(cycle).arg(leaves.join(QLatin1String(", ")))));
            // The bytes the hooks counted are this session's: its samples' estimate of them agrees (an earlier
            // session's counts carried into this one's made them twice the estimate and more).
            const MemorySummary &m = *r.summary.memory;
            QVERIFY(m.allocatedExact);
            // Samples the agent could not report (a full ring, on a loaded machine) are missing from the estimate:
            // each weighed at most its size plus the interval.
            const double dropped = double(m.bytesDropped) + double(m.allocsDropped) * 65536.0;
            const double gap = m.allocatedBytes - m.sampledAllocatedBytes;
            QVERIFY2(gap < 4 * m.sampledAllocatedBytesMargin + dropped && -gap < 4 * m.sampledAllocatedBytesMargin,
                     qPrintable(QStringLiteral("cycle %1: %2 bytes counted, the samples estimate %3 +- %4 (%5 samples "
                                               "dropped, %6 bytes)")
                                    .arg(cycle)
                                    .arg(m.allocatedBytes, 0, 'f', 0)
                                    .arg(m.sampledAllocatedBytes, 0, 'f', 0)
                                    .arg(m.sampledAllocatedBytesMargin, 0, 'f', 0)
                                    .arg(m.allocsDropped)
                                    .arg(m.bytesDropped)));
            const QByteArray maps = mapsOf(target.processId());
            QVERIFY2(!maps.contains(".ring"), maps.constData());
            QVERIFY2(maps.contains("libemberline_agent.so"),
                     qPrintable(QStringLiteral("cycle %1, the program's state %2: %3")
                                    .arg(cycle)
                                    .arg(stateOf(target.processId()), QString::fromUtf8(maps))));
            QCOMPARE(signalActions(target.processId()), signalsBefore);
            const qint64 leftKib = anonymousKib(target.processId()) - anonymousBefore;
            qInfo("cycle %d: resident anonymous memory %+lld KiB since before the first attach", cycle, leftKib);
            QVERIFY2(leftKib < 1024, qPrintable(QStringLiteral("cycle %1: %2 KiB more resident anonymous memory than "
                                                               "before the first attach")
                                                    .arg(cycle)
                                                    .arg(leftKib)));
        }
        QByteArray output;
        QCOMPARE(endRates(target, output), 0);
    }

    // Emberline upgraded between two attaches: the agent's file replaced by another build at the same path while the
    // program holds the first one. The second attach loads a copy of the new file beside the old (dlopen of the path
    // would hand back the old build), the old copy is not taken for an allocator of its own, the copy's frames are
    // the agent's (every walk checked against the session's unwind), and the detach finds the copy: no ring is left
    // mapped. If this fails, a program attached once cannot be attached again after an upgrade
    // ("not in the map ... after dlopen returned"), or its second session's ring and hooks outlive the session.
    void agentReplacedBetweenAttaches()
    {
        REQUIRE_ATTACH();
        QTemporaryDir agentDir;
        const QString agent = agentDir.filePath(QStringLiteral("libemberline_agent.so"));
        QFile built(QStringLiteral(EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so"));
        QVERIFY(built.open(QIODevice::ReadOnly));
        const QByteArray bytes = built.readAll();
        const auto install = [&](const QByteArray &contents) {
            QFile::remove(agent); // a new file (inode), as a package upgrade makes
            QFile file(agent);
            return file.open(QIODevice::WriteOnly) && file.write(contents) == contents.size();
        };
        QVERIFY(install(bytes));
        QVERIFY(QFile::link(QStringLiteral(EMBERLINE_BINARY_DIR "/lib/emberline/emberline-inject"),
                            agentDir.filePath(QStringLiteral("emberline-inject")))); // found beside the agent
        QProcess target;
        QVERIFY(startRates(target));
        for (int session = 0; session < 2; ++session) {
            if (session == 1) // another build: other contents (bytes after the ELF file's end change nothing else)
                QVERIFY(
                    install(bytes + QByteArray(64, '\0') + QByteArray::number(QDateTime::currentMSecsSinceEpoch())));
            QTemporaryDir dir;
            SessionConfig c = attachMemory(static_cast<int>(target.processId()), 65536, 0.8);
            c.agentPath = agent.toStdString();
            c.walkCheckEvery = 1; // every walk checked against the session's unwind of its copy
            const Recorded r = record(c, dir.path());
            QVERIFY2(r.summary.saveErrors.empty(), r.summary.saveErrors.empty() ? "" : r.summary.saveErrors[0].c_str());
            QVERIFY2(r.summary.memory && r.summary.memory->attached,
                     qPrintable(QStringLiteral("session %1").arg(session)));
            QVERIFY2(r.summary.memory->problems.empty(), qPrintable(join(r.summary.memory->problems)));
            QVERIFY2(through(r.profile, "alloc-space", "churn_large") > 0,
                     qPrintable(QStringLiteral("session %1").arg(session)));
            const QByteArray maps = mapsOf(target.processId());
            QVERIFY2(!maps.contains(".ring"), maps.constData());
            if (session == 1)
                QVERIFY2(maps.contains("(deleted)") && maps.contains("emberline-inject/libemberline_agent-"),
                         maps.constData());
            // The copy's frames are the agent's: left out of the session's unwind before it is compared with the walk.
            QVERIFY(r.summary.agentStacks && r.summary.agentStacks->checks > 0);
            QVERIFY2(r.summary.agentStacks->mismatches == 0,
                     qPrintable(QStringLiteral("session %1: %2 of %3 checked stacks differ")
                                    .arg(session)
                                    .arg(r.summary.agentStacks->mismatches)
                                    .arg(r.summary.agentStacks->checks)));
        }
        QByteArray output;
        QCOMPARE(endRates(target, output), 0);
    }

    // A library the program opens after the attach: its own table is found at the next sample after the dlopen, and
    // its allocations are seen from then on. The heavy one brings Qt's widgets with it: for milliseconds its modules
    // are listed and not yet relocated, while the other threads' samples look for new modules; a table read then
    // (its entries not yet bound) was taken for one bound elsewhere and left alone for good. It brings C++'s runtime
    // into a C program too: its operators are no allocator's of their own (no problem is reported). If this fails, an
    // attached session misses every module loaded after it began (plugins, Python extensions imported later), or
    // those it found in the middle of their loading.
    void moduleLoadedAfterTheAttach_data()
    {
        QTest::addColumn<QString>("library");
        QTest::newRow("small") << QStringLiteral("libattach_late.so");
        QTest::newRow("with Qt's widgets") << QStringLiteral("libattach_late_heavy.so");
    }
    void moduleLoadedAfterTheAttach()
    {
        REQUIRE_ATTACH();
        QFETCH(QString, library);
        QProcess target;
        target.start(targetPath("attach_rates"),
                     {QStringLiteral("120"), targetPath(library.toUtf8().constData()), QStringLiteral("1.0")});
        QVERIFY(target.waitForStarted() && target.waitForReadyRead(10000));
        QVERIFY(!mapsOf(target.processId()).contains(library.toUtf8()));
        QTemporaryDir dir;
        const Recorded r = record(attachMemory(static_cast<int>(target.processId()), 65536, 2.5), dir.path());
        QVERIFY(mapsOf(target.processId()).contains(library.toUtf8()));
        QVERIFY2(through(r.profile, "alloc-space", "late_alloc") > 0,
                 qPrintable(QString::number(through(r.profile, "alloc-space", "churn_large"))));
        QVERIFY(r.summary.memory);
        QVERIFY2(r.summary.memory->problems.empty(), qPrintable(join(r.summary.memory->problems)));
        QByteArray output;
        QCOMPARE(endRates(target, output), 0);
    }

    // A running CPython (Debian's, or the first python3 on the PATH): every fourth 100 kB block it allocates is kept,
    // the others dropped at once; after an exact attach, what is in use at the end is a quarter of what was
    // allocated since the attach (within 3 points), and the interpreter runs on. If this fails, the agent cannot be
    // loaded into the most common program there is, or counts CPython's older heap as allocated since.
    void cpythonAfterTheAttach()
    {
        REQUIRE_ATTACH();
        const QString python = QFileInfo::exists(QStringLiteral("/usr/bin/python3"))
                                   ? QStringLiteral("/usr/bin/python3")
                                   : QStringLiteral("python3");
        QProcess target;
        target.start(python, {QStringLiteral("-c"), QStringLiteral("import sys, time\n"
                                                                   "kept = [bytearray(100000) for _ in range(50)]\n"
                                                                   "print('ready', flush=True)\n"
                                                                   "while sys.stdin.read(0) == '':\n"
                                                                   "    for i in range(4):\n"
                                                                   "        b = bytearray(100000)\n"
                                                                   "        if i == 0: kept.append(b)\n"
                                                                   "    time.sleep(0.002)\n"
                                                                   "    if len(kept) > 5000: break\n")});
        QVERIFY(target.waitForStarted() && target.waitForReadyRead(10000));
        QTemporaryDir dir;
        const Recorded r = record(attachMemory(static_cast<int>(target.processId()), 1, 1.5), dir.path());
        QVERIFY(r.summary.memory && r.summary.memory->attached);
        const double inUse = static_cast<double>(total(r.profile, "inuse-space"));
        const double allocated = static_cast<double>(total(r.profile, "alloc-space"));
        QVERIFY2(allocated > 100 * 100000.0, qPrintable(QString::number(allocated)));
        QVERIFY2(std::abs(inUse / allocated - 0.25) < 0.03,
                 qPrintable(QStringLiteral("%1 of %2").arg(inUse).arg(allocated)));
        QCOMPARE(target.state(), QProcess::Running);
        target.kill();
        target.waitForFinished();
    }

    // A sampled attach: the live heap calibrated, as a launched program's is, to the agent's exact counts, which
    // count only the blocks allocated since the attach. attach_heap keeps 64 MiB before the attach; after it, 32 MiB
    // more, and it frees half of the older blocks: the live heap since the attach is 32 MiB and its 64 KiB list. If
    // this fails, the frees of older blocks count against the newer ones (the live heap far under 32 MiB), or the
    // attached heap is not calibrated (its 95% range is the sampling's: about a quarter of it at 512 KiB).
    void sampledHeapCalibratedAfterTheAttach()
    {
        REQUIRE_ATTACH();
        QProcess target;
        target.start(targetPath("attach_heap"), {QStringLiteral("120"), QStringLiteral("64"), QStringLiteral("32")});
        QVERIFY(target.waitForStarted() && target.waitForReadyRead(10000));
        QCOMPARE(target.readLine().trimmed(), QByteArray("ready"));
        QTemporaryDir dir;
        const Recorded r =
            record(attachMemory(static_cast<int>(target.processId()), uint64_t(512) * 1024, 2.0), dir.path());
        QVERIFY(r.summary.memory);
        const MemorySummary &m = *r.summary.memory;
        QVERIFY(m.attached);
        const double truth = 32.0 * 1024 * 1024 + 8192 * sizeof(void *);
        // Still running at the session's end: what it holds then is what the summary says it held at its end.
        const QString said =
            QStringLiteral("held %1 +- %2 of %3").arg(m.leakedBytes).arg(m.leakedBytesMargin).arg(truth);
        QVERIFY2(std::abs(m.leakedBytes - truth) < 0.02 * truth, qPrintable(said));
        QVERIFY2(m.leakedBytesMargin < 0.02 * truth, qPrintable(said));
        // The samples' sites: what was kept since the attach, none of what came before it.
        const double grown = static_cast<double>(through(r.profile, "inuse-space", "grow_after"));
        QVERIFY2(std::abs(grown - 32.0 * 1024 * 1024) < 0.05 * 32 * 1024 * 1024, qPrintable(QString::number(grown)));
        QCOMPARE(through(r.profile, "inuse-space", "keep_before"), int64_t(0));
        QCOMPARE(target.state(), QProcess::Running);
        target.closeWriteChannel();
        QVERIFY(target.waitForFinished(20000));
        const QByteArray output = target.readAllStandardOutput();
        QVERIFY2(output.contains("done") && output.contains("kept 8192 blocks"), output.constData());
    }

    // The profiler killed mid-session (SIGKILL: nothing of it runs again): the agent finds the session gone at its
    // next sample and lets itself go (tables put back, the ring and the unwind tables no longer mapped, the
    // session's folder removed), and a new session attaches again. If this fails, a crashed profiler leaves the
    // program's allocations going through a dead agent, or its memory mapped for ever.
    void profilerKilled()
    {
        REQUIRE_ATTACH();
        QProcess target;
        QVERIFY(startRates(target));
        QTemporaryDir dir;
        QProcess recorder;
        recorder.setProcessChannelMode(QProcess::MergedChannels);
        recorder.start(QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline"),
                       {QStringLiteral("record"), QStringLiteral("--pid"), QString::number(target.processId()),
                        QStringLiteral("--memory"), QStringLiteral("--alloc-interval"), QStringLiteral("65536"),
                        QStringLiteral("--output"), dir.path()});
        QVERIFY(recorder.waitForStarted());
        QVERIFY(QTest::qWaitFor([&] { return mapsOf(target.processId()).contains(".ring"); }, 10000));
        QTest::qWait(300);
        recorder.kill();
        QVERIFY(recorder.waitForFinished());
        QVERIFY2(QTest::qWaitFor(
                     [&] {
                         const QByteArray maps = mapsOf(target.processId());
                         return !maps.contains(".ring") && !maps.contains("unwind.tables");
                     },
                     5000),
                 mapsOf(target.processId()).constData());
        const Recorded again = record(attachMemory(static_cast<int>(target.processId()), 65536, 0.5), dir.path());
        QVERIFY(again.summary.memory && again.summary.memory->attached && again.summary.memory->samples > 0);
        QByteArray output;
        QCOMPARE(endRates(target, output), 0);
    }

    // A statically linked program has no dynamic loader to load the agent: the session is refused with the reason,
    // and the program runs on. If this fails, an attach harms a program it cannot serve, or says nothing useful.
    void staticProgramRefused()
    {
        REQUIRE_ATTACH();
        QProcess target;
        target.start(targetPath("hot_loop_static"), {QStringLiteral("20")});
        QVERIFY(target.waitForStarted());
        QTest::qWait(200);
        QTemporaryDir dir;
        SessionConfig c = attachMemory(static_cast<int>(target.processId()), 65536, 1.0);
        c.outputDirectory = dir.path().toStdString();
        RecordSession session(c);
        std::atomic<bool> stop{false};
        auto result = session.run(stop, [](const std::shared_ptr<const Flush> &) {});
        QVERIFY(!result.ok());
        QVERIFY2(QString::fromStdString(result.error().message).contains(QStringLiteral("static")),
                 result.error().message.c_str());
        QCOMPARE(target.state(), QProcess::Running);
        target.kill();
        target.waitForFinished();
    }
};

QTEST_MAIN(TestAttachMemory)
#include "tst_attach_memory.moc"
