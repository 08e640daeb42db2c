#pragma once

// Shared by the tests that run CPython programs under a session (tst_python_frames, tst_python_programs): the
// installed CPythons as data rows, a launch of a script of tests/targets with the agent, and the recorded profile read
// back sample by sample (frames by name, which are Python's, the thread and the process).

#include "tests/engine/python/python_installs.h"
#include "tests/engine/session/perf_guard.h"
#include "tests/engine/session/session_test_support.h"

#include "engine/model/frame_table.h"
#include "engine/model/profile.h"
#include "engine/model/sample_filter.h"

#include <QString>
#include <QStringList>
#include <QTest>

#include <algorithm>
#include <string>
#include <vector>

namespace emberline::test {

// A script of tests/targets.
inline QString pythonScript(const char *name)
{
    return QStringLiteral(EMBERLINE_TEST_DATA "/../targets/") + QLatin1String(name);
}

// Every CPython 3.8-3.13 installed here, found once.
inline const std::vector<PythonInstall> &pythonInstalls()
{
    static const std::vector<PythonInstall> found = findPythonInstalls();
    return found;
}

// A data row per install, its column "install" the index into pythonInstalls().
inline void pythonInstallRows()
{
    QTest::addColumn<int>("install");
    const std::vector<PythonInstall> &all = pythonInstalls();
    for (size_t i = 0; i < all.size(); ++i)
        QTest::newRow(qPrintable(all[i].label())) << static_cast<int>(i);
}

// A test case's initTestCase: fails in CI when no CPython is installed (the test would prove nothing), skips elsewhere.
#define REQUIRE_PYTHON_INSTALLS()                                                                                      \
    do {                                                                                                               \
        if (emberline::test::pythonInstalls().empty()) {                                                               \
            if (emberline::test::inCi())                                                                               \
                QFAIL("no CPython 3.8-3.13 found (pyenv's versions or /usr/bin/python3.N)");                           \
            QSKIP("no CPython 3.8-3.13 is installed here");                                                            \
        }                                                                                                              \
        for (const emberline::test::PythonInstall &python : emberline::test::pythonInstalls())                         \
            qInfo("CPython %s", qPrintable(python.label()));                                                           \
    } while (false)

// A launch of `python` on `script` with `args`, the agent from this build and the in-process sampler's rate.
inline engine::SessionConfig pythonLaunch(const PythonInstall &python, const QString &script, const QStringList &args)
{
    engine::SessionConfig c;
    c.command = {python.interpreter.toStdString(), script.toStdString()};
    for (const QString &a : args)
        c.command.push_back(a.toStdString());
    c.frequency = 999; // the in-process timers tick at the kernel's HZ (250 here); perf events at the asked rate
    c.agentPath = EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so";
    c.flushPeriodNs = 1'000'000'000;
    return c;
}

// Per sample, its frames root first, by name.
inline std::vector<std::vector<std::string>> stacksOf(const engine::Profile &p)
{
    const engine::FrameTable frames(p);
    std::vector<std::vector<std::string>> out;
    std::vector<uint32_t> path;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        path.clear();
        frames.expandRootFirst(p.sample(i).locations, path);
        std::vector<std::string> names;
        names.reserve(path.size());
        for (uint32_t f : path)
            names.push_back(frames.frame(f).name);
        out.push_back(std::move(names));
    }
    return out;
}

// A sample as the Python tests read it.
struct PythonSample {
    std::vector<std::string> names; // its frames, root first
    std::vector<bool> python;       // per frame: a Python frame (no mapping, a source file or a [python] name)
    int64_t tid = 0;
    int64_t pid = 0;     // 0: no process_id label (the session saw one process)
    int64_t samples = 0; // cpu-samples
    int64_t cpuNs = 0;   // cpu-time (0: a wall-time sample of a waiting thread)

    size_t pythonFrames() const { return size_t(std::count(python.begin(), python.end(), true)); }
    // Where `name` stands (root first), names.size() when it does not.
    size_t find(const std::string &name) const
    {
        return size_t(std::find(names.begin(), names.end(), name) - names.begin());
    }
    bool has(const std::string &name) const { return find(name) < names.size(); }
    // Whether the frame named `name` is a Python frame (false when there is none).
    bool isPython(const std::string &name) const
    {
        const size_t at = find(name);
        return at < names.size() && python[at];
    }
};

inline bool isPythonFrame(const engine::Frame &f)
{
    return f.module.empty() && (!f.file.empty() || f.name.starts_with("[python"));
}

inline std::vector<PythonSample> pythonSamplesOf(const engine::Profile &p)
{
    const engine::FrameTable frames(p);
    const engine::ThreadIndex threads(p);
    const engine::StringId pidKey = p.findString("process_id");
    const int cpuTime = p.sampleTypeIndex("cpu-time");
    std::vector<PythonSample> out;
    out.reserve(p.sampleCount());
    std::vector<uint32_t> path;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        path.clear();
        frames.expandRootFirst(p.sample(i).locations, path);
        PythonSample s;
        for (uint32_t f : path) {
            s.names.push_back(frames.frame(f).name);
            s.python.push_back(isPythonFrame(frames.frame(f)));
        }
        const uint32_t t = threads.threadOf(i);
        s.tid = t != engine::kNoIndex ? threads.threads()[t].tid : 0;
        for (const engine::Label &l : p.sampleLabels(i))
            if (pidKey != engine::kNoIndex && l.key == pidKey)
                s.pid = l.num;
        s.samples = p.sampleValues(i)[0];
        s.cpuNs = cpuTime >= 0 ? p.sampleValues(i)[size_t(cpuTime)] : 0;
        out.push_back(std::move(s));
    }
    return out;
}

// The samples whose stack holds `name`.
inline std::vector<PythonSample> samplesThrough(const std::vector<PythonSample> &samples, const std::string &name)
{
    std::vector<PythonSample> out;
    std::copy_if(samples.begin(), samples.end(), std::back_inserter(out),
                 [&](const PythonSample &s) { return s.has(name); });
    return out;
}

// Up to `n` stacks, for a failure message.
inline QString someStacks(const std::vector<PythonSample> &samples, size_t n = 3)
{
    QStringList out;
    for (size_t i = 0; i < samples.size() && size_t(out.size()) < n; ++i) {
        QStringList names;
        for (const std::string &name : samples[i].names)
            names << QString::fromStdString(name);
        out << names.join(QLatin1String(" > "));
    }
    return out.join(QLatin1String(" | "));
}

} // namespace emberline::test
