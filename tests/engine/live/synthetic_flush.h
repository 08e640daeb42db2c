#pragma once

// Flushes made by hand, where every number is known, for the tests of the live accumulator and the live views.

#include "engine/model/profile.h"
#include "engine/export/flush.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace emberline::test {

// A flush of `n` samples on thread `tid`, one every 10 ms from `startNs`, alternating two stacks (a→b, a→c).
inline std::shared_ptr<const engine::Flush> syntheticFlush(uint32_t sequence, int64_t startNs, int n, int64_t tid)
{
    using namespace engine;
    auto p = std::make_shared<Profile>();
    p->sampleTypes().push_back({p->intern("cpu-samples"), p->intern("count")});
    p->sampleTypes().push_back({p->intern("cpu-time"), p->intern("nanoseconds")});
    for (const char *name : {"a", "b", "c"}) {
        Function f;
        f.id = p->functions().size() + 1;
        f.name = p->intern(name);
        p->functions().push_back(f);
        Location loc;
        loc.id = p->locations().size() + 1;
        loc.address = 0x1000 + loc.id;
        loc.lines.push_back({static_cast<uint32_t>(p->functions().size() - 1), 0, 0});
        p->locations().push_back(loc);
    }
    const StringId tidKey = p->intern("thread id"), nameKey = p->intern("thread name");
    const StringId timeKey = p->intern("end_timestamp_ns"), threadName = p->intern("worker-" + std::to_string(tid));
    for (int i = 0; i < n; ++i) {
        const std::vector<uint32_t> stack = i % 2 ? std::vector<uint32_t>{1, 0} : std::vector<uint32_t>{2, 0};
        const int64_t values[2] = {1, 10'000'000};
        const Label labels[3] = {{tidKey, 0, tid, 0}, {nameKey, threadName, 0, 0},
                                 {timeKey, 0, startNs + (i + 1) * 10'000'000LL, 0}};
        p->addSample(stack, values, labels);
    }
    auto flush = std::make_shared<Flush>();
    flush->sequence = sequence;
    flush->startNs = startNs;
    flush->endNs = startNs + n * 10'000'000LL;
    flush->profile = p;
    flush->samples = sequence * static_cast<uint64_t>(n);
    return flush;
}

// A flush on thread `tid` whose samples, one every 10 ms from `startNs`, are `count` of stack main→leaf for each
// (leaf, count) in turn: a program whose hot function is known flush by flush.
inline std::shared_ptr<const engine::Flush> syntheticLeafFlush(uint32_t sequence, int64_t startNs, int64_t tid,
                                                               const std::vector<std::pair<std::string, int>> &leaves)
{
    using namespace engine;
    auto p = std::make_shared<Profile>();
    p->sampleTypes().push_back({p->intern("cpu-samples"), p->intern("count")});
    p->sampleTypes().push_back({p->intern("cpu-time"), p->intern("nanoseconds")});
    std::vector<std::string> names{"main"};
    for (const auto &leaf : leaves)
        names.push_back(leaf.first);
    for (const std::string &name : names) {
        Function f;
        f.id = p->functions().size() + 1;
        f.name = p->intern(name);
        p->functions().push_back(f);
        Location loc;
        loc.id = p->locations().size() + 1;
        loc.address = 0x2000 + loc.id;
        loc.lines.push_back({static_cast<uint32_t>(p->functions().size() - 1), 0, 0});
        p->locations().push_back(loc);
    }
    const StringId tidKey = p->intern("thread id"), nameKey = p->intern("thread name");
    const StringId timeKey = p->intern("end_timestamp_ns"), threadName = p->intern("worker-" + std::to_string(tid));
    int n = 0;
    for (size_t l = 0; l < leaves.size(); ++l) {
        const std::vector<uint32_t> stack{static_cast<uint32_t>(l + 1), 0};
        for (int i = 0; i < leaves[l].second; ++i, ++n) {
            const int64_t values[2] = {1, 10'000'000};
            const Label labels[3] = {{tidKey, 0, tid, 0}, {nameKey, threadName, 0, 0},
                                     {timeKey, 0, startNs + (n + 1) * 10'000'000LL, 0}};
            p->addSample(stack, values, labels);
        }
    }
    auto flush = std::make_shared<Flush>();
    flush->sequence = sequence;
    flush->startNs = startNs;
    flush->endNs = startNs + n * 10'000'000LL;
    flush->profile = p;
    flush->samples = static_cast<uint64_t>(n);
    return flush;
}

} // namespace emberline::test
