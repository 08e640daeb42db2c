// The unwinder's table walk against libunwind on real samples. Programs none of us wrote are recorded with the real
// perf sampler into sample logs: CPython running a varied script (json, re, zlib, hashlib, sorting with a key, a
// recursive walk) and a shell pipeline of head, gzip and dd. Every sample of the logs is then unwound twice, by an
// Unwinder with the modules' tables and by one with libunwind alone. Wherever the tables walked a stack whole, it
// must be libunwind's stack exactly (the pcs, whether it is complete, why it stopped, the copy it used), and the
// tables must walk most stacks whole.
#include "tests/engine/session/session_test_support.h"
#include "tests/engine/unwind/replay_maps.h"

#include "engine/sampler/replay_sampler.h"
#include "engine/sampler/sample_log.h"
#include "engine/session/sampler_factory.h"
#include "engine/unwind/unwinder.h"

#include <QFileInfo>
#include <QTemporaryDir>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

struct Comparison {
    size_t samples = 0;
    size_t libunwindComplete = 0;
    size_t tableWhole = 0;    // stacks the tables walked whole (the rest went to libunwind)
    size_t tableComplete = 0; // of those, complete ones
    size_t mismatches = 0;
    size_t shortChecks = 0; // walks cut at a few frames compared too
    uint64_t tableWalksCounted = 0;
    uint64_t aloneTableWalks = 0; // by the unwinder with tables off: none
    std::string firstMismatch;
};

std::string hexList(const std::vector<uint64_t> &ips)
{
    std::string s;
    char buf[24];
    for (uint64_t ip : ips) {
        std::snprintf(buf, sizeof buf, "%llx ", static_cast<unsigned long long>(ip));
        s += buf;
    }
    return s;
}

std::string describe(const UnwindOutput &o)
{
    return "[" + hexList(o.ips) + "] complete " + std::to_string(o.complete) + " stop " + std::to_string(int(o.stop)) +
           " needed " + std::to_string(o.stackNeeded) + " used " + std::to_string(o.stackUsed);
}

bool same(const UnwindOutput &a, const UnwindOutput &b)
{
    return a.ips == b.ips && a.complete == b.complete && a.stop == b.stop && a.stackNeeded == b.stackNeeded &&
           a.stackUsed == b.stackUsed && a.usedFramePointers == b.usedFramePointers;
}

// Every record of the sample log at `log`, delivered to `maps` (which unwinds each sample through its onStack).
void replayLog(const std::string &log, ReplayMaps &maps)
{
    auto reader = SampleLogReader::open(log);
    if (!reader)
        qFatal("cannot open the sample log: %s", reader.error().message.c_str());
    while (true) {
        auto n = reader.value()->deliver(maps, 4096);
        if (!n)
            qFatal("the sample log is damaged: %s", n.error().message.c_str());
        if (n.value() == 0)
            break;
    }
}

Comparison compareOnLog(const std::string &log)
{
    UnwinderOptions withTables;
    withTables.tables = true;      // tables built from the files now, none kept: the builder is under test too
    withTables.buildAside = false; // every sample meets the tables, from the first on
    UnwinderOptions alone;
    alone.tables = false;
    Unwinder tables(withTables);
    Unwinder libunwind(alone);
    Comparison c;
    UnwindOutput a, b;
    ReplayMaps maps;
    maps.onStack = [&](const RawSample &s, const ProcessMap &map) {
        const UnwindInput input{s.regs, s.stack, &map, static_cast<int>(s.pid)};
        ++c.samples;
        libunwind.unwind(input, a);
        tables.unwind(input, b);
        c.libunwindComplete += a.complete;
        if (!b.byTables)
            return;
        ++c.tableWhole;
        c.tableComplete += b.complete;
        if (!same(a, b) && c.mismatches++ == 0)
            c.firstMismatch = "libunwind " + describe(a) + "\ntables    " + describe(b);
        // A walk cut at maxFrames: the same frames, stopped the same way.
        if (b.ips.size() > 3) {
            ++c.shortChecks;
            libunwind.unwind(input, a, 3);
            tables.unwind(input, b, 3);
            if ((!b.byTables || !same(a, b)) && c.mismatches++ == 0)
                c.firstMismatch = "at 3 frames: libunwind " + describe(a) + "\ntables    " + describe(b);
        }
    };
    replayLog(log, maps);
    c.aloneTableWalks = libunwind.stats().tableWalks;
    c.tableWalksCounted = tables.stats().tableWalks;
    qInfo("%zu samples: libunwind completes %zu; the tables walk %zu whole (%.1f%%, %zu complete), %llu modules "
          "tabled, %llu left to libunwind, %.0f ms reading and building tables; left to libunwind: %llu in no "
          "tabled module, %llu at a fallback row, %llu past the copy, %llu at a frame not above its callee",
          c.samples, c.libunwindComplete, c.tableWhole,
          100.0 * double(c.tableWhole) / double(std::max<size_t>(1, c.samples)), c.tableComplete,
          static_cast<unsigned long long>(tables.stats().modulesTabled),
          static_cast<unsigned long long>(tables.stats().modulesUntabled), double(tables.stats().tableBuildNs) / 1e6,
          static_cast<unsigned long long>(tables.stats().fallbackNoTable),
          static_cast<unsigned long long>(tables.stats().fallbackRow),
          static_cast<unsigned long long>(tables.stats().fallbackOutOfCopy),
          static_cast<unsigned long long>(tables.stats().fallbackBadFrame));
    return c;
}

// The same log unwound by an unwinder that builds its tables aside, pass after pass: the first sample meets no table
// (its modules' tables are being built, libunwind walks it). A walk left to libunwind at one module never meets the
// modules below it, so a pass may ask for tables the one before did not: the passes go on until one asks for none,
// and that pass walks with every table it meets built.
struct Aside {
    bool firstByTables = true;
    size_t firstPassWhole = 0;
    size_t lastPassWhole = 0;
    int passes = 0;
    bool ready = false;
};

Aside asideOnLog(const std::string &log)
{
    UnwinderOptions options;
    options.tables = true;
    options.buildAside = true;
    Unwinder unwinder(options);
    Aside aside;
    size_t seen = 0;
    size_t whole = 0;
    UnwindOutput out;
    ReplayMaps maps;
    maps.onStack = [&](const RawSample &s, const ProcessMap &map) {
        unwinder.unwind(UnwindInput{s.regs, s.stack, &map, static_cast<int>(s.pid)}, out);
        if (seen++ == 0)
            aside.firstByTables = out.byTables;
        whole += out.byTables;
    };
    auto modulesMet = [&unwinder] { return unwinder.stats().modulesTabled + unwinder.stats().modulesUntabled; };
    uint64_t before = 0;
    for (; aside.passes < 6; ++aside.passes) {
        whole = 0;
        replayLog(log, maps);
        aside.ready = unwinder.waitForTables(std::chrono::seconds(60));
        if (aside.passes == 0)
            aside.firstPassWhole = whole;
        aside.lastPassWhole = whole;
        const uint64_t after = modulesMet();
        if (aside.passes > 0 && after == before)
            break;
        before = after;
    }
    return aside;
}

// Records `config` with the perf sampler, everything it delivers written to `log` too.
void capture(SessionConfig config, const QString &dir, const std::string &log)
{
    config.sampler = "perf";
    config.outputDirectory = dir.toStdString();
    RecordSession session(config, [&log](const SessionConfig &c, int child, std::string &choice) {
        auto inner = openSystemSampler(c, child, choice);
        if (!inner)
            return inner;
        auto writer = SampleLogWriter::create(log);
        if (!writer)
            return Result<std::unique_ptr<Sampler>>(writer.error());
        return Result<std::unique_ptr<Sampler>>(
            std::make_unique<CapturingSampler>(std::move(inner).value(), std::move(writer).value()));
    });
    std::atomic<bool> stop{false};
    auto recorded = session.run(stop);
    if (!recorded.ok())
        qFatal("recording failed: %s", recorded.error().message.c_str());
}

} // namespace

class TestTableUnwind : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tablesOffByEnvironment();
    void pythonStacksAsLibunwind();
    void shellPipelineStacksAsLibunwind();
};

// If this fails, EMBERLINE_UNWIND_TABLES=off no longer forces libunwind alone (what benchmarks compare against).
void TestTableUnwind::tablesOffByEnvironment()
{
    qputenv("EMBERLINE_UNWIND_TABLES", "off");
    QVERIFY(!UnwinderOptions::fromEnvironment().tables);
    QVERIFY(!Unwinder().tablesOn());
    qunsetenv("EMBERLINE_UNWIND_TABLES");
    QVERIFY(UnwinderOptions::fromEnvironment().tables);
    QVERIFY(Unwinder().tablesOn());
}

// If this fails, the table walk gives CPython's stacks (the interpreter, libpython's C modules, libz, libcrypto,
// libc) otherwise than libunwind does, or leaves most of them to libunwind.
void TestTableUnwind::pythonStacksAsLibunwind()
{
    REQUIRE_PERF_EVENTS();
    if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) {
        if (inCi())
            QFAIL("python3 is missing (installer/install-deps.sh --test installs it)");
        QSKIP("python3 is not installed");
    }
    QTemporaryDir dir;
    const std::string log = dir.filePath(QStringLiteral("python.samples")).toStdString();
    capture(launch({QStringLiteral("/usr/bin/python3"),
                    QStringLiteral(EMBERLINE_TEST_DATA "/../targets/varied_work.py"), QStringLiteral("3")}),
            dir.filePath(QStringLiteral("out")), log);
    const Comparison c = compareOnLog(log);
    QVERIFY2(c.samples > 1000, qPrintable(QString::number(c.samples)));
    QVERIFY2(c.mismatches == 0, qPrintable(QString::number(c.mismatches) + QLatin1String(" stacks differ; first:\n") +
                                           QString::fromStdString(c.firstMismatch)));
    QCOMPARE(c.tableWalksCounted, uint64_t(c.tableWhole + c.shortChecks));
    QCOMPARE(c.aloneTableWalks, uint64_t(0));
    QVERIFY(c.shortChecks > 0);
    // The tables walk nearly every stack whole, and those are complete ones.
    QVERIFY2(c.tableWhole * 100 >= c.samples * 95, qPrintable(QString::number(c.tableWhole)));
    QVERIFY2(c.tableComplete * 100 >= c.tableWhole * 90, qPrintable(QString::number(c.tableComplete)));

    // Built aside (the sessions' way), the tables are not waited for, and once built they walk what they walked
    // when built at first use.
    const Aside aside = asideOnLog(log);
    QVERIFY(!aside.firstByTables);
    QVERIFY(aside.ready);
    QVERIFY2(aside.passes < 6, "every pass asked for more tables");
    QCOMPARE(aside.lastPassWhole, c.tableWhole);
    qInfo("built aside: %zu stacks walked by the tables in the first pass, %zu in pass %d", aside.firstPassWhole,
          aside.lastPassWhole, aside.passes + 1);
}

// If this fails, the table walk gives the stacks of C programs (gzip, dd, head, the shell and libc) otherwise than
// libunwind does, or leaves most of them to libunwind.
void TestTableUnwind::shellPipelineStacksAsLibunwind()
{
    REQUIRE_PERF_EVENTS();
    QTemporaryDir dir;
    const std::string log = dir.filePath(QStringLiteral("pipeline.samples")).toStdString();
    capture(launch({QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                    QStringLiteral("head -c 40000000 /dev/urandom | gzip -6 | gzip -d | dd of=/dev/null bs=4k "
                                   "2>/dev/null")}),
            dir.filePath(QStringLiteral("out")), log);
    const Comparison c = compareOnLog(log);
    QVERIFY2(c.samples > 300, qPrintable(QString::number(c.samples)));
    QVERIFY2(c.mismatches == 0, qPrintable(QString::number(c.mismatches) + QLatin1String(" stacks differ; first:\n") +
                                           QString::fromStdString(c.firstMismatch)));
    QVERIFY2(c.tableWhole * 100 >= c.samples * 95, qPrintable(QString::number(c.tableWhole)));
}

QTEST_GUILESS_MAIN(TestTableUnwind)
#include "tst_table_unwind.moc"
