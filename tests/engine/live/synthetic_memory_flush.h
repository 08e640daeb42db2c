#pragma once

// Flushes of a memory session made by hand, where every number is known: the sample types of a memory session
// (cpu-samples, cpu-time, alloc-samples, alloc-space, inuse-objects, inuse-space), CPU samples on stack main→work and
// one memory sample per (thread, stack main→leaf) at the flush's end, as the recorder writes them.

#include "engine/flush/flush.h"
#include "engine/model/profile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace emberline::test {

// One memory sample of a flush: what stack main→leaf of thread `tid` allocated during the flush and held at its end.
struct MemoryRow {
    std::string leaf;
    int64_t allocObjects = 0;
    int64_t allocBytes = 0;
    int64_t inuseObjects = 0;
    int64_t inuseBytes = 0;
    int64_t tid = 7;
    int64_t blockBytes = -1; // the row's block size label (kBlockBytesLabel), when not negative
};

// A flush [startNs, startNs + 1 s) of a memory session: `cpuSamples` CPU samples of main→work on thread 7, one every
// 10 ms, then the memory rows, each timed at the flush's end.
inline std::shared_ptr<const engine::Flush> syntheticMemoryFlush(uint32_t sequence, int64_t startNs,
                                                                 const std::vector<MemoryRow> &rows, int cpuSamples = 0)
{
    using namespace engine;
    constexpr int64_t kFlushNs = 1'000'000'000;
    auto profile = std::make_shared<Profile>();
    Profile &p = *profile;
    for (const char *type : {"cpu-samples", "cpu-time", "alloc-samples", "alloc-space", "inuse-objects", "inuse-space"})
        p.sampleTypes().push_back({p.intern(type), p.intern(std::string(type).ends_with("space") ? "bytes"
                                                            : std::string(type) == "cpu-time"    ? "nanoseconds"
                                                                                                 : "count")});
    const auto location = [&](const std::string &name) {
        for (size_t l = 0; l < p.locations().size(); ++l) {
            if (p.str(p.functions()[p.locations()[l].lines[0].functionIndex].name) == name)
                return static_cast<uint32_t>(l);
        }
        Function f;
        f.id = p.functions().size() + 1;
        f.name = p.intern(name);
        p.functions().push_back(f);
        Location loc;
        loc.id = p.locations().size() + 1;
        loc.address = 0x1000 + loc.id;
        loc.lines.push_back({static_cast<uint32_t>(p.functions().size() - 1), 0, 0});
        p.locations().push_back(loc);
        return static_cast<uint32_t>(p.locations().size() - 1);
    };
    const uint32_t main = location("main");
    const StringId tidKey = p.intern("thread id"), nameKey = p.intern("thread name"),
                   timeKey = p.intern("end_timestamp_ns");
    const auto labels = [&](int64_t tid, int64_t timeNs) {
        return std::vector<Label>{
            {tidKey, 0, tid, 0}, {nameKey, p.intern("worker-" + std::to_string(tid)), 0, 0}, {timeKey, 0, timeNs, 0}};
    };
    for (int i = 0; i < cpuSamples; ++i) {
        const int64_t values[6] = {1, 10'000'000, 0, 0, 0, 0};
        const uint32_t stack[2] = {location("work"), main};
        p.addSample(stack, values, labels(7, startNs + (i + 1) * 10'000'000LL));
    }
    for (const MemoryRow &row : rows) {
        const int64_t values[6] = {0, 0, row.allocObjects, row.allocBytes, row.inuseObjects, row.inuseBytes};
        const uint32_t stack[2] = {location(row.leaf), main};
        std::vector<Label> rowLabels = labels(row.tid, startNs + kFlushNs);
        if (row.blockBytes >= 0)
            rowLabels.push_back({p.intern("bytes"), 0, row.blockBytes, p.intern("bytes")});
        p.addSample(stack, values, rowLabels);
    }
    auto flush = std::make_shared<Flush>();
    flush->sequence = sequence;
    flush->startNs = startNs;
    flush->endNs = startNs + kFlushNs;
    flush->profile = std::move(profile);
    flush->samples = static_cast<uint64_t>(cpuSamples);
    return flush;
}

// Three flushes of one story, told by the live aggregate's and the live stage's tests. Flush 1 (1–2 s): a holds
// 200 B, b 100 B. Flush 2 (2–3 s): a freed most (30 B left), b freed all, c took 300 B. Flush 3 (3–4 s): c freed, d
// took 1000 B. Ten CPU samples each.
inline std::shared_ptr<const engine::Flush> heapStoryFlush(int n)
{
    constexpr int64_t kSecond = 1'000'000'000;
    switch (n) {
    case 1:
        return syntheticMemoryFlush(1, 1 * kSecond, {{"a", 2, 200, 2, 200}, {"b", 1, 100, 1, 100}}, 10);
    case 2:
        return syntheticMemoryFlush(2, 2 * kSecond, {{"a", 1, 50, 1, 30}, {"c", 3, 300, 3, 300}}, 10);
    default:
        return syntheticMemoryFlush(3, 3 * kSecond, {{"a", 0, 0, 1, 30}, {"d", 1, 1000, 1, 1000}}, 10);
    }
}

} // namespace emberline::test
