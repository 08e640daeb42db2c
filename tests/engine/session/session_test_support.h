#pragma once

// Shared by the tests that record real target programs: run a session into a directory and read what it
// wrote, and measure shares and stack completeness on the result.

#include "tests/engine/session/perf_guard.h"

#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/session/record_session.h"

#include <QString>
#include <QStringList>
#include <QTest>

#include <mutex>
#include <set>

namespace emberline::test {

using namespace emberline::engine;

inline QString targetPath(const char *name)
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/") + QLatin1String(name);
}

struct Recorded {
    SessionSummary summary;
    Profile profile;
    std::vector<std::shared_ptr<const Flush>> flushes;
};

inline Recorded record(SessionConfig config, const QString &dir)
{
    config.outputDirectory = dir.toStdString();
    std::atomic<bool> stop{false};
    RecordSession session(config);
    Recorded r;
    std::mutex mutex;
    auto result = session.run(stop, [&](const std::shared_ptr<const Flush> &f) {
        std::lock_guard lock(mutex);
        r.flushes.push_back(f);
    });
    if (!result.ok())
        qFatal("recording failed: %s", result.error().message.c_str());
    r.summary = result.value();
    // A session with no sample at all (a program that ends within a tick, its memory unprofiled) writes no profile:
    // the test's own checks say what it lacks.
    if (r.summary.sessionProfilePath.empty() && r.summary.samples == 0)
        return r;
    auto profile = readPprofFile(r.summary.sessionProfilePath);
    if (!profile.ok())
        qFatal("cannot read the session profile: %s", profile.error().message.c_str());
    r.profile = std::move(profile).value();
    return r;
}

// Share of cpu-time whose stacks pass through `name` (each sample counted once).
inline double share(const Profile &p, const std::string &name, const char *sampleType = "cpu-time")
{
    const FrameTable frames(p);
    const int type = p.sampleTypeIndex(sampleType);
    const auto perStack = valuesPerStack(p, type, {});
    const auto table = FunctionTable::build(p, frames, perStack);
    for (const auto &row : table->rows()) {
        if (frames.frame(row.frame).name == name)
            return static_cast<double>(row.total) / static_cast<double>(table->grandTotal());
    }
    return 0;
}

// Fraction of samples (weighted by cpu-samples: the merged profile aggregates identical stacks) whose stack
// contains one of `roots` (main, or a thread's start routine).
inline double completeFraction(const Profile &p, const std::set<std::string> &roots)
{
    const FrameTable frames(p);
    std::vector<uint32_t> path;
    int64_t complete = 0, all = 0;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        const int64_t weight = p.sampleValues(i)[0];
        all += weight;
        path.clear();
        frames.expandRootFirst(p.sample(i).locations, path);
        for (uint32_t f : path) {
            if (roots.count(frames.frame(f).name)) {
                complete += weight;
                break;
            }
        }
    }
    return all ? static_cast<double>(complete) / static_cast<double>(all) : 0;
}

// Up to three stacks that lack every root, for the failure message.
inline QString incompleteStacks(const Profile &p, const std::set<std::string> &roots)
{
    const FrameTable frames(p);
    std::vector<uint32_t> path;
    QStringList out;
    for (size_t i = 0; i < p.sampleCount() && out.size() < 3; ++i) {
        path.clear();
        frames.expandRootFirst(p.sample(i).locations, path);
        bool found = false;
        QStringList names;
        for (uint32_t f : path) {
            found = found || roots.count(frames.frame(f).name);
            names << QString::fromStdString(frames.frame(f).name);
        }
        if (!found)
            out << names.join(QLatin1String(" > "));
    }
    return out.join(QLatin1String(" | "));
}

inline SessionConfig launch(std::initializer_list<QString> argv, int frequency = 999)
{
    SessionConfig c;
    for (const QString &a : argv)
        c.command.push_back(a.toStdString());
    c.frequency = frequency;
    return c;
}

} // namespace emberline::test

#define VERIFY_COMPLETE(profile, ...)                                                                                  \
    do {                                                                                                               \
        const std::set<std::string> roots{__VA_ARGS__};                                                                \
        const double fraction = emberline::test::completeFraction(profile, roots);                                     \
        QVERIFY2(fraction >= 0.99, qPrintable(QString::number(fraction) + QLatin1String(": ") +                        \
                                              emberline::test::incompleteStacks(profile, roots)));                     \
    } while (0)
