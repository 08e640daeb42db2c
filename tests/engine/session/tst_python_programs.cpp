// The shapes of CPython programs whose Python frames a session must follow, each on every installed CPython (pyenv's
// 3.8 to 3.13 and Debian's), one mode of tests/targets/python_shapes.py each under the in-process sampler:
//   - a generator's frame above its consumer's;
//   - asyncio's coroutines, the awaited one above its awaiter, under the event loop, no eval-loop frame left where a
//     Python frame should stand;
//   - a thread started from C (_thread.start_new_thread) with its Python frames, on its own thread;
//   - a forked child's Python frames under its own process id from its first sample, its parent's under the parent's;
//   - an exec of the interpreter: the new image's CPython found again;
//   - a multiprocessing pool's workers (forked), and under the spawn start method (each a new interpreter);
//   - subprocess.run of another interpreter (fork then exec): the child's Python frames under its own process id;
//   - a subinterpreter's code, on the main thread (inside its caller's frames) and on a thread it starts;
//   - recursion deeper than the agent's bound: the innermost frames kept, the chains counted as cut;
//   - a program killed by SIGKILL: the session ends, the samples before the kill are kept;
//   - an interpreter shutting down while a daemon thread still runs Python.
// The script writes the process and thread ids the profile is checked against to a facts file. Its functions are
// module-level ones (the same name in every version: 3.11's qualified names add nothing to them), and each check holds
// for every version unless its comment says otherwise.
#include "tests/engine/session/python_test_support.h"

#include "engine/agent/python/agent_python.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <csignal>
#include <map>
#include <set>
#include <thread>

#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;
using namespace emberline::test;

namespace python_programs_test {

// What the script wrote: every value of each key, in order.
using Facts = std::map<std::string, std::vector<int64_t>>;

Facts readFacts(const QString &path)
{
    Facts facts;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return facts;
    for (const QByteArray &line : f.readAll().split('\n')) {
        const QList<QByteArray> parts = line.trimmed().split(' ');
        if (parts.size() == 2)
            facts[parts[0].toStdString()].push_back(parts[1].toLongLong());
    }
    return facts;
}

int64_t fact(const Facts &facts, const char *key)
{
    const auto it = facts.find(key);
    return it == facts.end() || it->second.empty() ? 0 : it->second.front();
}

// A mode of the script, run under a session for `seconds` of work.
struct Shape {
    Recorded recorded;
    std::vector<PythonSample> samples;
    Facts facts;
};

Shape runShape(const PythonInstall &python, const QTemporaryDir &dir, const char *mode, double seconds)
{
    const QString factsPath = dir.filePath(QStringLiteral("facts.txt"));
    Shape shape;
    shape.recorded = record(pythonLaunch(python, pythonScript("python_shapes.py"),
                                         {QLatin1String(mode), QString::number(seconds), factsPath}),
                            dir.path());
    shape.samples = pythonSamplesOf(shape.recorded.profile);
    shape.facts = readFacts(factsPath);
    return shape;
}

// The stacks where an eval-loop frame (by the name every CPython's symbols give it) still stands rootward of a Python
// frame: Python frames that should have taken its place went elsewhere. (An eval frame at the leaf, with no Python
// frame after it, is a call beginning or ending whose Python frame is not linked: the session keeps it there.)
size_t misplaced(const std::vector<PythonSample> &samples)
{
    return size_t(std::count_if(samples.begin(), samples.end(), [](const PythonSample &s) {
        const size_t eval = s.find("_PyEval_EvalFrameDefault");
        return eval < s.names.size() &&
               std::find(s.python.begin() + ptrdiff_t(eval), s.python.end(), true) != s.python.end();
    }));
}

// The CPU samples in the eval loop without any Python frame: their chain was not read (taken before the session had
// found the interpreter in that process image). (A waiting thread's wall-time stack is read from outside the program,
// without its Python frames: not counted.)
size_t unread(const std::vector<PythonSample> &samples)
{
    return size_t(std::count_if(samples.begin(), samples.end(), [](const PythonSample &s) {
        return s.cpuNs > 0 && s.has("_PyEval_EvalFrameDefault") && s.pythonFrames() == 0;
    }));
}

// The samples of process `pid` (every sample when the profile names no process: one was seen).
std::vector<PythonSample> ofProcess(const std::vector<PythonSample> &samples, int64_t pid)
{
    std::vector<PythonSample> out;
    std::copy_if(samples.begin(), samples.end(), std::back_inserter(out),
                 [&](const PythonSample &s) { return s.pid == pid || s.pid == 0; });
    return out;
}

// Whether `inner` stands leafward of `outer` in the sample, both Python frames.
bool above(const PythonSample &s, const std::string &inner, const std::string &outer)
{
    return s.isPython(inner) && s.isPython(outer) && s.find(outer) < s.find(inner);
}

// The summary's health lines (those that warn, then those that inform) that begin with `prefix`.
std::vector<std::string> healthLines(const SessionSummary &summary, const std::string &prefix)
{
    std::vector<std::string> out;
    if (summary.health)
        for (const auto *lines : {&summary.health->faults, &summary.health->notes})
            for (const std::string &line : *lines)
                if (line.starts_with(prefix))
                    out.push_back(line);
    return out;
}

QString joined(const std::vector<std::string> &lines)
{
    QStringList out;
    for (const std::string &line : lines)
        out << QString::fromStdString(line);
    return out.join(QLatin1String(" | "));
}

// The samples a second of work gives at least: 999 Hz where perf events are allowed, the kernel's 250 Hz tick of a
// CPU timer elsewhere; the script's work is timed by the wall clock, so a machine shared with builds gives it less
// CPU (a quarter of a core, at 999 Hz, still leaves enough samples for the checks to mean something).
constexpr size_t kSamplesPerSecond = 25;

#define REQUIRE_SAMPLES(list, seconds, what)                                                                           \
    QVERIFY2((list).size() >= size_t(double(kSamplesPerSecond) * (seconds)),                                           \
             qPrintable(QStringLiteral("%1 samples through %2").arg((list).size()).arg(QLatin1String(what))))

} // namespace python_programs_test
using namespace python_programs_test;

class TestPythonPrograms : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { REQUIRE_PYTHON_INSTALLS(); }

    // A generator's work: its frame leafward of its consumer's (the generator resumed by the consumer's `for`).
    void generator_data() { pythonInstallRows(); }
    void generator()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "generator", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const std::vector<PythonSample> produce = samplesThrough(shape.samples, "produce");
        REQUIRE_SAMPLES(produce, 0.8, "produce");
        for (const PythonSample &s : produce)
            QVERIFY2(above(s, "produce", "consume") && above(s, "consume", "main"), qPrintable(someStacks({s})));
        // Nearly all of the consumer's time is the generator's.
        const size_t consume = samplesThrough(shape.samples, "consume").size();
        QVERIFY2(double(produce.size()) >= 0.9 * double(consume),
                 qPrintable(QStringLiteral("%1 of %2").arg(produce.size()).arg(consume)));
        QCOMPARE(misplaced(shape.samples), size_t(0));
    }

    // asyncio: the awaited coroutine above its awaiter, the awaiter under the event loop's step (the task yields
    // every round, so the loop resumes it through its C task step), and no eval-loop frame left.
    void coroutines_data() { pythonInstallRows(); }
    void coroutines()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "asyncio", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const std::vector<PythonSample> inner = samplesThrough(shape.samples, "inner_work");
        const std::vector<PythonSample> outer = samplesThrough(shape.samples, "outer_work");
        REQUIRE_SAMPLES(inner, 0.5, "inner_work");
        // outer_work's own loop: a third of a round's work.
        QVERIFY2(
            outer.size() > inner.size() + inner.size() / 10,
            qPrintable(
                QStringLiteral("%1 through outer_work, %2 through inner_work").arg(outer.size()).arg(inner.size())));
        for (const PythonSample &s : outer) {
            QVERIFY2(!s.has("inner_work") || above(s, "inner_work", "outer_work"), qPrintable(someStacks({s})));
            // The event loop's step (BaseEventLoop._run_once from 3.11, _run_once before) is a Python frame rootward.
            const auto loop = std::find_if(s.names.begin(), s.names.end(),
                                           [](const std::string &name) { return name.ends_with("_run_once"); });
            QVERIFY2(loop != s.names.end() && s.python[size_t(loop - s.names.begin())] &&
                         size_t(loop - s.names.begin()) < s.find("outer_work"),
                     qPrintable(someStacks({s})));
        }
        QCOMPARE(misplaced(shape.samples), size_t(0));
        // The program's first milliseconds, before the session has read its agent's ring and found the interpreter
        // (the ring is read some 10-20 ms after the program starts, at the in-process sampler's next round), have
        // no Python frames: some samples of the interpreter's start and its first imports.
        const size_t notRead = unread(shape.samples);
        qInfo("%zu of %zu CPU samples in the eval loop without Python frames", notRead, shape.samples.size());
        QVERIFY2(notRead * 10 <= shape.samples.size(), qPrintable(QString::number(notRead)));
    }

    // A thread the interpreter starts from C, without the threading module: its Python frames from the function it
    // runs (the outermost Python frame, nothing of threading's bootstrap), on that thread alone.
    void threadFromC_data() { pythonInstallRows(); }
    void threadFromC()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "cthread", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const int64_t mainTid = fact(shape.facts, "main"), threadTid = fact(shape.facts, "thread");
        QVERIFY(mainTid != 0 && threadTid != 0 && mainTid != threadTid);
        const std::vector<PythonSample> work = samplesThrough(shape.samples, "c_thread_work");
        REQUIRE_SAMPLES(work, 0.8, "c_thread_work");
        for (const PythonSample &s : work) {
            QCOMPARE(s.tid, threadTid);
            const auto firstPython = std::find(s.python.begin(), s.python.end(), true);
            QVERIFY2(firstPython != s.python.end() &&
                         s.names[size_t(firstPython - s.python.begin())] == "c_thread_work",
                     qPrintable(someStacks({s})));
        }
        QCOMPARE(misplaced(shape.samples), size_t(0));
    }

    // A forked child: its samples under its own process id (the profile labels each sample's process once it holds
    // more than one) with its Python frames (inherited from the parent up to the fork), and the parent's under the
    // parent's; the session found the child's CPython as its own image.
    void forkedChild_data() { pythonInstallRows(); }
    void forkedChild()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "fork", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const int64_t parent = fact(shape.facts, "pid"), child = fact(shape.facts, "child");
        QVERIFY(parent != 0 && child != 0);
        QCOMPARE(fact(shape.facts, "child-status"), int64_t(0));
        const std::vector<PythonSample> inChild = samplesThrough(shape.samples, "child_work");
        const std::vector<PythonSample> inParent = samplesThrough(shape.samples, "parent_work");
        REQUIRE_SAMPLES(inChild, 0.8, "child_work");
        REQUIRE_SAMPLES(inParent, 0.4, "parent_work");
        for (const PythonSample &s : inChild)
            QVERIFY2(s.pid == child && s.tid == child && above(s, "child_work", "main"),
                     qPrintable(QStringLiteral("process %1 thread %2: ").arg(s.pid).arg(s.tid) + someStacks({s})));
        for (const PythonSample &s : inParent)
            QVERIFY2(s.pid == parent && above(s, "parent_work", "main"),
                     qPrintable(QStringLiteral("process %1: ").arg(s.pid) + someStacks({s})));
        QCOMPARE(misplaced(shape.samples), size_t(0));
        // The child walks its Python frames from its first sample: its ring starts with its parent's interpreter.
        QCOMPARE(unread(ofProcess(shape.samples, child)), size_t(0));
        const std::vector<std::string> found =
            healthLines(shape.recorded.summary, "python: process " + std::to_string(child) + ": CPython");
        QVERIFY2(found.size() == 1, qPrintable(joined(healthLines(shape.recorded.summary, "python:"))));
    }

    // An exec of the interpreter on the same script: the new image's CPython found again, its frames as the old
    // image's were, in the same process.
    void execAgain_data() { pythonInstallRows(); }
    void execAgain()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "exec", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const std::vector<int64_t> pids = shape.facts.count("pid") ? shape.facts.at("pid") : std::vector<int64_t>{};
        QVERIFY2(pids.size() == 2 && pids[0] == pids[1], "both images write their process id, the same one");
        const std::vector<PythonSample> before = samplesThrough(shape.samples, "before_exec");
        const std::vector<PythonSample> after = samplesThrough(shape.samples, "after_exec");
        REQUIRE_SAMPLES(before, 0.2, "before_exec");
        REQUIRE_SAMPLES(after, 0.8, "after_exec");
        for (const PythonSample &s : after)
            QVERIFY2(above(s, "after_exec", "main") && s.isPython("<module>"), qPrintable(someStacks({s})));
        for (const PythonSample &s : before)
            QVERIFY2(above(s, "before_exec", "main"), qPrintable(someStacks({s})));
        QCOMPARE(misplaced(shape.samples), size_t(0));
    }

    // multiprocessing's pool (the fork start method, python_shapes.py says why): the work in the workers' processes,
    // under the pool's worker loop, none in the parent's.
    void multiprocessingPool_data() { pythonInstallRows(); }
    void multiprocessingPool()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "mp", 1);
        if (shape.facts.count("skip"))
            QSKIP("multiprocessing's fork start method is not available here");
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const int64_t parent = fact(shape.facts, "pid");
        const std::vector<int64_t> workers =
            shape.facts.count("worker") ? shape.facts.at("worker") : std::vector<int64_t>{};
        QVERIFY(!workers.empty());
        const std::vector<PythonSample> work = samplesThrough(shape.samples, "mp_work");
        REQUIRE_SAMPLES(work, 0.8, "mp_work");
        std::set<int64_t> seen;
        for (const PythonSample &s : work) {
            QVERIFY2(s.pid != parent && std::count(workers.begin(), workers.end(), s.pid) == 1 &&
                         above(s, "mp_work", "worker"),
                     qPrintable(QStringLiteral("process %1: ").arg(s.pid) + someStacks({s})));
            seen.insert(s.pid);
        }
        QCOMPARE(seen.size(), workers.size());
        QCOMPARE(misplaced(shape.samples), size_t(0));
        // Each worker walks its Python frames from its first sample (forked: its ring starts with the parent's
        // interpreter).
        for (const int64_t worker : workers)
            QCOMPARE(unread(ofProcess(shape.samples, worker)), size_t(0));
    }

    // multiprocessing's spawn start method: each worker a new interpreter (fork, then exec of sys.executable), whose
    // CPython the session finds in its new image: the work in the workers' processes, under the pool's worker loop.
    void multiprocessingSpawn_data() { pythonInstallRows(); }
    void multiprocessingSpawn()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "spawn", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const int64_t parent = fact(shape.facts, "pid");
        const std::vector<int64_t> workers =
            shape.facts.count("worker") ? shape.facts.at("worker") : std::vector<int64_t>{};
        QVERIFY(!workers.empty());
        const std::vector<PythonSample> work = samplesThrough(shape.samples, "mp_work");
        REQUIRE_SAMPLES(work, 0.8, "mp_work");
        std::set<int64_t> seen;
        for (const PythonSample &s : work) {
            QVERIFY2(s.pid != parent && std::count(workers.begin(), workers.end(), s.pid) == 1 &&
                         above(s, "mp_work", "worker"),
                     qPrintable(QStringLiteral("process %1: ").arg(s.pid) + someStacks({s})));
            seen.insert(s.pid);
        }
        QCOMPARE(seen.size(), workers.size());
        QCOMPARE(misplaced(shape.samples), size_t(0));
        for (const int64_t worker : workers) {
            const std::vector<std::string> found =
                healthLines(shape.recorded.summary, "python: process " + std::to_string(worker) + ": CPython");
            QVERIFY2(found.size() == 1, qPrintable(joined(healthLines(shape.recorded.summary, "python:"))));
        }
    }

    // subprocess.run of another interpreter on this script (fork, then exec; _posixsubprocess forks by fork() on 3.8
    // and 3.9, by vfork() from 3.10): the child's Python frames under its own process id, its CPython found in its
    // own image; the parent only waits.
    void subprocessChild_data() { pythonInstallRows(); }
    void subprocessChild()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "subprocess", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const std::vector<int64_t> pids = shape.facts.count("pid") ? shape.facts.at("pid") : std::vector<int64_t>{};
        QVERIFY2(pids.size() == 2 && pids[0] != pids[1], "the parent and the child write their process ids");
        const int64_t child = pids[1];
        const std::vector<PythonSample> work = samplesThrough(shape.samples, "sub_child_work");
        REQUIRE_SAMPLES(work, 0.8, "sub_child_work");
        for (const PythonSample &s : work)
            QVERIFY2(s.pid == child && s.tid == child && above(s, "sub_child_work", "main") && s.isPython("<module>"),
                     qPrintable(QStringLiteral("process %1 thread %2: ").arg(s.pid).arg(s.tid) + someStacks({s})));
        QCOMPARE(misplaced(shape.samples), size_t(0));
        const std::vector<std::string> found =
            healthLines(shape.recorded.summary, "python: process " + std::to_string(child) + ": CPython");
        QVERIFY2(found.size() == 1, qPrintable(joined(healthLines(shape.recorded.summary, "python:"))));
    }

    // A subinterpreter (_xxsubinterpreters through 3.12, 3.13's _interpreters): its code's frames on the main thread,
    // leafward of the main interpreter's frame that entered it (the thread holds a thread state in each interpreter,
    // the subinterpreter's the one it runs), and on a thread the subinterpreter started, each on its own thread.
    void subinterpreter_data() { pythonInstallRows(); }
    void subinterpreter()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "subinterp", 1);
        if (shape.facts.count("subinterp"))
            QSKIP("this CPython has no subinterpreter module (_xxsubinterpreters or _interpreters)");
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const int64_t mainTid = fact(shape.facts, "main"), threadTid = fact(shape.facts, "sub-thread");
        QVERIFY(mainTid != 0 && threadTid != 0 && fact(shape.facts, "sub-main") == mainTid);
        const std::vector<PythonSample> work = samplesThrough(shape.samples, "sub_work");
        const std::vector<PythonSample> threadWork = samplesThrough(shape.samples, "sub_thread_work");
        REQUIRE_SAMPLES(work, 0.4, "sub_work");
        REQUIRE_SAMPLES(threadWork, 0.4, "sub_thread_work");
        for (const PythonSample &s : work) {
            // The subinterpreter's code is a module of its own: a Python <module> between the frame that entered it
            // and sub_work (the main script's <module> stands at the root).
            const size_t entered = s.find("run_subinterpreter"), at = s.find("sub_work");
            const bool module =
                entered < at && std::find(s.names.begin() + ptrdiff_t(entered), s.names.begin() + ptrdiff_t(at),
                                          "<module>") != s.names.begin() + ptrdiff_t(at);
            QVERIFY2(s.tid == mainTid && s.isPython("sub_work") && above(s, "sub_work", "run_subinterpreter") &&
                         above(s, "run_subinterpreter", "main") && module,
                     qPrintable(QStringLiteral("thread %1: ").arg(s.tid) + someStacks({s})));
        }
        for (const PythonSample &s : threadWork)
            QVERIFY2(s.tid == threadTid && s.isPython("sub_thread_work"),
                     qPrintable(QStringLiteral("thread %1: ").arg(s.tid) + someStacks({s})));
        std::vector<PythonSample> wrong;
        std::copy_if(shape.samples.begin(), shape.samples.end(), std::back_inserter(wrong),
                     [](const PythonSample &s) { return misplaced({s}) > 0; });
        QVERIFY2(wrong.empty(), qPrintable(someStacks(wrong)));
    }

    // Recursion 1,000 deep, deeper than the agent's bound: each sample keeps the innermost kMaxPythonFrames frames (the
    // leaf among them, the outermost ones left out) and the session counts those chains as cut. (3.8-3.10 run each
    // Python call in a call of the eval loop of its own, so their native stack ends long before 1,000 calls, and the
    // Python frames no eval frame took go outermost; 3.11+ run the whole recursion in one call of the eval loop.)
    void deepRecursion_data() { pythonInstallRows(); }
    void deepRecursion()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "deep", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const std::vector<PythonSample> bottom = samplesThrough(shape.samples, "bottom");
        REQUIRE_SAMPLES(bottom, 0.8, "bottom");
        for (const PythonSample &s : bottom) {
            QVERIFY2(s.pythonFrames() == size_t(agent::kMaxPythonFrames),
                     qPrintable(QStringLiteral("%1 Python frames").arg(s.pythonFrames())));
            // The leaf's Python frame is bottom's (a sample in a C function it calls has native frames above).
            const auto leafPython = std::find(s.python.rbegin(), s.python.rend(), true);
            QVERIFY2(leafPython != s.python.rend() && s.names[size_t(s.python.rend() - leafPython) - 1] == "bottom",
                     qPrintable(someStacks({s})));
            QVERIFY2(!s.has("<module>") && !s.has("main"), qPrintable(someStacks({s})));
        }
        // The health line: "python: N samples of a CPython: x% with the Python chain read whole, y% cut (...".
        const std::vector<std::string> lines = healthLines(shape.recorded.summary, "python: ");
        const auto stats = std::find_if(lines.begin(), lines.end(), [](const std::string &line) {
            return line.find(" cut (") != std::string::npos;
        });
        QVERIFY2(stats != lines.end(), qPrintable(joined(lines)));
        const size_t cutAt = stats->find("% cut (");
        const size_t from = stats->rfind(' ', cutAt) + 1;
        const double cut = std::stod(stats->substr(from, cutAt - from));
        QVERIFY2(cut >= 50, stats->c_str());
    }

    // The program killed by SIGKILL a second into its work: the session ends when it does, with the samples taken
    // before, Python frames and all.
    void killed_data() { pythonInstallRows(); }
    void killed()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const QString factsPath = dir.filePath(QStringLiteral("facts.txt"));
        std::atomic<bool> done{false};
        std::atomic<int64_t> killedPid{0};
        std::thread killer([&] {
            // The script writes its process id first thing; a second of work after that, it is killed.
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (!done && std::chrono::steady_clock::now() < deadline) {
                const int64_t pid = fact(readFacts(factsPath), "pid");
                if (pid == 0) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    continue;
                }
                std::this_thread::sleep_for(std::chrono::seconds(1));
                ::kill(pid_t(pid), SIGKILL);
                killedPid = pid;
                return;
            }
        });
        const auto start = std::chrono::steady_clock::now();
        const Recorded r = record(pythonLaunch(pythonInstalls()[size_t(install)], pythonScript("python_shapes.py"),
                                               {QStringLiteral("long"), QStringLiteral("30"), factsPath}),
                                  dir.path());
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        done = true;
        killer.join();
        QVERIFY(killedPid != 0);
        QVERIFY(r.summary.targetExited);
        QCOMPARE(r.summary.exitStatus, 128 + SIGKILL);
        QVERIFY2(took < 10, qPrintable(QStringLiteral("the session took %1 s").arg(took)));
        const std::vector<PythonSample> work = samplesThrough(pythonSamplesOf(r.profile), "long_work");
        REQUIRE_SAMPLES(work, 0.7, "long_work");
        for (const PythonSample &s : work)
            QVERIFY2(above(s, "long_work", "main"), qPrintable(someStacks({s})));
    }

    // The interpreter shuts down while a daemon thread still runs Python: the program exits with 0, and both threads'
    // work is in the profile, each on its own thread.
    void daemonAtExit_data() { pythonInstallRows(); }
    void daemonAtExit()
    {
        QFETCH(int, install);
        QTemporaryDir dir;
        const Shape shape = runShape(pythonInstalls()[size_t(install)], dir, "daemon", 1);
        QCOMPARE(shape.recorded.summary.exitStatus, 0);
        const int64_t mainTid = fact(shape.facts, "main"), threadTid = fact(shape.facts, "thread");
        QVERIFY(mainTid != 0 && threadTid != 0 && mainTid != threadTid);
        const std::vector<PythonSample> spin = samplesThrough(shape.samples, "daemon_spin");
        const std::vector<PythonSample> work = samplesThrough(shape.samples, "main_work");
        REQUIRE_SAMPLES(spin, 0.5, "daemon_spin");
        REQUIRE_SAMPLES(work, 0.5, "main_work");
        for (const PythonSample &s : spin)
            QVERIFY2(s.tid == threadTid && s.isPython("daemon_spin"), qPrintable(someStacks({s})));
        for (const PythonSample &s : work)
            QVERIFY2(s.tid == mainTid && above(s, "main_work", "main"), qPrintable(someStacks({s})));
    }
};

QTEST_GUILESS_MAIN(TestPythonPrograms)
#include "tst_python_programs.moc"
