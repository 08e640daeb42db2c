// The exporter: a FlushInput becomes a Flush whose profile carries Emberline's sample types and labels, whose
// file reads back as the same profile, and whose samples all reach the session's merged profile.
#include "engine/flush/exporter.h"
#include "engine/model/python_frame.h"
#include "engine/model/thread_state.h"
#include "engine/pprof/pprof_reader.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstdio>

using namespace emberline::engine;

namespace {

// A flush of `n` samples on two threads over one stack in a module that has no file (named module+offset) and
// one kernel frame.
FlushInput makeInput(int n, int64_t startNs, int64_t endNs, bool final)
{
    Recorder r;
    r.registerModule({7, "/nonexistent/libgone.so", "", 0x7000, 0x8000, 0x1000});
    r.setThreadName(100, 100, "main");
    r.setThreadName(100, 101, "worker");
    const uint32_t stack[] = {r.internLocation(kKernelModule, 0), r.internLocation(7, 0x7010)};
    for (int i = 0; i < n; ++i)
        r.recordTimed(startNs + i, 100, i % 2 ? 101 : 100, 1000, 1000, static_cast<uint8_t>(ThreadState::Running), true,
                      stack);
    return r.takeFlush(startNs, endNs, final);
}

std::string labelString(const Profile &p, size_t sample, const std::string &key)
{
    for (const Label &l : p.sampleLabels(sample)) {
        if (p.str(l.key) == key)
            return l.str ? p.str(l.str) : std::to_string(l.num);
    }
    return "<none>";
}

} // namespace

class TestExporter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void flushCarriesSampleTypesLabelsAndNames();
    void writtenFlushReadsBackAsItsProfile();
    void sessionProfileHoldsEverySample();
    void recordingsOpenOnCpuTime();
    void emptyAndShortFlushes();
    void jitFramesNamedFromPerfMaps();
    void kernelFramesNamedBesideInterpreterFrames();
};

// If this fails, Datadog and `go tool pprof` would not find the sample types, threads or timestamps they read,
// or a frame without symbols would have an empty name.
void TestExporter::flushCarriesSampleTypesLabelsAndNames()
{
    ExporterOptions options;
    options.frequency = 100;
    Exporter exporter(options);
    auto flush = exporter.exportFlush(makeInput(4, 5'000'000'000, 7'000'000'000, false));
    QVERIFY(flush.ok() && flush.value());
    const Profile &p = *flush.value()->profile;
    QCOMPARE(p.sampleTypeIndex("cpu-samples"), 0);
    QCOMPARE(p.sampleTypeIndex("cpu-time"), 1);
    QCOMPARE(p.sampleTypeIndex("wall-time"), -1);
    QCOMPARE(p.period, int64_t(10'000'000));
    QCOMPARE(p.sampleCount(), size_t(4));
    QCOMPARE(p.totals(), (std::vector<int64_t>{4, 4000}));
    QCOMPARE(labelString(p, 1, "thread name"), std::string("worker"));
    QCOMPARE(labelString(p, 1, "thread id"), std::string("101"));
    QCOMPARE(labelString(p, 2, "end_timestamp_ns"), std::string("5000000002"));
    QCOMPARE(labelString(p, 0, "thread state"), std::string("running"));
    QCOMPARE(labelString(p, 0, "process_id"), std::string("<none>")); // one process only
    const auto locations = p.sample(0).locations;
    QCOMPARE(locations.size(), size_t(2));
    auto nameOf = [&](uint32_t loc) { return p.str(p.functions()[p.locations()[loc].lines[0].functionIndex].name); };
    QCOMPARE(nameOf(locations[0]), std::string("[kernel]"));
    QCOMPARE(nameOf(locations[1]), std::string("libgone.so+0x1010"));
    QCOMPARE(p.str(p.mappings()[p.locations()[locations[1]].mappingIndex].filename),
             std::string("/nonexistent/libgone.so"));
    QCOMPARE(flush.value()->samples, uint64_t(4));
    QCOMPARE(flush.value()->sequence, uint32_t(1));
}

// If this fails, what is on disk differs from what the views showed.
void TestExporter::writtenFlushReadsBackAsItsProfile()
{
    QTemporaryDir dir;
    ExporterOptions options;
    options.outputDirectory = dir.path().toStdString();
    Exporter exporter(options);
    auto flush = exporter.exportFlush(makeInput(6, 1'000'000'000, 3'000'000'000, false));
    QVERIFY(flush.ok() && flush.value());
    QCOMPARE(flush.value()->path, dir.filePath(QStringLiteral("flush-0001.pprof")).toStdString());
    auto read = readPprofFile(flush.value()->path);
    QVERIFY2(read.ok(), read.ok() ? "" : read.error().message.c_str());
    QCOMPARE(read.value().totals(), flush.value()->profile->totals());
    QCOMPARE(read.value().sampleCount(), flush.value()->profile->sampleCount());
}

// If this fails, profile.pprof loses samples of some flush (the final one included).
void TestExporter::sessionProfileHoldsEverySample()
{
    QTemporaryDir dir;
    ExporterOptions options;
    options.outputDirectory = dir.path().toStdString();
    Exporter exporter(options);
    QVERIFY(exporter.exportFlush(makeInput(10, 1'000'000'000, 3'000'000'000, false)).ok());
    QVERIFY(exporter.exportFlush(makeInput(7, 3'000'000'000, 5'000'000'000, false)).ok());
    QVERIFY(exporter.exportFlush(makeInput(3, 5'000'000'000, 5'100'000'000, true)).ok()); // short final flush
    auto path = exporter.writeSessionProfile();
    QVERIFY(path.ok());
    auto merged = readPprofFile(path.value());
    QVERIFY2(merged.ok(), merged.ok() ? "" : merged.error().message.c_str());
    QCOMPARE(merged.value().totals()[0], int64_t(20));
    QCOMPARE(merged.value().totals()[1], int64_t(20'000));
}

// If this fails, a recording with wall time (the default) opens on wall time in every pprof reader (pprof's
// rule picks the last sample type when default_sample_type is unset): idle threads' waiting would fill the flame
// graph, `emberline report` and `go tool pprof -top` instead of the CPU time the user came for.
void TestExporter::recordingsOpenOnCpuTime()
{
    for (const bool memory : {false, true}) {
        QTemporaryDir dir;
        ExporterOptions options;
        options.outputDirectory = dir.path().toStdString();
        options.wallTime = true;
        options.memory = memory;
        Exporter exporter(options);
        auto flush = exporter.exportFlush(makeInput(6, 1'000'000'000, 3'000'000'000, true));
        QVERIFY(flush.ok() && flush.value());
        const Profile &p = *flush.value()->profile;
        QVERIFY(p.sampleTypeIndex("wall-time") > p.sampleTypeIndex("cpu-time")); // pprof's rule would pick another
        QCOMPARE(p.str(p.defaultSampleType), std::string("cpu-time"));
        QCOMPARE(p.defaultSampleTypeIndex(), p.sampleTypeIndex("cpu-time"));
        auto path = exporter.writeSessionProfile();
        QVERIFY(path.ok());
        auto merged = readPprofFile(path.value());
        QVERIFY2(merged.ok(), merged.ok() ? "" : merged.error().message.c_str());
        QCOMPARE(merged.value().str(merged.value().defaultSampleType), std::string("cpu-time"));
        QCOMPARE(merged.value().defaultSampleTypeIndex(), merged.value().sampleTypeIndex("cpu-time"));
    }
}

// If this fails, an empty flush is reported (Datadog rejects empty profiles) or a short final flush is uploaded
// alone (Datadog's profilers leave such a tail out) instead of only shown and saved.
void TestExporter::emptyAndShortFlushes()
{
    Exporter exporter(ExporterOptions{});
    auto empty = exporter.exportFlush(makeInput(0, 0, 2'000'000'000, false));
    QVERIFY(empty.ok());
    QVERIFY(!empty.value());
    auto shortFinal = exporter.exportFlush(makeInput(2, 0, 500'000'000, true));
    QVERIFY(shortFinal.ok() && shortFinal.value());
    QVERIFY(!shortFinal.value()->upload);
    QCOMPARE(shortFinal.value()->samples, uint64_t(2));
    auto longFinal = exporter.exportFlush(makeInput(2, 0, 1'500'000'000, true));
    QVERIFY(longFinal.ok() && longFinal.value());
    QVERIFY(longFinal.value()->upload);
    QCOMPARE(exporter.flushesReported(), uint32_t(2));
}

// Code in anonymous memory is named from the process's perf-PID.map, and code the JIT compiled after a flush is
// named in the next one (the map is read again for what it gained); an address no map names keeps its
// module+offset name. If this fails, node --perf-basic-prof, LuaJIT or a JVM agent's frames show as "anon+0x…".
void TestExporter::jitFramesNamedFromPerfMaps()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string mapPath = dir.filePath(QStringLiteral("perf-300.map")).toStdString();
    FILE *f = std::fopen(mapPath.c_str(), "w");
    QVERIFY(f);
    std::fputs("10000 40 JS:*hotLoop /tmp/loop.js:1:1\nnot a line\n", f);
    std::fflush(f);
    ExporterOptions options;
    options.perfMapDirectory = dir.path().toStdString();
    Exporter exporter(options);
    const auto build = [&](int64_t startNs) {
        Recorder r;
        r.registerModule({9, "//anon", "", 0x10000, 0x20000, 0});
        r.setThreadName(300, 300, "node");
        const uint32_t stack[] = {r.internLocation(9, 0x10010), r.internLocation(9, 0x10090)};
        r.recordTimed(startNs, 300, 300, 1000, 1000, static_cast<uint8_t>(ThreadState::Running), true, stack);
        return exporter.exportFlush(r.takeFlush(startNs, startNs + 1'000'000'000, false));
    };
    const auto names = [](const Profile &p) {
        std::vector<std::string> out;
        for (uint32_t loc : p.sample(0).locations)
            out.push_back(p.str(p.functions()[p.locations()[loc].lines[0].functionIndex].name));
        return out;
    };
    auto first = build(1'000'000'000);
    QVERIFY(first.ok() && first.value());
    QCOMPARE(names(*first.value()->profile), (std::vector<std::string>{"JS:*hotLoop /tmp/loop.js:1:1", "anon+0x90"}));
    std::fputs("10080 20 JS:~driver /tmp/loop.js:2:1\n", f);
    std::fclose(f);
    auto second = build(2'000'000'000);
    QVERIFY(second.ok() && second.value());
    QCOMPARE(names(*second.value()->profile),
             (std::vector<std::string>{"JS:*hotLoop /tmp/loop.js:1:1", "JS:~driver /tmp/loop.js:2:1"}));
}

// Kernel frames are named from the kallsyms table at their own addresses, and a frame of the interpreter a
// recording kept (kInterpreterFrameBit) is named and marked at its address without the bit. If this fails, every
// kernel address (bit 62 set, as in all of the kernel's half) lost that bit with the mark and was named
// "[kernel.kallsyms]+0xc000…", or the kept frame's mark was lost.
void TestExporter::kernelFramesNamedBesideInterpreterFrames()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string kallsyms = dir.filePath(QStringLiteral("kallsyms")).toStdString();
    FILE *f = std::fopen(kallsyms.c_str(), "w");
    QVERIFY(f);
    std::fputs("ffffffff81000000 T _stext\nffffffff81000100 T do_syscall_64\nffffffff81000200 t ksys_write\n"
               "ffffffff81000300 D some_data\nffffffff82000000 T _etext\n",
               f);
    std::fclose(f);
    ExporterOptions options;
    options.kallsymsPath = kallsyms;
    Exporter exporter(options);
    Recorder r;
    r.registerModule({kKernelSymbolsModule, std::string(kKernelMappingName), "", 0xffff800000000000ULL, UINT64_MAX, 0});
    r.registerModule({7, "/nonexistent/libpython.so", "", 0x7000, 0x8000, 0x1000});
    r.setThreadName(100, 100, "main");
    const uint32_t stack[] = {r.internLocation(kKernelSymbolsModule, 0xffffffff81000210ULL),
                              r.internLocation(kKernelSymbolsModule, 0xffffffff81000108ULL),
                              r.internLocation(7, 0x7010 | kInterpreterFrameBit), r.internLocation(7, 0x7020)};
    r.recordTimed(1'000'000'000, 100, 100, 1000, 1000, static_cast<uint8_t>(ThreadState::Running), true, stack);
    auto flush = exporter.exportFlush(r.takeFlush(1'000'000'000, 2'000'000'000, false));
    QVERIFY(flush.ok() && flush.value());
    const Profile &p = *flush.value()->profile;
    std::vector<std::string> names;
    std::vector<bool> interpreter;
    std::vector<uint64_t> addresses;
    for (uint32_t loc : p.sample(0).locations) {
        const Function &fn = p.functions()[p.locations()[loc].lines[0].functionIndex];
        names.push_back(p.str(fn.name));
        interpreter.push_back(isInterpreterFunction(p, fn));
        addresses.push_back(p.locations()[loc].address);
    }
    QCOMPARE(names,
             (std::vector<std::string>{"ksys_write", "do_syscall_64", "libpython.so+0x1010", "libpython.so+0x1020"}));
    QCOMPARE(addresses, (std::vector<uint64_t>{0xffffffff81000210ULL, 0xffffffff81000108ULL, 0x7010, 0x7020}));
    QCOMPARE(interpreter, (std::vector<bool>{false, false, true, false}));
}

QTEST_GUILESS_MAIN(TestExporter)
#include "tst_exporter.moc"
