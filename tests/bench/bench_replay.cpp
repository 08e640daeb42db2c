// Replay benchmark: the engine's cost per sample on samples captured from a real program. A sample log (written by
// `emberline record --sample-log FILE`) is read into memory once, then replayed, pass after pass, on this one
// thread through the real sampling pipeline (memory maps, the unwinder over the copied stacks, the recorder) and, at
// the end of each pass, through the exporter (symbolization of the new addresses, the pprof profile, its gzip'd
// bytes written to a folder), as one flush of a session. Twice: with libunwind alone (EMBERLINE_UNWIND_TABLES=off)
// and with the modules' unwind tables first (the default), each a session of its own.
//
//   bench_replay LOG [PASSES] [--folded FILE]
//
// Prints, for both, the samples per second of CPU of the first pass (cold: ELF files opened, unwind caches empty,
// every address symbolized) and of the later ones (warm: what a long session pays), for unwinding and recording
// alone and all in; the share of stacks the tables walked whole; then where a warm sample's time goes, part by part,
// each timed alone over the whole log. --folded writes the table session's first profile as folded stacks
// (cpu-samples), so that two builds can be shown to give the same profile for the same log.
#include "engine/flush/exporter.h"
#include "engine/recorder/recorder.h"
#include "engine/report/folded_writer.h"
#include "engine/sampler/sample_log.h"
#include "engine/session/sampling_pipeline.h"
#include "tests/engine/unwind/replay_maps.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace emberline::engine;

namespace {

int64_t threadCpuNs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Every record of the log, owned, in order, so that the timed passes read no file.
class RecordStore final : public SampleSink {
public:
    struct Record {
        enum class Type : uint8_t { Sample, Mmap, Comm, Fork, Exit, Lost, Switch } type = Type::Sample;
        RawSample sample; // spans point into the vectors below
        std::vector<uint64_t> regs;
        std::vector<uint8_t> stack;
        std::vector<uint64_t> kernelStack;
        uint32_t pid = 0, tid = 0, ppid = 0;
        uint64_t start = 0, length = 0, pgoff = 0, timeNs = 0, inode = 0;
        bool flag1 = false, flag2 = false;
        std::string text;
    };

    void onSample(const RawSample &s) override
    {
        Record &r = add(Record::Type::Sample);
        r.sample = s;
        r.regs.assign(s.regs.begin(), s.regs.end());
        r.stack.assign(s.stack.begin(), s.stack.end());
        r.kernelStack.assign(s.kernelStack.begin(), s.kernelStack.end());
        r.sample.regs = r.regs;
        r.sample.stack = r.stack;
        r.sample.kernelStack = r.kernelStack;
        ++m_samples;
    }
    void onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable, uint64_t inode,
                std::string_view path) override
    {
        Record &r = add(Record::Type::Mmap);
        r.pid = pid;
        r.start = start;
        r.length = length;
        r.pgoff = pgoff;
        r.inode = inode;
        r.flag1 = executable;
        r.text = path;
    }
    void onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec) override
    {
        Record &r = add(Record::Type::Comm);
        r.pid = pid;
        r.tid = tid;
        r.text = name;
        r.flag1 = exec;
    }
    void onFork(uint32_t pid, uint32_t ppid, uint32_t tid) override
    {
        Record &r = add(Record::Type::Fork);
        r.pid = pid;
        r.ppid = ppid;
        r.tid = tid;
    }
    void onExit(uint32_t pid, uint32_t tid) override
    {
        Record &r = add(Record::Type::Exit);
        r.pid = pid;
        r.tid = tid;
    }
    void onLost(uint64_t count) override { add(Record::Type::Lost).length = count; }
    void onSwitch(uint32_t pid, uint32_t tid, uint64_t timeNs, bool out, bool preempted) override
    {
        Record &r = add(Record::Type::Switch);
        r.pid = pid;
        r.tid = tid;
        r.timeNs = timeNs;
        r.flag1 = out;
        r.flag2 = preempted;
    }

    void replay(SampleSink &sink) const
    {
        for (const auto &p : m_records) {
            const Record &r = *p;
            switch (r.type) {
            case Record::Type::Sample:
                sink.onSample(r.sample);
                break;
            case Record::Type::Mmap:
                sink.onMmap(r.pid, r.start, r.length, r.pgoff, r.flag1, r.inode, r.text);
                break;
            case Record::Type::Comm:
                sink.onComm(r.pid, r.tid, r.text, r.flag1);
                break;
            case Record::Type::Fork:
                sink.onFork(r.pid, r.ppid, r.tid);
                break;
            case Record::Type::Exit:
                sink.onExit(r.pid, r.tid);
                break;
            case Record::Type::Lost:
                sink.onLost(r.length);
                break;
            case Record::Type::Switch:
                sink.onSwitch(r.pid, r.tid, r.timeNs, r.flag1, r.flag2);
                break;
            }
        }
    }
    size_t samples() const { return m_samples; }
    size_t records() const { return m_records.size(); }
    // The span of the samples' timestamps (CLOCK_MONOTONIC ns).
    std::pair<uint64_t, uint64_t> timeSpan() const
    {
        uint64_t first = UINT64_MAX, last = 0;
        for (const auto &r : m_records) {
            if (r->type == Record::Type::Sample) {
                first = std::min(first, r->sample.timeNs);
                last = std::max(last, r->sample.timeNs);
            }
        }
        return {first == UINT64_MAX ? 0 : first, last};
    }

private:
    Record &add(Record::Type type)
    {
        m_records.push_back(std::make_unique<Record>());
        m_records.back()->type = type;
        return *m_records.back();
    }
    std::vector<std::unique_ptr<Record>> m_records; // stable addresses: the samples' spans point into them
    size_t m_samples = 0;
};

struct Pass {
    double unwindRecordS = 0; // CPU seconds: unwinding and recording
    double exportS = 0;       // CPU seconds: symbolization, the profile, its bytes and file
};

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Session {
    std::vector<Pass> passes;
    uint64_t incompleteFirst = 0;
    UnwinderStats unwinder;
    double warmUnwindRecordS() const
    {
        std::vector<double> v;
        for (size_t i = 1; i < passes.size(); ++i)
            v.push_back(passes[i].unwindRecordS);
        return passes.size() > 1 ? median(v) : passes[0].unwindRecordS;
    }
    double warmExportS() const
    {
        std::vector<double> v;
        for (size_t i = 1; i < passes.size(); ++i)
            v.push_back(passes[i].exportS);
        return passes.size() > 1 ? median(v) : passes[0].exportS;
    }
};

// One session over the log, `passes` times: the pipeline, recorder and exporter live across the passes, as in a long
// recording; each pass is one flush. `tables`: the unwinder walks with the modules' tables first.
bool runSession(const RecordStore &store, int passes, bool tables, const std::string &foldedPath, Session &out)
{
    const auto [first, last] = store.timeSpan();
    char dirTemplate[] = "/tmp/bench_replay.XXXXXX";
    const char *dir = mkdtemp(dirTemplate);
    ExporterOptions options;
    options.outputDirectory = dir ? dir : "";
    options.frequency = 999;
    options.minimumFlushNs = 0;
    setenv("EMBERLINE_UNWIND_TABLES", tables ? "on" : "off", 1); // read when the pipeline's unwinder is made
    Recorder recorder;
    SamplingPipeline pipeline(recorder);
    Exporter exporter(options);
    bool ok = true;
    for (int p = 0; p < passes && ok; ++p) {
        const int64_t t0 = threadCpuNs();
        store.replay(pipeline);
        const int64_t t1 = threadCpuNs();
        const auto span = static_cast<int64_t>(last - first);
        FlushInput input = recorder.takeFlush(p * span, (p + 1) * span + 1, false);
        input.unwind = std::make_shared<const UnwindCounters>(pipeline.unwindCounters());
        auto flush = exporter.exportFlush(input);
        const int64_t t2 = threadCpuNs();
        if (!flush || !flush.value()) {
            std::fprintf(stderr, "bench_replay: the flush failed: %s\n",
                         flush ? "empty" : flush.error().message.c_str());
            ok = false;
            break;
        }
        out.passes.push_back({static_cast<double>(t1 - t0) / 1e9, static_cast<double>(t2 - t1) / 1e9});
        if (p == 0) {
            out.incompleteFirst = recorder.incomplete();
            if (!foldedPath.empty()) {
                auto folded = writeFoldedStacks(*flush.value()->profile, "cpu-samples");
                std::ofstream(foldedPath) << (folded ? folded.value() : std::string());
            }
        }
    }
    out.unwinder = pipeline.unwinderStats();
    if (dir)
        (void)std::system(("rm -rf '" + std::string(dir) + "'").c_str());
    return ok;
}

// CPU seconds of one replay of the log through the maps, `onStack` called for every copied stack.
template <typename OnStack> double timeReplay(const RecordStore &store, OnStack onStack)
{
    emberline::test::ReplayMaps maps;
    maps.onStack = onStack;
    const int64_t t0 = threadCpuNs();
    store.replay(maps);
    return static_cast<double>(threadCpuNs() - t0) / 1e9;
}

// Where a warm sample's time goes, each part timed alone over the whole log (the maps' upkeep taken out).
struct Breakdown {
    double copyS = 0;      // copying each stack (what a drain pays for a record that wraps the ring)
    double libunwindS = 0; // unwinding, libunwind alone (warm: its caches full)
    double tablesS = 0;    // unwinding, tables first (warm: tables built)
    double lookupS = 0;    // the module of each frame (ProcessMap::find)
    double internS = 0;    // each frame's location interned (Recorder::internLocation)
    double frames = 0;     // per stack, on average
};

Breakdown breakdown(const RecordStore &store)
{
    Breakdown b;
    const double upkeep = timeReplay(store, [](const RawSample &, const ProcessMap &) {});
    std::vector<uint8_t> buffer(1 << 20);
    b.copyS = timeReplay(store,
                         [&buffer](const RawSample &s, const ProcessMap &) {
                             std::memcpy(buffer.data(), s.stack.data(), std::min(s.stack.size(), buffer.size()));
                             asm volatile("" : : "r"(buffer.data()) : "memory");
                         }) -
              upkeep;
    for (const bool tables : {false, true}) {
        UnwinderOptions options = UnwinderOptions::fromEnvironment();
        options.tables = tables;
        options.buildAside = false; // warm means every table built
        Unwinder unwinder(options);
        UnwindOutput out;
        auto unwind = [&](const RawSample &s, const ProcessMap &map) {
            unwinder.unwind(UnwindInput{s.regs, s.stack, &map, static_cast<int>(s.pid)}, out);
        };
        (void)timeReplay(store, unwind); // warms the caches and builds the tables
        (tables ? b.tablesS : b.libunwindS) = timeReplay(store, unwind) - upkeep;
    }
    // The frames' module lookups and interning, on the stacks the tables gave.
    UnwinderOptions options = UnwinderOptions::fromEnvironment();
    options.buildAside = false;
    Unwinder unwinder(options);
    UnwindOutput out;
    Recorder recorder;
    uint64_t sink = 0;
    auto unwind = [&](const RawSample &s, const ProcessMap &map) {
        unwinder.unwind(UnwindInput{s.regs, s.stack, &map, static_cast<int>(s.pid)}, out);
    };
    const double unwound = timeReplay(store, unwind);
    uint64_t frames = 0, stacks = 0;
    (void)timeReplay(store, [&](const RawSample &s, const ProcessMap &map) {
        unwind(s, map);
        frames += out.ips.size();
        ++stacks;
    });
    b.frames = static_cast<double>(frames) / static_cast<double>(std::max<uint64_t>(1, stacks));
    b.lookupS = timeReplay(store,
                           [&](const RawSample &s, const ProcessMap &map) {
                               unwind(s, map);
                               for (uint64_t ip : out.ips)
                                   if (const MappedModule *m = map.find(ip))
                                       sink += m->id;
                           }) -
                unwound;
    b.internS = timeReplay(store,
                           [&](const RawSample &s, const ProcessMap &map) {
                               unwind(s, map);
                               for (uint64_t ip : out.ips) {
                                   const MappedModule *m = map.find(ip);
                                   sink += recorder.internLocation(m ? m->id : 0, ip);
                               }
                           }) -
                unwound - b.lookupS;
    asm volatile("" : : "r"(sink));
    return b;
}

int run(int argc, char **argv)
{
    std::string logPath;
    std::string foldedPath;
    int passes = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--folded" && i + 1 < argc)
            foldedPath = argv[++i];
        else if (logPath.empty())
            logPath = arg;
        else
            passes = std::max(1, std::atoi(argv[i]));
    }
    if (logPath.empty()) {
        std::fprintf(stderr, "usage: bench_replay LOG [PASSES] [--folded FILE]\n");
        return 2;
    }

    RecordStore store;
    {
        auto reader = SampleLogReader::open(logPath);
        if (!reader) {
            std::fprintf(stderr, "bench_replay: %s\n", reader.error().message.c_str());
            return 1;
        }
        while (true) {
            auto n = reader.value()->deliver(store, 4096);
            if (!n) { // a log cut short (the recording was killed): what came before it is replayed
                std::fprintf(stderr, "bench_replay: %s\n", n.error().message.c_str());
                break;
            }
            if (n.value() == 0)
                break;
        }
    }
    const auto [first, last] = store.timeSpan();
    std::printf("log: %zu records, %zu samples over %.2f s\n", store.records(), store.samples(),
                static_cast<double>(last - first) / 1e9);
    if (store.samples() == 0)
        return 1;

    Session alone, tables;
    if (!runSession(store, passes, false, {}, alone) || !runSession(store, passes, true, foldedPath, tables))
        return 1;
    unsetenv("EMBERLINE_UNWIND_TABLES");

    const auto n = static_cast<double>(store.samples());
    auto line = [n](const char *what, double unwindRecord, double exported) {
        std::printf(
            "%-34s unwind+record %9.0f samples/s (%6.2f us/sample)   all in %9.0f samples/s (%6.2f us/sample)\n", what,
            n / unwindRecord, 1e6 * unwindRecord / n, n / (unwindRecord + exported),
            1e6 * (unwindRecord + exported) / n);
    };
    std::printf("incomplete stacks: libunwind alone %llu, tables first %llu of %zu (%.2f%%)\n",
                static_cast<unsigned long long>(alone.incompleteFirst),
                static_cast<unsigned long long>(tables.incompleteFirst), store.samples(),
                100.0 * static_cast<double>(tables.incompleteFirst) / n);
    const UnwinderStats &u = tables.unwinder;
    std::printf("tables: %llu stacks walked whole, %llu left to libunwind (%.1f%% by the tables); %llu modules tabled, "
                "%llu not; %.0f ms reading or building tables\n",
                static_cast<unsigned long long>(u.tableWalks), static_cast<unsigned long long>(u.tableFallbacks),
                100.0 * static_cast<double>(u.tableWalks) /
                    static_cast<double>(std::max<uint64_t>(1, u.tableWalks + u.tableFallbacks)),
                static_cast<unsigned long long>(u.modulesTabled), static_cast<unsigned long long>(u.modulesUntabled),
                static_cast<double>(u.tableBuildNs) / 1e6);
    std::printf("left to libunwind: %llu at a frame in no tabled module, %llu at a fallback row, %llu past the copy, "
                "%llu at a frame not above its callee\n",
                static_cast<unsigned long long>(u.fallbackNoTable), static_cast<unsigned long long>(u.fallbackRow),
                static_cast<unsigned long long>(u.fallbackOutOfCopy),
                static_cast<unsigned long long>(u.fallbackBadFrame));
    line("libunwind alone, first pass (cold)", alone.passes[0].unwindRecordS, alone.passes[0].exportS);
    line("tables first,    first pass (cold)", tables.passes[0].unwindRecordS, tables.passes[0].exportS);
    if (passes > 1) {
        line("libunwind alone, later (median)", alone.warmUnwindRecordS(), alone.warmExportS());
        line("tables first,    later (median)", tables.warmUnwindRecordS(), tables.warmExportS());
    }

    const Breakdown b = breakdown(store);
    auto us = [n](double s) { return 1e6 * s / n; };
    const double restAlone = alone.warmUnwindRecordS() - b.libunwindS - b.lookupS - b.internS;
    const double restTables = tables.warmUnwindRecordS() - b.tablesS - b.lookupS - b.internS;
    std::printf("\nwhere a warm sample's time goes (us/sample, %.1f frames a stack)   libunwind alone   tables first\n",
                b.frames);
    std::printf("  stack copy (a memcpy of each copy)         %15.2f %14.2f   (not in the totals: the replay copies "
                "nothing)\n",
                us(b.copyS), us(b.copyS));
    std::printf("  unwinding                                  %15.2f %14.2f\n", us(b.libunwindS), us(b.tablesS));
    std::printf("  module lookups (a find per frame)          %15.2f %14.2f\n", us(b.lookupS), us(b.lookupS));
    std::printf("  interning (a location per frame)           %15.2f %14.2f\n", us(b.internS), us(b.internS));
    std::printf("  the pipeline's other work                  %15.2f %14.2f   (maps, threads, health, the recorder)\n",
                us(restAlone), us(restTables));
    std::printf("  export (symbolization, pprof, writing)     %15.2f %14.2f\n", us(alone.warmExportS()),
                us(tables.warmExportS()));
    std::printf("  total                                      %15.2f %14.2f\n",
                us(alone.warmUnwindRecordS() + alone.warmExportS()),
                us(tables.warmUnwindRecordS() + tables.warmExportS()));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    try {
        return run(argc, argv);
    } catch (const std::exception &e) { // out of memory for a large log
        std::fprintf(stderr, "bench_replay: %s\n", e.what());
        return 1;
    }
}
