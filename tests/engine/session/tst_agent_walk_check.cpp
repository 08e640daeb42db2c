// The agent's own stack walk on real programs, checked against the session's unwind of the same samples: with
// SessionConfig::walkCheckEvery every sample of a thread (or every few) is both walked in the program and copied, and
// the session compares its own unwind of the copy with the walk (AgentStacksSummary::checks, mismatches). CPython in
// exact mode (millions of allocations through a deep C eval loop; its Python chains too, where a thread's last chain
// was given again from the words its walk kept), g++ (cc1plus: a large C++ program without frame
// pointers, exec'd by the driver) and the in-process CPU sampler's handler on CPython. Fails when more than 0.1% of
// the checked stacks differ, or when the walk was not taken.

#include "tests/engine/session/memory_test_support.h"
#include "tests/engine/session/session_test_support.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace emberline::engine;
using namespace emberline::test;

class TestAgentWalkCheck : public QObject {
    Q_OBJECT

private:
    static QString python()
    {
        if (QFileInfo::exists(QStringLiteral("/usr/bin/python3")))
            return QStringLiteral("/usr/bin/python3");
        return {};
    }

    // The checks held: enough of them, at most 0.1% differing, the walk taken for at least `minTakenPercent` of the
    // samples (the rest copied: the first samples of a process image come before its tables).
    static void verifyChecks(const SessionSummary &s, uint64_t minChecks, const char *what, uint64_t minTakenPercent)
    {
        QVERIFY(s.agentStacks);
        const AgentStacksSummary &a = *s.agentStacks;
        QString copied;
        for (const auto &[why, n] : a.copiedBecause)
            copied += QStringLiteral("%1: %2; ").arg(QString::fromStdString(why)).arg(n);
        qInfo("%s: %llu walked, %llu checked (%llu differ, %llu walks longer than the copy's unwind), %llu copied (%s)",
              what, static_cast<unsigned long long>(a.walked), static_cast<unsigned long long>(a.checks),
              static_cast<unsigned long long>(a.mismatches), static_cast<unsigned long long>(a.walkLonger),
              static_cast<unsigned long long>(a.copied), qPrintable(copied));
        QVERIFY2(a.tableProblem.empty(), a.tableProblem.c_str());
        QVERIFY(a.tablesBuilt > 0);
        QVERIFY2(a.checks >= minChecks, qPrintable(QString::number(a.checks)));
        QVERIFY2(a.mismatches * 1000 <= a.checks,
                 qPrintable(QStringLiteral("%1 of %2").arg(a.mismatches).arg(a.checks)));
        QCOMPARE(a.unknownRefs, uint64_t(0));
        const uint64_t taken = a.walked + a.checks;
        QVERIFY2(taken * 100 >= (taken + a.copied) * minTakenPercent,
                 qPrintable(QStringLiteral("%1 of %2").arg(taken).arg(taken + a.copied)));
    }

private Q_SLOTS: // NOLINT(readability-redundant-access-specifiers): Q_SLOTS marks the section below for moc
    void init() { REQUIRE_PERF_EVENTS(); }

    // CPython decoding and encoding JSON, every allocation recorded, one in seven of each thread's walks checked.
    void cpythonExact()
    {
        if (python().isEmpty()) {
            if (inCi())
                QFAIL("python3 is missing (installer/install-deps.sh --test installs it)");
            QSKIP("python3 is not installed");
        }
        QTemporaryDir dir;
        SessionConfig c = memoryLaunch(
            {python(), QStringLiteral(EMBERLINE_TEST_DATA "/../targets/json_workload.py"), QStringLiteral("4")}, 1);
        c.environment.emplace_back("PYTHONMALLOC", "malloc");
        c.walkCheckEvery = 7;
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.memory);
        QCOMPARE(r.summary.memory->allocsDropped, uint64_t(0));
        QCOMPARE(r.summary.memory->unknownFrees, uint64_t(0));
        verifyChecks(r.summary, 10000, "CPython, exact", 90);
        // Most stacks after the first few are written as a reference to one written before.
        QVERIFY(r.summary.agentStacks->stackRefs * 2 > r.summary.agentStacks->walked);
        // Most walks start where one of the thread's earlier walks started, and take its innermost frames from that
        // walk's leaf: the checked ones, leaves or not, agree with the session's unwind (verifyChecks above).
        QVERIFY2(
            r.summary.agentStacks->leafWalks * 2 > r.summary.agentStacks->walked,
            qPrintable(
                QStringLiteral("%1 of %2").arg(r.summary.agentStacks->leafWalks).arg(r.summary.agentStacks->walked)));
        // Most Python chains are the thread's last one again (its instructions moved at most), given from the words its
        // walk kept: one in seven of those walked anew too, and compared.
        const AgentStacksSummary &a = *r.summary.agentStacks;
        qInfo("Python chains given again: %llu checked, %llu differ",
              static_cast<unsigned long long>(a.pythonRepeatChecks),
              static_cast<unsigned long long>(a.pythonRepeatDiffers));
        QVERIFY2(a.pythonRepeatChecks >= 10000, qPrintable(QString::number(a.pythonRepeatChecks)));
        QVERIFY2(a.pythonRepeatDiffers * 1000 <= a.pythonRepeatChecks,
                 qPrintable(QStringLiteral("%1 of %2").arg(a.pythonRepeatDiffers).arg(a.pythonRepeatChecks)));
        // The health view says it too.
        QVERIFY(r.summary.health);
        const auto &notes = r.summary.health->notes;
        QVERIFY(std::any_of(notes.begin(), notes.end(), [](const std::string &note) {
            return note.find("Python chains given again") != std::string::npos &&
                   note.find(" 0 differ") != std::string::npos;
        }));
    }

    // g++ compiling a file of the standard library's heavy headers: cc1plus (no frame pointers, a large table) exec'd
    // by the driver, sampled at a short interval, every walk checked.
    void compilerSampled()
    {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/g++"))) {
            if (inCi())
                QFAIL("g++ is missing");
            QSKIP("g++ is not installed");
        }
        QTemporaryDir dir;
        SessionConfig c = memoryLaunch({QStringLiteral("/usr/bin/g++"), QStringLiteral("-O1"), QStringLiteral("-c"),
                                        QStringLiteral(EMBERLINE_TEST_DATA "/../targets/cxx_workload.cpp"),
                                        QStringLiteral("-o"), dir.filePath(QStringLiteral("out.o"))},
                                       16384);
        c.walkCheckEvery = 1;
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        // cc1plus's table (half a million rows) takes some 300 ms to build, a fifth of this compile: its first
        // samples are copied.
        verifyChecks(r.summary, 300, "g++, sampled", 70);
    }

    // The in-process sampler's handler walks the interrupted stack: CPython in a deep recursion of Python calls,
    // every sample checked.
    void cpuHandlerOnCpython()
    {
        if (python().isEmpty()) {
            if (inCi())
                QFAIL("python3 is missing (installer/install-deps.sh --test installs it)");
            QSKIP("python3 is not installed");
        }
        QTemporaryDir dir;
        SessionConfig c = launch({python(), QStringLiteral("-c"),
                                  QStringLiteral("import time\n"
                                                 "def f(n):\n"
                                                 "    return f(n - 1) + 1 if n else sum(i * i for i in range(20000))\n"
                                                 "end = time.time() + 1.5\n"
                                                 "while time.time() < end:\n"
                                                 "    f(40)\n")},
                                 999);
        c.sampler = "inprocess";
        c.agentPath = EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so";
        c.walkCheckEvery = 1;
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        verifyChecks(r.summary, 100, "CPython, in-process CPU samples", 90);
    }
};

QTEST_GUILESS_MAIN(TestAgentWalkCheck)
#include "tst_agent_walk_check.moc"
