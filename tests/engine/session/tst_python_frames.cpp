// CPython frames in every stack: each installed CPython (pyenv's 3.8 to 3.13 and Debian's, found where they live)
// runs tests/targets/python_split.py under a session. The in-process sampler (auto picks it for a CPython) reads
// every sample's Python frames in the program, and the session puts them in place of the eval loop's frames:
//   - a method, a plain function and a nested function whose CPU time splits 60/30/10 come out so, each under its
//     caller (`main`), on the main thread and on a second one, named as the version names them (qualified from
//     3.11), the hot function's samples on its loop's lines, and no eval-loop frame left;
//   - two functions allocating 1 MiB blocks 3 to 1 allocate 3 to 1 by the profile;
//   - small objects (pymalloc's) counted by their arenas by default, every one with --python-allocators, 3 to 1;
//   - json's C encoder calling a Python function shows the C accelerator's frames between the Python ones;
//   - a CPython already running, attached to, gets its Python frames the same way (the agent injected into it).
#include "tests/engine/session/memory_test_support.h"
#include "tests/engine/session/python_test_support.h"

#include "engine/analysis/transforms.h"
#include "engine/model/frame_table.h"
#include "engine/model/python_frame.h"
#include "engine/model/sample_filter.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;
using namespace emberline::test;

namespace python_frames_test {

QString script()
{
    return pythonScript("python_split.py");
}

// The names a version gives the target's functions: the qualified name from 3.11 on, the bare one before.
struct Names {
    std::string hot, plain, cool;
};
Names namesOf(const PythonInstall &python)
{
    if (python.minor >= 11)
        return {"Worker.hot", "plain", "outer.<locals>.cool"};
    return {"hot", "plain", "cool"};
}

// The script's lines of Worker.hot's loop (its `for` and its body).
std::set<int64_t> hotLoopLines()
{
    QFile f(script());
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(script()));
    const QList<QByteArray> lines = f.readAll().split('\n');
    for (int i = 0; i < lines.size(); ++i)
        if (lines[i].trimmed() == "def hot(self, n):")
            return {i + 3, i + 4}; // 1-based: the `for` two lines after the def, its body after it
    qFatal("no Worker.hot in %s", qPrintable(script()));
}

SessionConfig pythonLaunch(const PythonInstall &python, const QStringList &args)
{
    return emberline::test::pythonLaunch(python, script(), args);
}

// The value of `type` per line of `function`'s own frame (the innermost one), in the samples through it.
std::map<int64_t, int64_t> byLineOf(const Profile &p, const char *type, const std::string &function)
{
    const int index = p.sampleTypeIndex(type);
    std::map<int64_t, int64_t> out;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        for (uint32_t location : p.sample(i).locations) {
            const Location &l = p.locations()[location];
            if (l.lines.empty() || p.str(p.functions()[l.lines.front().functionIndex].name) != function)
                continue;
            out[l.lines.front().line] += p.sampleValues(i)[static_cast<size_t>(index)];
            break;
        }
    }
    return out;
}

} // namespace python_frames_test
using namespace python_frames_test;

class TestPythonFrames : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { REQUIRE_PYTHON_INSTALLS(); }

    // 60/30/10 by construction, within 7 points at 999 Hz for 3 s (the 1-point figure for 10 s is the benchmark's):
    // if this fails, Python frames are missing, misnamed, or land in the wrong function.
    void cpuSplit_data() { pythonInstallRows(); }
    void cpuSplit()
    {
        QFETCH(int, install);
        const PythonInstall &python = pythonInstalls()[size_t(install)];
        const Names names = namesOf(python);
        QTemporaryDir dir;
        const Recorded r = record(pythonLaunch(python, {QStringLiteral("cpu"), QStringLiteral("3")}), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY2(QString::fromStdString(r.summary.samplerChoice).contains(QLatin1String("CPython")),
                 r.summary.samplerChoice.c_str());
        // Where perf events are allowed (root, as CI runs), each thread's cpu-clock event signals it at the asked
        // 999 Hz, not at the kernel's tick (a CPU timer's 250 Hz here).
        if (::geteuid() == 0) {
            QVERIFY2(r.summary.samplerDescription.find("cpu-clock perf event") != std::string::npos,
                     r.summary.samplerDescription.c_str());
            const double cpuSeconds = static_cast<double>(r.summary.targetCpuNs) / 1e9;
            QVERIFY2(static_cast<double>(r.summary.samples) > 800 * cpuSeconds,
                     qPrintable(QStringLiteral("%1 samples in %2 s of CPU").arg(r.summary.samples).arg(cpuSeconds)));
        }
        // The health view names the interpreter, its eval loop found (its frames are placed among the native ones).
        QVERIFY(r.summary.health);
        // It informs (a note), it does not warn.
        const auto &notes = r.summary.health->notes;
        QVERIFY(std::any_of(notes.begin(), notes.end(), [&](const std::string &line) {
            return line.starts_with("python: process") &&
                   line.find("CPython " + python.version.toStdString()) != std::string::npos;
        }));
        for (const auto *lines : {&notes, &r.summary.health->faults})
            for (const std::string &line : *lines)
                QVERIFY2(line.find("not found") == std::string::npos, line.c_str());
        const double all = static_cast<double>(through(r.profile, "cpu-time", "main"));
        QVERIFY2(all > 0, "no sample under the script's main");
        const double hot = static_cast<double>(through(r.profile, "cpu-time", names.hot)) / all;
        const double plain = static_cast<double>(through(r.profile, "cpu-time", names.plain)) / all;
        const double cool = static_cast<double>(through(r.profile, "cpu-time", names.cool)) / all;
        qInfo("%s: %.1f / %.1f / %.1f%% of %.0f ms", qPrintable(python.version), hot * 100, plain * 100, cool * 100,
              all / 1e6);
        QVERIFY2(std::abs(hot - 0.6) < 0.07 && std::abs(plain - 0.3) < 0.07 && std::abs(cool - 0.1) < 0.07,
                 qPrintable(QStringLiteral("%1 / %2 / %3").arg(hot).arg(plain).arg(cool)));
        // Each under its caller, in order, and no eval-loop frame left where Python frames stand.
        bool ordered = false;
        int64_t withEval = 0, withMain = 0, splitToHot = 0, adjacent = 0;
        for (const std::vector<std::string> &stack : stacksOf(r.profile)) {
            // The interpreter's functions that pass calls on (3.8 to 3.10 go through several for every Python call)
            // are left out between the Python frames: split calls hot directly.
            const auto split = std::find(stack.begin(), stack.end(), "split");
            if (split != stack.end() && std::find(split, stack.end(), names.hot) != stack.end()) {
                ++splitToHot;
                adjacent += split + 1 != stack.end() && *(split + 1) == names.hot ? 1 : 0;
            }
            // The script's own frames in order.
            std::vector<std::string> own;
            for (const std::string &frame : stack)
                if (frame == "<module>" || frame == "main" || frame == "split" || frame == names.hot)
                    own.push_back(frame);
            ordered = ordered || own == std::vector<std::string>{"<module>", "main", "split", names.hot};
            if (std::find(stack.begin(), stack.end(), "main") == stack.end())
                continue;
            ++withMain;
            withEval += std::find(stack.begin(), stack.end(), "_PyEval_EvalFrameDefault") != stack.end() ? 1 : 0;
        }
        // A sample taken as a call begins or ends may find an eval frame whose Python frame is not linked yet (or
        // no longer): kept at the leaf, where it is. One in a hundred at most.
        QVERIFY2(
            withEval * 100 <= withMain,
            qPrintable(
                QStringLiteral("%1 of %2 stacks through main keep an eval-loop frame").arg(withEval).arg(withMain)));
        QVERIFY2(ordered, "no stack reads <module>, main, split, hot");
        QVERIFY2(splitToHot > 0 && adjacent * 100 >= splitToHot * 95,
                 qPrintable(QStringLiteral("%1 of %2 stacks through split and hot have nothing between them")
                                .arg(adjacent)
                                .arg(splitToHot)));
        // The hot function's time on its loop's lines.
        const std::set<int64_t> loop = hotLoopLines();
        int64_t onLoop = 0, inHot = 0;
        for (const auto &[line, value] : byLineOf(r.profile, "cpu-time", names.hot)) {
            inHot += value;
            onLoop += loop.count(line) ? value : 0;
        }
        QVERIFY2(inHot > 0 && double(onLoop) / double(inHot) > 0.9,
                 qPrintable(QStringLiteral("%1 of %2 on the loop's lines").arg(onLoop).arg(inHot)));
    }

    // A CPython already running, attached to (the agent injected into it, REQUIRE_ATTACH's rights): the same split.
    void cpuSplitAttached_data() { pythonInstallRows(); }
    void cpuSplitAttached()
    {
        QFETCH(int, install);
        if (::geteuid() != 0) {
            if (inCi())
                QFAIL("loading the agent into a running program needs ptrace on a process that is not our child: root, "
                      "which CI has");
            QSKIP("loading the agent into a running program needs ptrace on a process that is not our child (root)");
        }
        const PythonInstall &python = pythonInstalls()[size_t(install)];
        const Names names = namesOf(python);
        QProcess target;
        target.start(python.interpreter, {script(), QStringLiteral("cpu"), QStringLiteral("30")});
        QVERIFY(target.waitForStarted());
        QTest::qWait(300); // its rounds under way
        SessionConfig c;
        c.pid = static_cast<int>(target.processId());
        c.frequency = 999;
        c.agentPath = EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so";
        c.flushPeriodNs = 1'000'000'000;
        c.durationNs = 2'500'000'000;
        QTemporaryDir dir;
        const Recorded r = record(c, dir.path());
        target.kill();
        target.waitForFinished();
        QVERIFY2(QString::fromStdString(r.summary.samplerChoice).contains(QLatin1String("CPython")),
                 r.summary.samplerChoice.c_str());
        const double all = static_cast<double>(through(r.profile, "cpu-time", "split"));
        QVERIFY2(all > 0, "no sample under the script's split");
        const double hot = static_cast<double>(through(r.profile, "cpu-time", names.hot)) / all;
        const double plain = static_cast<double>(through(r.profile, "cpu-time", names.plain)) / all;
        const double cool = static_cast<double>(through(r.profile, "cpu-time", names.cool)) / all;
        qInfo("%s attached: %.1f / %.1f / %.1f%% of %.0f ms", qPrintable(python.version), hot * 100, plain * 100,
              cool * 100, all / 1e6);
        QVERIFY2(std::abs(hot - 0.6) < 0.07 && std::abs(plain - 0.3) < 0.07 && std::abs(cool - 0.1) < 0.07,
                 qPrintable(QStringLiteral("%1 / %2 / %3").arg(hot).arg(plain).arg(cool)));
    }

    // The same rounds on a second thread: its Python frames too, and under its name.
    void cpuOnThread_data() { pythonInstallRows(); }
    void cpuOnThread()
    {
        QFETCH(int, install);
        const PythonInstall &python = pythonInstalls()[size_t(install)];
        const Names names = namesOf(python);
        QTemporaryDir dir;
        const Recorded r = record(
            pythonLaunch(python, {QStringLiteral("cpu"), QStringLiteral("2"), QStringLiteral("thread")}), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        // Every sample through the hot method on one thread, and that thread's Python frames from threading's own
        // start (Thread._bootstrap_inner) down.
        const FrameTable frames(r.profile);
        const ThreadIndex threads(r.profile);
        std::set<int64_t> tids;
        int64_t all = 0, fromThreading = 0;
        std::vector<uint32_t> path;
        for (size_t i = 0; i < r.profile.sampleCount(); ++i) {
            path.clear();
            frames.expandRootFirst(r.profile.sample(i).locations, path);
            const auto named = [&](auto match) {
                return std::any_of(path.begin(), path.end(), [&](uint32_t f) { return match(frames.frame(f).name); });
            };
            if (!named([&](const std::string &name) { return name == names.hot; }))
                continue;
            ++all;
            fromThreading += named([](const std::string &name) { return name.ends_with("_bootstrap_inner"); }) ? 1 : 0;
            const uint32_t t = threads.threadOf(i);
            tids.insert(t != kNoIndex ? threads.threads()[t].tid : 0);
        }
        const double share = static_cast<double>(through(r.profile, "cpu-time", names.hot)) /
                             static_cast<double>(through(r.profile, "cpu-time", "split"));
        QVERIFY2(all > 0 && tids.size() == 1 && fromThreading == all,
                 qPrintable(QStringLiteral("%1 thread(s); %2 of %3 from threading's start")
                                .arg(tids.size())
                                .arg(fromThreading)
                                .arg(all)));
        QVERIFY2(std::abs(share - 0.6) < 0.08, qPrintable(QString::number(share)));
    }

    // Two functions allocating 1 MiB blocks 3 to 1, at the default interval: 3 to 1 within 10%.
    void memoryThreeToOne_data() { pythonInstallRows(); }
    void memoryThreeToOne()
    {
        QFETCH(int, install);
        const PythonInstall &python = pythonInstalls()[size_t(install)];
        QTemporaryDir dir;
        SessionConfig c = pythonLaunch(python, {QStringLiteral("alloc"), QStringLiteral("400")});
        c.memory = true;
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        const double big = static_cast<double>(through(r.profile, "alloc-space", "big_three"));
        const double small = static_cast<double>(through(r.profile, "alloc-space", "small_one"));
        QVERIFY2(small > 0 && std::abs(big / small / 3.0 - 1) < 0.1,
                 qPrintable(QStringLiteral("%1 / %2").arg(big).arg(small)));
    }

    // For those debugging CPython itself, the interpreter's frames stay: each eval-loop frame under the Python frames
    // it ran (split's call of hot runs in an eval frame of its own, which split's frame calls).
    void interpreterFramesKept_data() { pythonInstallRows(); }
    void interpreterFramesKept()
    {
        QFETCH(int, install);
        const PythonInstall &python = pythonInstalls()[size_t(install)];
        const Names names = namesOf(python);
        QTemporaryDir dir;
        SessionConfig c = pythonLaunch(python, {QStringLiteral("cpu"), QStringLiteral("1")});
        c.pythonInterpreterFrames = true;
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        int64_t throughHot = 0, evalUnderHot = 0;
        for (const std::vector<std::string> &stack : stacksOf(r.profile)) {
            const auto hot = std::find(stack.begin(), stack.end(), names.hot);
            if (hot == stack.end() || hot == stack.begin())
                continue;
            ++throughHot;
            // Root first: the eval frame that runs hot comes before it (3.11+: the one that runs split runs hot too).
            const auto eval = std::find(stack.begin(), hot, "_PyEval_EvalFrameDefault");
            evalUnderHot += eval != hot ? 1 : 0;
        }
        QVERIFY2(throughHot > 0 && evalUnderHot * 100 >= throughHot * 95,
                 qPrintable(QStringLiteral("%1 of %2 stacks through hot keep an eval frame under it")
                                .arg(evalUnderHot)
                                .arg(throughHot)));

        // The kept frames are marked: the views' HideInterpreter step takes them out again, and leaves every stack's
        // Python frames as they were, in order.
        QVERIFY(hasInterpreterFunctions(r.profile));
        const std::vector<Transform> hide{{Transform::Kind::HideInterpreter, {}}};
        const auto hidden = applyTransforms(r.profile, hide);
        QVERIFY2(hidden, hidden ? "" : hidden.error().message.c_str());
        QCOMPARE(hidden.value().sampleCount(), r.profile.sampleCount());
        const auto pythonOnly = [&](const std::vector<std::string> &stack) {
            std::vector<std::string> out;
            for (const std::string &frame : stack)
                if (frame == "<module>" || frame == "main" || frame == "split" || frame == names.hot ||
                    frame == names.plain || frame == names.cool)
                    out.push_back(frame);
            return out;
        };
        const std::vector<std::vector<std::string>> before = stacksOf(r.profile);
        const std::vector<std::vector<std::string>> after = stacksOf(hidden.value());
        QCOMPARE(after.size(), before.size());
        int64_t evalStill = 0, throughHotAfter = 0;
        for (size_t i = 0; i < after.size(); ++i) {
            QCOMPARE(pythonOnly(after[i]), pythonOnly(before[i]));
            const auto hot = std::find(after[i].begin(), after[i].end(), names.hot);
            if (hot == after[i].end())
                continue;
            ++throughHotAfter;
            evalStill += std::find(after[i].begin(), hot, "_PyEval_EvalFrameDefault") != hot ? 1 : 0;
        }
        // What stays is what a recording without the interpreter's frames keeps too: an eval frame caught entering or
        // leaving a call, or one the chain had no frame for.
        QVERIFY2(throughHotAfter > 0 && evalStill * 100 <= throughHotAfter * 2,
                 qPrintable(QStringLiteral("%1 of %2 stacks through hot still have an eval frame under it")
                                .arg(evalStill)
                                .arg(throughHotAfter)));
    }

    // Small objects come from pymalloc's arenas, which CPython maps itself: by default each arena counts once, to the
    // Python code whose object needed it; with --python-allocators every object counts as Python allocates it. Both
    // ways the two functions' 3:1 comes out, and the summary says how they were counted.
    void smallObjects_data()
    {
        QTest::addColumn<int>("install");
        QTest::addColumn<bool>("pythonAllocators");
        const std::vector<PythonInstall> &all = pythonInstalls();
        for (size_t i = 0; i < all.size(); ++i) {
            QTest::addRow("%s arenas", qPrintable(all[i].label())) << static_cast<int>(i) << false;
            QTest::addRow("%s python-allocators", qPrintable(all[i].label())) << static_cast<int>(i) << true;
        }
    }
    void smallObjects()
    {
        QFETCH(int, install);
        QFETCH(bool, pythonAllocators);
        const PythonInstall &python = pythonInstalls()[size_t(install)];
        const int n = 200000;
        QTemporaryDir dir;
        SessionConfig c = pythonLaunch(python, {QStringLiteral("objects"), QString::number(n)});
        c.memory = true;
        // Objects of 97 bytes: about 9,000 and 3,000 samples, the ratio's standard deviation 2% (a tenth is 5 of them).
        c.allocInterval = 8192;
        c.pythonAllocators = pythonAllocators;
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.memory);
        const double three = static_cast<double>(through(r.profile, "alloc-space", "objects_three"));
        const double one = static_cast<double>(through(r.profile, "alloc-space", "objects_one"));
        const QString said =
            QStringLiteral("%1 / %2, notes: %3")
                .arg(three)
                .arg(one)
                .arg(QString::fromStdString(r.summary.memory->notes.empty() ? std::string()
                                                                            : r.summary.memory->notes.front()));
        // Each object is 97 bytes (a bytes object of 64): 3n of them are at least that much; with the loop's ints, not
        // 2.5 times it.
        const double objects = 97.0 * 3 * n;
        QVERIFY2(three > 0.9 * objects && three < 2.5 * objects, qPrintable(said));
        QVERIFY2(one > 0 && std::abs(three / one / 3.0 - 1) < 0.1, qPrintable(said));
        const char *note = pythonAllocators ? "--python-allocators):" : "pymalloc's arenas";
        QVERIFY2(std::any_of(r.summary.memory->notes.begin(), r.summary.memory->notes.end(),
                             [&](const std::string &line) { return line.find(note) != std::string::npos; }),
                 qPrintable(said));
    }

    // Exact mode, every object a malloc: a stack seen before is written as its hash alone, with the Python frames of
    // the allocation beside it, and the session gives each allocation its own. Every object of the two loops is under
    // its function, 3:1 (each iteration makes a bytes object, and an int past the small ones). If this fails with
    // objects_three near 0, a stack written as its hash lost its allocation's Python frames.
    void exactObjectsKeepTheirPythonFrames()
    {
        const PythonInstall &python = pythonInstalls().front();
        const int n = 20000;
        QTemporaryDir dir;
        SessionConfig c = pythonLaunch(python, {QStringLiteral("objects"), QString::number(n)});
        c.memory = true;
        c.allocInterval = 1;
        c.environment = {{"PYTHONMALLOC", "malloc"}};
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        const int64_t three = through(r.profile, "alloc-samples", "objects_three");
        const int64_t one = through(r.profile, "alloc-samples", "objects_one");
        const QString said = QStringLiteral("%1 / %2").arg(three).arg(one);
        QVERIFY2(three >= int64_t(3) * n && one >= n, qPrintable(said));
        QVERIFY2(std::abs(double(three) / double(one) / 3.0 - 1) < 0.02, qPrintable(said));
    }

    // A user's PYTHONMALLOC sets CPython's allocators anew as it starts, over the agent's: the summary says so, and
    // the objects are counted at malloc (PYTHONMALLOC=malloc makes each one a malloc).
    void pythonMallocReplaces()
    {
        const PythonInstall &python = pythonInstalls().front();
        QTemporaryDir dir;
        SessionConfig c = pythonLaunch(python, {QStringLiteral("objects"), QStringLiteral("100000")});
        c.memory = true;
        c.pythonAllocators = true;
        c.environment = {{"PYTHONMALLOC", "malloc"}};
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.memory);
        QVERIFY(std::any_of(r.summary.memory->notes.begin(), r.summary.memory->notes.end(),
                            [](const std::string &line) { return line.find("PYTHONMALLOC") != std::string::npos; }));
        QVERIFY(through(r.profile, "alloc-space", "objects_three") > 97 * 3 * 100000 * 9 / 10);
    }

    // Threads blocked in a system call (a sleep, a lock's futex) cannot run the agent's handler: their chains are read
    // from outside while they wait. Most of each one's wall time lies under its Python function.
    void waitsCarryPythonFrames_data() { pythonInstallRows(); }
    void waitsCarryPythonFrames()
    {
        QFETCH(int, install);
        const PythonInstall &python = pythonInstalls()[size_t(install)];
        QTemporaryDir dir;
        SessionConfig c = pythonLaunch(python, {QStringLiteral("wait"), QStringLiteral("2")});
        c.wallTime = true;
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY2(r.summary.wallTime, r.summary.wallTimeProblem.c_str());
        const double napping = static_cast<double>(through(r.profile, "wall-time", "napping")) / 1e9;
        const double waiting = static_cast<double>(through(r.profile, "wall-time", "lock_waiter")) / 1e9;
        QVERIFY2(napping > 1.5 && waiting > 1.5, qPrintable(QStringLiteral("%1 s, %2 s").arg(napping).arg(waiting)));
    }

    // json's C encoder calling back into Python: the accelerator's frames between `callback` and encode_default.
    void callbackFromC_data() { pythonInstallRows(); }
    void callbackFromC()
    {
        QFETCH(int, install);
        const PythonInstall &python = pythonInstalls()[size_t(install)];
        QTemporaryDir dir;
        const Recorded r =
            record(pythonLaunch(python, {QStringLiteral("callback"), QStringLiteral("1.5")}), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        bool between = false;
        int stacks = 0;
        int callers = 0;
        int callees = 0;
        for (const std::vector<std::string> &stack : stacksOf(r.profile)) {
            ++stacks;
            const auto caller = std::find(stack.begin(), stack.end(), "callback");
            const auto callee = std::find(caller, stack.end(), "encode_default");
            callers += caller != stack.end() ? 1 : 0;
            callees += callee != stack.end() ? 1 : 0;
            if (caller == stack.end() || callee == stack.end())
                continue;
            between = between || std::any_of(caller, callee, [](const std::string &frame) {
                          return frame.starts_with("encoder_") || frame.starts_with("_json");
                      });
        }
        // Where this fails, the counts say whether the Python frames were missing (no `callback` anywhere: the
        // interpreter found late, or not at all) or placed wrongly among the native ones.
        QVERIFY2(between, qPrintable(QStringLiteral("no stack has json's C encoder between callback and "
                                                    "encode_default (%1 stacks, %2 under callback, %3 of them reaching "
                                                    "encode_default)")
                                         .arg(stacks)
                                         .arg(callers)
                                         .arg(callees)));
    }
};

QTEST_GUILESS_MAIN(TestPythonFrames)
#include "tst_python_frames.moc"
