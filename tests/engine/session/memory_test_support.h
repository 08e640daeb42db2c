#pragma once

// Helpers of the memory tests: a launch with the agent, the allocators a program may bring, and sums over the stacks
// by leaf and through a function.

#include "tests/engine/session/perf_guard.h"
#include "tests/engine/session/session_test_support.h"

#include "engine/analysis/heap_summary.h"
#include "engine/model/frame_table.h"
#include "engine/model/profile.h"

#include <QFileInfo>
#include <QStringList>
#include <QTest>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace emberline::test {

// A launch of `argv` with memory profiling every `interval` bytes (the agent from this build), flushed every second.
inline engine::SessionConfig memoryLaunch(std::initializer_list<QString> argv, uint64_t interval)
{
    engine::SessionConfig c = launch(argv, 99);
    c.memory = true;
    c.allocInterval = interval;
    c.agentPath = EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so";
    c.flushPeriodNs = 1'000'000'000;
    return c;
}

// Per leaf function (the allocation's caller: the agent's frames are left out), the sum of a sample type; with
// `pids`, the processes each leaf's values came from; with `shortLivedOnly`, of the samples labelled short-lived alone.
inline std::map<std::string, int64_t> byLeaf(const engine::Profile &p, const char *type,
                                             std::map<std::string, std::set<int64_t>> *pids = nullptr,
                                             bool shortLivedOnly = false)
{
    const int index = p.sampleTypeIndex(type);
    if (index < 0)
        qFatal("no sample type %s", type);
    const engine::FrameTable frames(p);
    const engine::StringId pidKey = p.findString("process_id");
    std::vector<uint32_t> path;
    std::map<std::string, int64_t> out;
    const std::vector<uint8_t> shortLived = shortLivedOnly ? engine::shortLivedSamples(p) : std::vector<uint8_t>{};
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        const int64_t v = p.sampleValues(i)[static_cast<size_t>(index)];
        if (v == 0 || (shortLivedOnly && shortLived[i] == 0))
            continue;
        path.clear();
        frames.expandRootFirst(p.sample(i).locations, path);
        const std::string leaf = path.empty() ? std::string() : frames.frame(path.back()).name;
        out[leaf] += v;
        if (pids) {
            for (const engine::Label &l : p.sampleLabels(i))
                if (l.key == pidKey)
                    (*pids)[leaf].insert(l.num);
        }
    }
    return out;
}

// The leaves and their values as "leaf=value, ..." (a failure's message).
inline QString leafRows(const std::map<std::string, int64_t> &values)
{
    QStringList rows;
    for (const auto &[leaf, n] : values)
        rows << QStringLiteral("%1=%2").arg(QString::fromStdString(leaf)).arg(n);
    return rows.join(QLatin1String(", "));
}

// A leaf's value; 0 (and a note of the leaves there are) when it has none.
inline int64_t at(const std::map<std::string, int64_t> &values, const std::string &leaf)
{
    const auto it = values.find(leaf);
    if (it != values.end())
        return it->second;
    qWarning("no values for %s; leaves: %s", leaf.c_str(), qPrintable(leafRows(values)));
    return 0;
}

inline int64_t total(const engine::Profile &p, const char *type)
{
    int64_t sum = 0;
    for (const auto &[leaf, v] : byLeaf(p, type))
        sum += v;
    return sum;
}

// The allocators a program may bring (Debian's, preloaded as a user would), as test rows "library" and "package";
// with `runtimeRow`, a first row without one (the C library's and the C++ runtime's own).
inline void allocatorRows(bool runtimeRow)
{
    QTest::addColumn<QString>("library");
    QTest::addColumn<QString>("package");
    if (runtimeRow)
        QTest::newRow("libstdc++") << QString() << QString();
    QTest::newRow("jemalloc") << QStringLiteral("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")
                              << QStringLiteral("libjemalloc2");
    QTest::newRow("tcmalloc") << QStringLiteral("/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4")
                              << QStringLiteral("libgoogle-perftools4");
    QTest::newRow("mimalloc") << QStringLiteral("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2")
                              << QStringLiteral("libmimalloc2.0");
}

// The row's allocator library must be there (CI installs every one: a missing one fails there).
#define REQUIRE_ALLOCATOR(library, package)                                                                            \
    do {                                                                                                               \
        if (!(library).isEmpty() && !QFileInfo::exists(library)) {                                                     \
            if (emberline::test::inCi())                                                                               \
                QFAIL(qPrintable((package) +                                                                           \
                                 QStringLiteral(" is missing (installer/install-deps.sh --test installs it)")));       \
            QSKIP(qPrintable((package) + QStringLiteral(" is not installed")));                                        \
        }                                                                                                              \
    } while (false)

// The sum of a sample type over the samples whose stack passes through `function`.
inline int64_t through(const engine::Profile &p, const char *type, const std::string &function)
{
    const int index = p.sampleTypeIndex(type);
    if (index < 0)
        qFatal("no sample type %s", type);
    const engine::FrameTable frames(p);
    std::vector<uint32_t> path;
    int64_t sum = 0;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        path.clear();
        frames.expandRootFirst(p.sample(i).locations, path);
        if (std::any_of(path.begin(), path.end(), [&](uint32_t f) { return frames.frame(f).name == function; }))
            sum += p.sampleValues(i)[static_cast<size_t>(index)];
    }
    return sum;
}

} // namespace emberline::test
