// The heaptrack-like summary of a memory profile (engine/analysis/heap_summary.h) on profiles made by hand: each
// stack blamed on its leaf-most frame that is not an allocator's (malloc, operator new, the agent's own frames),
// leaks by what stays in use, the most frequent allocations, short-lived ones (allocated, not in use), and a live
// session's peak flush with what each function held then.

#include "tests/engine/live/synthetic_memory_flush.h"

#include "engine/analysis/heap_summary.h"
#include "engine/live/live_profile.h"
#include "engine/model/sample_kinds.h"
#include "engine/pprof/pprof_reader.h"

#include <QTest>

#include <map>

using namespace emberline;
using namespace emberline::engine;

namespace heap_summary_test {

// A memory profile whose stacks run through allocators, as the agent records them:
//   work → malloc                                   100 allocated (10 kB), none in use
//   Parser::parse → operator new(unsigned long)      10 allocated (50 kB), all in use
//   cache_put → malloc → emberline_malloc (agent)    20 allocated (4 kB), 5 in use (1 kB)
//   tmp_buffer → calloc                               3 allocated (300 kB), none in use
// each under main.
Profile allocatorProfile()
{
    Profile p;
    for (const char *type : {"alloc-samples", "alloc-space", "inuse-objects", "inuse-space"})
        p.sampleTypes().push_back({p.intern(type), p.intern(std::string(type).ends_with("space") ? "bytes" : "count")});
    Mapping agent;
    agent.id = 1;
    agent.filename = p.intern("/usr/lib/emberline/libemberline_agent.so");
    p.mappings().push_back(agent);
    std::map<std::string, uint32_t> locations;
    const auto location = [&](const std::string &name, bool inAgent = false) {
        if (auto it = locations.find(name); it != locations.end())
            return it->second;
        Function f;
        f.id = p.functions().size() + 1;
        f.name = p.intern(name);
        p.functions().push_back(f);
        Location loc;
        loc.id = p.locations().size() + 1;
        loc.mappingIndex = inAgent ? 0 : kNoIndex;
        loc.lines.push_back({static_cast<uint32_t>(p.functions().size() - 1), 0, 0});
        p.locations().push_back(loc);
        return locations[name] = static_cast<uint32_t>(p.locations().size() - 1);
    };
    const auto add = [&](std::vector<uint32_t> stack, std::vector<int64_t> values) {
        stack.push_back(location("main"));
        p.addSample(stack, values);
    };
    add({location("malloc"), location("work")}, {100, 10'000, 0, 0});
    add({location("operator new(unsigned long)"), location("Parser::parse")}, {10, 50'000, 10, 50'000});
    add({location("emberline_malloc", true), location("malloc"), location("cache_put")}, {20, 4'000, 5, 1'000});
    add({location("calloc"), location("tmp_buffer")}, {3, 300'000, 0, 0});
    return p;
}

std::map<std::string, int64_t> valuesOf(const std::vector<HeapSummaryRow> &rows)
{
    std::map<std::string, int64_t> out;
    for (const HeapSummaryRow &row : rows)
        out[row.function] = row.value;
    return out;
}

std::vector<std::string> order(const std::vector<HeapSummaryRow> &rows)
{
    std::vector<std::string> out;
    out.reserve(rows.size());
    for (const HeapSummaryRow &row : rows)
        out.push_back(row.function);
    return out;
}

} // namespace heap_summary_test

using namespace heap_summary_test;

class TestHeapSummary : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, allocations are blamed on malloc or operator new (which allocate everything) instead of the
    // code that asked for the memory, or a list ranks by the wrong value.
    void listsBlameTheCallerOfTheAllocator()
    {
        const Profile p = allocatorProfile();
        QVERIFY(hasMemoryTypes(p));
        const FrameTable frames(p);
        const HeapSummary s = summarizeHeap(p, frames, memoryByStack(p));
        QVERIFY(!s.fullestFlush);
        QVERIFY(s.peak.empty());
        QCOMPARE(s.allocObjects, int64_t(133));
        QCOMPARE(s.allocBytes, int64_t(364'000));
        QCOMPARE(s.inuseObjects, int64_t(15));
        QCOMPARE(s.inuseBytes, int64_t(51'000));
        QCOMPARE(order(s.leaks), (std::vector<std::string>{"Parser::parse", "cache_put"}));
        QCOMPARE(valuesOf(s.leaks)["cache_put"], int64_t(1'000));
        QCOMPARE(order(s.allocations), (std::vector<std::string>{"work", "cache_put", "Parser::parse", "tmp_buffer"}));
        // Short-lived: allocated and no longer in use; Parser::parse keeps all it allocated.
        QVERIFY(!s.temporaryByLifetime); // the profile does not tell lifetimes
        QCOMPARE(order(s.temporary), (std::vector<std::string>{"work", "cache_put", "tmp_buffer"}));
        QCOMPARE(valuesOf(s.temporary)["cache_put"], int64_t(15));
        const HeapSummaryRow &parse = s.leaks.front();
        QCOMPARE(parse.allocObjects, int64_t(10));
        QCOMPARE(parse.inuseObjects, int64_t(10));
        QCOMPARE(parse.stacks, size_t(1));
        QCOMPARE(parse.path, (std::vector<std::string>{"Parser::parse", "main"}));
        // The top N only.
        QCOMPARE(summarizeHeap(p, frames, memoryByStack(p), nullptr, 2).allocations.size(), size_t(2));
    }

    // If this fails, a profile that tells lifetimes (Emberline's) ranks short-lived allocations by what is no longer
    // in use rather than by what was freed within 1 ms, or counts unlabelled allocations as short-lived.
    void shortLivedByLifetime()
    {
        Profile p = allocatorProfile();
        p.comments().push_back(p.intern(kLifetimesComment));
        // tmp_buffer's 3 allocations were each freed at once; work's 100 lived longer (a row without the label).
        const Label shortLived{p.intern(kLifetimeLabel), p.intern(kShortLivedValue), 0, 0};
        std::vector<uint32_t> tmpStack(p.stacks().stack(p.sampleStackId(3)).begin(),
                                       p.stacks().stack(p.sampleStackId(3)).end());
        p.addSample(tmpStack, std::vector<int64_t>{2, 200'000, 0, 0}, std::vector<Label>{shortLived});
        QVERIFY(tellsLifetimes(p));
        QCOMPARE(shortLivedSamples(p), (std::vector<uint8_t>{0, 0, 0, 0, 1}));
        const FrameTable frames(p);
        const MemoryByStack values = memoryByStack(p);
        QVERIFY(values.lifetimes);
        const HeapSummary s = summarizeHeap(p, frames, values);
        QVERIFY(s.temporaryByLifetime);
        QCOMPARE(order(s.temporary), (std::vector<std::string>{"tmp_buffer"}));
        QCOMPARE(valuesOf(s.temporary)["tmp_buffer"], int64_t(2));
        QCOMPARE(s.temporary.front().allocObjects, int64_t(5)); // both rows of tmp_buffer's stack
        QCOMPARE(valuesOf(s.allocations)["tmp_buffer"], int64_t(5));
    }

    // A Go heap profile (underscored type names): every byte in use and every allocation lands in some function's
    // row, as the independent decoder's totals say (tests/data/pprof/MANIFEST.ndjson).
    void goHeapProfileAddsUp()
    {
        auto read = readPprofFile(EMBERLINE_TEST_DATA "/pprof/go-heap.pprof");
        QVERIFY(read.ok());
        const Profile &p = read.value();
        const FrameTable frames(p);
        const HeapSummary s = summarizeHeap(p, frames, memoryByStack(p), nullptr, 1000);
        QCOMPARE(s.inuseBytes, int64_t(50'122'684));
        QCOMPARE(s.allocObjects, int64_t(479'064));
        int64_t leaked = 0, allocated = 0;
        for (const HeapSummaryRow &row : s.leaks)
            leaked += row.value;
        for (const HeapSummaryRow &row : s.allocations)
            allocated += row.value;
        QCOMPARE(leaked, s.inuseBytes);
        QCOMPARE(allocated, s.allocObjects);
        QVERIFY(!s.leaks.front().path.empty());
        QCOMPARE(s.leaks.front().path.front(), s.leaks.front().function);
    }

    // If this fails, the Sizes list misplaces a Go heap profile's allocations: each sample's `bytes` label (its
    // blocks' size) puts its allocations in one power-of-two class. The expected sums per class are what `go tool
    // pprof -raw` prints for the same file, summed by class outside Emberline.
    void goHeapProfileSizes()
    {
        auto read = readPprofFile(EMBERLINE_TEST_DATA "/pprof/go-heap.pprof");
        QVERIFY(read.ok());
        const Profile &p = read.value();
        const MemoryByStack values = memoryByStack(p);
        QCOMPARE(values.sizes.size(), size_t(15));
        std::map<int, std::pair<int64_t, int64_t>> byClass;
        int64_t objects = 0;
        for (const SizeClassRow &row : values.sizes) {
            byClass[row.sizeClass] = {row.allocObjects, row.allocBytes};
            objects += row.allocObjects;
            QCOMPARE(row.shortLivedObjects, int64_t(0)); // Go's profiles do not tell lifetimes
        }
        QCOMPARE(objects, int64_t(479'064));
        QCOMPARE(byClass[4], std::make_pair(int64_t(159'783), int64_t(2'556'528)));  // 9 to 16 bytes
        QCOMPARE(byClass[6], std::make_pair(int64_t(252'770), int64_t(12'133'042))); // 33 to 64 bytes
        QCOMPARE(byClass[13], std::make_pair(int64_t(4'035), int64_t(26'326'418)));  // 4 KiB to 8 KiB
        QCOMPARE(byClass[19], std::make_pair(int64_t(49), int64_t(14'559'058)));     // 256 KiB to 512 KiB
        QVERIFY(!byClass.contains(10));                                              // no block of 513 to 1024 bytes
        QCOMPARE(summarizeHeap(p, FrameTable(p), values).sizes.size(), size_t(15));
    }

    // If this fails, Emberline's own size labels (a row's mean block size) or its lifetimes are not read into the
    // Sizes list: the short-lived count of a class is that class's allocations labelled short-lived.
    void sizesWithLifetimes()
    {
        Profile p = allocatorProfile(); // no size labels: no sizes
        QVERIFY(memoryByStack(p).sizes.empty());
        p.comments().push_back(p.intern(kLifetimesComment));
        const Label shortLived{p.intern(kLifetimeLabel), p.intern(kShortLivedValue), 0, 0};
        const StringId bytesKey = p.intern(kBlockBytesLabel);
        const std::vector<uint32_t> stack(p.stacks().stack(p.sampleStackId(0)).begin(),
                                          p.stacks().stack(p.sampleStackId(0)).end());
        p.addSample(stack, std::vector<int64_t>{40, 960, 0, 0}, std::vector<Label>{{bytesKey, 0, 24, 0}});
        p.addSample(stack, std::vector<int64_t>{10, 300, 0, 0}, std::vector<Label>{{bytesKey, 0, 30, 0}, shortLived});
        p.addSample(stack, std::vector<int64_t>{2, 2048, 2, 2048}, std::vector<Label>{{bytesKey, 0, 1024, 0}});
        const MemoryByStack values = memoryByStack(p);
        QCOMPARE(values.sizes.size(), size_t(2));
        QCOMPARE(int(values.sizes[0].sizeClass), 5);
        QCOMPARE(values.sizes[0].allocObjects, int64_t(50));
        QCOMPARE(values.sizes[0].allocBytes, int64_t(1'260));
        QCOMPARE(values.sizes[0].shortLivedObjects, int64_t(10));
        QCOMPARE(int(values.sizes[1].sizeClass), 10);
        QCOMPARE(values.sizes[1].allocObjects, int64_t(2));
        QCOMPARE(values.sizes[1].shortLivedObjects, int64_t(0));
    }

    void allocatorFrames()
    {
        const auto named = [](const char *name, const char *module = "") { return Frame{name, "", 0, module, true}; };
        for (const char *name :
             {"malloc", "calloc", "realloc", "operator new(unsigned long)", "operator new[](unsigned long)", "_Znwm",
              "_ZnamRKSt9nothrow_t", "malloc@@GLIBC_2.2.5", "posix_memalign", "runtime.mallocgc", "__GI___libc_malloc"})
            QVERIFY2(isAllocatorFrame(named(name)), name);
        QVERIFY(isAllocatorFrame(named("anything", "libemberline_agent.so")));
        for (const char *name : {"main", "mallocate_things", "std::vector<int>::push_back", "free_list_pop"})
            QVERIFY2(!isAllocatorFrame(named(name)), name);
    }

    // A live session's peak is the flush whose end held the most; its list holds what each function held then,
    // while the leaks are what the newest flush holds. If this fails, the peak shows the end (or a sum of flushes).
    void livePeakIsTheLargestFlush()
    {
        using test::syntheticMemoryFlush;
        LiveProfile live;
        QVERIFY(live.add(syntheticMemoryFlush(1, 1'000'000'000, {{"a", 2, 200, 2, 200}, {"b", 1, 100, 1, 100}})));
        QVERIFY(live.add(syntheticMemoryFlush(2, 2'000'000'000, {{"a", 0, 0, 1, 30}, {"c", 9, 900, 9, 900}})));
        QVERIFY(live.add(syntheticMemoryFlush(3, 3'000'000'000, {{"a", 0, 0, 1, 30}, {"d", 1, 100, 1, 100}})));
        const auto snap = live.snapshot();
        const auto peak = fullestFlush(*snap);
        QVERIFY(peak);
        QCOMPARE(peak->flushSequence, 2u);
        QCOMPARE(peak->timeNs, int64_t(3'000'000'000));
        QCOMPARE(peak->bytes, int64_t(930));
        const FrameTable frames(*snap->profile);
        const HeapSummary s = summarizeHeap(*snap->profile, frames, memoryByStack(*snap->profile), &*peak);
        QVERIFY(s.fullestFlush && s.fullestFlush->bytes == 930);
        QCOMPARE(order(s.peak), (std::vector<std::string>{"c", "a"}));
        QCOMPARE(s.peak.front().inuseBytes, int64_t(900));
        QCOMPARE(order(s.leaks), (std::vector<std::string>{"d", "a"}));
        QCOMPARE(valuesOf(s.allocations), (std::map<std::string, int64_t>{{"a", 2}, {"b", 1}, {"c", 9}, {"d", 1}}));
    }

    // If this fails, the Over time chart draws a function's history wrong: what its stacks held at the end of each
    // flush, 0 in a flush where it held nothing, two stacks blamed on one function summed, and only the flushes asked.
    void inUseOverFlushesFollowsEachFunction()
    {
        using test::syntheticMemoryFlush;
        LiveProfile live;
        QVERIFY(live.add(syntheticMemoryFlush(1, 1'000'000'000, {{"a", 2, 200, 2, 200}, {"b", 1, 100, 1, 100}})));
        QVERIFY(live.add(syntheticMemoryFlush(2, 2'000'000'000,
                                              {{"a", 0, 0, 1, 30}, {"a", 0, 0, 1, 50, 8}, {"c", 9, 900, 9, 900}})));
        QVERIFY(live.add(syntheticMemoryFlush(3, 3'000'000'000, {{"a", 0, 0, 1, 30}, {"d", 1, 100, 1, 100}})));
        const auto snap = live.snapshot();
        const FrameTable frames(*snap->profile);
        std::vector<const TimelineChunk *> flushes;
        for (const auto &chunk : snap->chunks)
            flushes.push_back(chunk.get());
        const auto series = inUseOverFlushes(*snap, frames, flushes, {"a", "c", "nowhere"});
        QCOMPARE(series.size(), size_t(3));
        QCOMPARE(series[0].function, std::string("a"));
        using Points = std::vector<std::pair<int64_t, int64_t>>;
        QCOMPARE(series[0].points, (Points{{2'000'000'000, 200}, {3'000'000'000, 80}, {4'000'000'000, 30}}));
        QCOMPARE(series[1].points, (Points{{2'000'000'000, 0}, {3'000'000'000, 900}, {4'000'000'000, 0}}));
        QCOMPARE(series[2].points, (Points{{2'000'000'000, 0}, {3'000'000'000, 0}, {4'000'000'000, 0}}));
        // The flushes of a range alone.
        const auto ranged = inUseOverFlushes(*snap, frames, {flushes[1]}, {"c"});
        QCOMPARE(ranged.front().points, (Points{{3'000'000'000, 900}}));
        QVERIFY(inUseOverFlushes(*snap, frames, flushes, {}).empty());
    }
};

QTEST_GUILESS_MAIN(TestHeapSummary)
#include "tst_heap_summary.moc"
