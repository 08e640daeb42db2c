#pragma once

// Helpers of the memory tests: the allocators a program may bring, and sums over the stacks through a function.

#include "tests/engine/session/perf_guard.h"

#include "engine/model/frame_table.h"
#include "engine/model/profile.h"

#include <QFileInfo>
#include <QTest>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace emberline::test {

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
