// The built agent (libemberline_agent.so) through its real hooks: every allocation function keeps the program's errno
// in sampled, unsampled and exact mode while the system calls of the agent's slow paths fail (tests/targets/
// agent_errno under a seccomp filter), with the session's reader reading the ring as a session does; sampled blocks
// marked through every allocation function, and freed by a plugin opened with RTLD_DEEPBIND; and the agent imports
// nothing beyond the C library, libm and the dynamic linker.
#include "engine/memory/ring_reader.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <set>
#include <utility>

#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;

namespace agent_hooks_test {

QString agentPath()
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so");
}

class CountingSink : public MemoryRecordSink {
public:
    void onAllocation(const AgentAllocation &) override { ++allocations; }
    void onFree(uint64_t, uint32_t, uint32_t, uint64_t, uint64_t) override { ++frees; }
    uint64_t allocations = 0;
    uint64_t frees = 0;
};

// Every sampled block the session was told of and not yet of its free, by image and address.
class LiveSink : public MemoryRecordSink {
public:
    void onAllocation(const AgentAllocation &a) override
    {
        ++allocations;
        live.insert({a.image, a.address});
    }
    void onFree(uint64_t image, uint32_t, uint32_t, uint64_t, uint64_t address) override
    {
        if (live.erase({image, address}) == 0)
            ++unknownFrees;
    }
    uint64_t allocations = 0;
    uint64_t unknownFrees = 0;
    std::set<std::pair<uint64_t, uint64_t>> live;
};

QString targetsDir()
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/");
}

// Starts a program of tests/targets with the agent preloaded at `interval`, its rings of `ringBytes` in `dir`, and
// `more` in its environment.
void startWithAgent(QProcess &program, const QTemporaryDir &dir, const QString &target, const QStringList &args,
                    const QString &interval, uint64_t ringBytes, const QProcessEnvironment &more = {})
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(more);
    env.insert(QStringLiteral("LD_PRELOAD"), agentPath());
    env.insert(QString::fromLatin1(agent::kEnvDirectory), dir.path());
    env.insert(QString::fromLatin1(agent::kEnvAllocInterval), interval);
    env.insert(QString::fromLatin1(agent::kEnvRingBytes), QString::number(ringBytes));
    program.setProcessEnvironment(env);
    program.setProcessChannelMode(QProcess::MergedChannels);
    program.start(targetsDir() + target, args);
}

// tests/targets/agent_errno, its system calls failing as `failing` says.
void startErrnoProgram(QProcess &program, const QTemporaryDir &dir, const QString &failing, const QString &interval,
                       uint64_t ringBytes)
{
    startWithAgent(program, dir, QStringLiteral("agent_errno"), {failing}, interval, ringBytes);
}

// Reads the program's rings as a session does until it has ended, then once more; returns what it printed.
QString readToTheEnd(QProcess &program, RingReader &rings, MemoryRecordSink &sink)
{
    while (!program.waitForFinished(1)) {
        rings.poll({.memory = &sink});
        usleep(500);
    }
    rings.poll({.memory = &sink});
    return QString::fromUtf8(program.readAll());
}

// A program of tests/targets run to its end with the agent preloaded at `interval`, its rings (64 MiB: room for every
// sample of the run, however far the reader falls behind) read into `sink` as a session reads them.
struct AgentRun {
    bool started = false;
    bool exitedWell = false; // a normal exit with status 0
    QString output;          // what it printed
    RingCounters counters;
};
AgentRun runWithAgent(const QString &target, const QStringList &args, const QString &interval, MemoryRecordSink &sink,
                      const QProcessEnvironment &more = {})
{
    AgentRun run;
    QTemporaryDir dir;
    if (!dir.isValid())
        return run;
    RingReader rings(dir.path().toStdString());
    QProcess program;
    startWithAgent(program, dir, target, args, interval, uint64_t(64) << 20, more);
    if (!(run.started = program.waitForStarted()))
        return run;
    run.output = readToTheEnd(program, rings, sink);
    run.exitedWell = program.exitStatus() == QProcess::NormalExit && program.exitCode() == 0;
    run.counters = rings.counters();
    return run;
}

} // namespace agent_hooks_test
using namespace agent_hooks_test;

class TestAgentHooks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void errnoKept_data()
    {
        QTest::addColumn<QString>("failing");
        QTest::addColumn<QString>("interval");
        for (const char *failing : {"madvise", "copy"}) {
            QTest::addRow("%s, sampled", failing) << QString::fromLatin1(failing) << QStringLiteral("256");
            QTest::addRow("%s, unsampled", failing) << QString::fromLatin1(failing) << QStringLiteral("1000000000000");
            QTest::addRow("%s, exact", failing) << QString::fromLatin1(failing) << QStringLiteral("1");
        }
    }

    // Every hook, on the main thread's stack and on a coroutine's heap stack, with the slow paths' system calls
    // failing: errno is what the program set. The records are read meanwhile (exact mode waits for the reader), and
    // the agent saw the failures it was put through (so the slow paths did run).
    void errnoKept()
    {
        QFETCH(QString, failing);
        QFETCH(QString, interval);
        CountingSink sink;
        // Every sample of the run has room: each call must meet its slow path.
        const AgentRun run = runWithAgent(QStringLiteral("agent_errno"), {failing}, interval, sink);
        QVERIFY(run.started);
        const QString &output = run.output;
        QVERIFY2(run.exitedWell, qPrintable(output));
        QVERIFY2(output.startsWith(QLatin1String("kept ")), qPrintable(output));
        QVERIFY(output.mid(5).trimmed().toInt() > 1000);
        const RingCounters &counters = run.counters;
        QCOMPARE(counters.rings, uint64_t(1));
        if (interval != QLatin1String("1000000000000"))
            QVERIFY2(sink.allocations > 0, "the agent recorded nothing: the slow paths did not run");
        if (failing == QLatin1String("copy") && interval != QLatin1String("1000000000000"))
            QVERIFY2((counters.problems & agent::ProblemStackCopy) != 0,
                     "the coroutine's stack copy did not go through the failing process_vm_readv");
        if (failing == QLatin1String("madvise") && interval == QLatin1String("256"))
            QVERIFY2(counters.allocsDropped > 0, "no record needed pages that the failing madvise refused");
    }

    // Exact mode in a 64 KiB ring whose reader stalls for 300 ms: the program waits for room (its sleeps failing),
    // the session's heartbeat goes stale and the agent asks whether the session still runs (its open and kill
    // failing), and every hook still keeps errno.
    void errnoKeptWhileWaiting()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        RingReader rings(dir.path().toStdString());
        CountingSink sink;
        QProcess program;
        startErrnoProgram(program, dir, QStringLiteral("copy"), QStringLiteral("1"), 65536);
        QVERIFY(program.waitForStarted());
        // The first visit (the ring is found, the heartbeat starts), then a stall while the program fills the ring.
        QElapsedTimer found;
        found.start();
        while (rings.counters().rings == 0 && found.elapsed() < 5000) {
            rings.poll({.memory = &sink});
            usleep(200);
        }
        QCOMPARE(rings.counters().rings, uint64_t(1));
        usleep(300'000);
        const QString output = readToTheEnd(program, rings, sink);
        QVERIFY2(program.exitStatus() == QProcess::NormalExit && program.exitCode() == 0, qPrintable(output));
        QVERIFY2(output.startsWith(QLatin1String("kept ")), qPrintable(output));
        const RingCounters counters = rings.counters();
        QVERIFY2(counters.waitNs > 100'000'000, qPrintable(QString::number(counters.waitNs)));
        QVERIFY(sink.allocations > 1000);
    }

    void marksWholeThroughEveryFunction_data()
    {
        QTest::addColumn<QString>("interval");
        QTest::addColumn<bool>("marks");
        QTest::addRow("sampled") << QStringLiteral("4096") << true;
        QTest::addRow("unsampled") << QStringLiteral("1000000000000") << false;
        QTest::addRow("exact") << QStringLiteral("1") << false;
    }

    // Sampled blocks marked (agent_track.h) through every allocation function, realloc's every case, every alignment,
    // malloc_usable_size, and a forked child that frees its parent's blocks: the program's bytes, alignments and usable
    // sizes are as asked, every free gives back the allocator's own block (the C library aborts otherwise), and the
    // session sees the free of every sampled block, never one of an address it was not told of. Exact mode marks
    // nothing.
    void marksWholeThroughEveryFunction()
    {
        QFETCH(QString, interval);
        QFETCH(bool, marks);
        LiveSink sink;
        const AgentRun run = runWithAgent(QStringLiteral("agent_marks"), {}, interval, sink);
        QVERIFY(run.started);
        const QString &output = run.output;
        QVERIFY2(run.exitedWell, qPrintable(output));
        const QStringList words = output.trimmed().split(QLatin1Char(' '));
        QVERIFY2(words.size() == 4 && words[0] == QLatin1String("ok"), qPrintable(output));
        const qulonglong marked = words[3].toULongLong();
        QCOMPARE(run.counters.rings, uint64_t(2)); // the program and its forked child
        if (marks) {
            QVERIFY2(marked > 100, qPrintable(output));
            QVERIFY2(sink.allocations > 1000, qPrintable(QString::number(sink.allocations)));
            QCOMPARE(sink.unknownFrees, uint64_t(0));
            // Left live: only what the C library keeps for good (stdout's buffer, the dynamic linker's blocks).
            QVERIFY2(sink.live.size() < 20, qPrintable(QString::number(sink.live.size())));
        } else if (interval == QLatin1String("1")) {
            QCOMPARE(marked, qulonglong(0));
            // Exact mode records every free: the child's of its parent's 200 blocks are frees of addresses its own
            // ring never allocated.
            QVERIFY2(sink.unknownFrees <= 200, qPrintable(QString::number(sink.unknownFrees)));
        } else {
            // A thread's first allocation goes to the slow path, which marks it before the thread's first sampling
            // point is drawn: at most one block of each process image, none of them sampled.
            QVERIFY2(marked <= 2, qPrintable(output));
            QCOMPARE(sink.allocations, uint64_t(0));
        }
    }

    void freedAroundTheGlobalScope_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("plugin");
        QTest::addColumn<bool>("searchHere");
        // dlopen made by the agent itself: a path; a name the program searches for without a search path of its own
        QTest::addRow("path") << QStringLiteral("deep_frees") << targetsDir() + "libdeep_frees_plugin.so" << false;
        QTest::addRow("searched") << QStringLiteral("deep_frees") << QStringLiteral("libdeep_frees_plugin.so") << true;
        // dlopen left to its caller (its RUNPATH finds the plugin): the tables taken over at a later slow path
        QTest::addRow("runpath") << QStringLiteral("deep_frees_runpath") << QStringLiteral("libdeep_frees_plugin.so")
                                 << false;
        // no plugin: the C library's functions looked up in its handle (the agent's dlsym gives the hooks)
        QTest::addRow("libc handle") << QStringLiteral("deep_frees") << QStringLiteral("--libc") << false;
    }

    // A plugin opened with RTLD_DEEPBIND binds malloc, realloc, free and malloc_usable_size to the C library around the
    // preloaded hooks, and so does a look-up in the C library's handle. The program's blocks measured, grown and freed
    // that way (sampled ones marked) must read right and come back through the hooks (else the C library aborts on a
    // mark, or the session misses their frees), and the allocations made that way are profiled: most of the 1,000
    // blocks of 4 KiB kept are sampled at a 4 KiB interval and live at the end.
    void freedAroundTheGlobalScope()
    {
        QFETCH(QString, target);
        QFETCH(QString, plugin);
        QFETCH(bool, searchHere);
        LiveSink sink;
        QProcessEnvironment more;
        if (searchHere)
            more.insert(QStringLiteral("LD_LIBRARY_PATH"), targetsDir());
        const AgentRun run = runWithAgent(target, {plugin}, QStringLiteral("4096"), sink, more);
        QVERIFY(run.started);
        QVERIFY2(run.exitedWell, qPrintable(run.output));
        QCOMPARE(run.output.trimmed(), QStringLiteral("ok 2000"));
        QVERIFY2(sink.allocations > 500, qPrintable(QString::number(sink.allocations)));
        QCOMPARE(sink.unknownFrees, uint64_t(0));
        QVERIFY2(sink.live.size() > 400 && sink.live.size() < 1020, qPrintable(QString::number(sink.live.size())));
        QCOMPARE((run.counters.problems & agent::ProblemDeepBind) != 0, plugin != QLatin1String("--libc"));
    }

    // The agent runs inside any program: it may need the C library, libm and the dynamic linker, nothing else (no C++
    // runtime, no Qt), and every symbol it imports is versioned by them (or is one of the weak ones every shared
    // object refers to).
    void importsOnlyLibcAndLibm()
    {
        QProcess readelf;
        readelf.start(QStringLiteral("readelf"),
                      {QStringLiteral("-W"), QStringLiteral("--dynamic"), QStringLiteral("--dyn-syms"), agentPath()});
        QVERIFY(readelf.waitForFinished(30000));
        QCOMPARE(readelf.exitCode(), 0);
        const QString text = QString::fromUtf8(readelf.readAllStandardOutput());
        static const QRegularExpression needed(QStringLiteral("\\(NEEDED\\)\\s+Shared library: \\[([^\\]]+)\\]"));
        QStringList libraries;
        for (const QRegularExpressionMatch &m : needed.globalMatch(text))
            libraries << m.captured(1);
        QVERIFY(!libraries.isEmpty());
        for (const QString &library : libraries)
            QVERIFY2(library == QLatin1String("libc.so.6") || library == QLatin1String("libm.so.6") ||
                         library.startsWith(QLatin1String("ld-linux")),
                     qPrintable(library));
        // "NUM: VALUE SIZE TYPE BIND VIS UND NAME@VERSION (N)"
        static const QRegularExpression undefined(
            QStringLiteral(
                "^[ \\t]*\\d+:[ \\t]+0+[ \\t]+\\d+[ \\t]+\\S+[ \\t]+(GLOBAL|WEAK)[ \\t]+\\S+[ \\t]+UND[ \\t]+(\\S+)"),
            QRegularExpression::MultilineOption);
        int imports = 0;
        for (const QRegularExpressionMatch &m : undefined.globalMatch(text)) {
            const QString bind = m.captured(1);
            const QString name = m.captured(2);
            ++imports;
            if (bind == QLatin1String("WEAK") && !name.contains(QLatin1Char('@')))
                continue; // __gmon_start__, _ITM_*, __cxa_finalize's kind: resolved if present
            QVERIFY2(name.contains(QLatin1String("@GLIBC_")), qPrintable(name));
        }
        QVERIFY(imports > 20); // the table was read (malloc's next definitions are looked up, not imported)
    }
};

QTEST_GUILESS_MAIN(TestAgentHooks)
#include "tst_agent_hooks.moc"
