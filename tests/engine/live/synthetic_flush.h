#pragma once

// Flushes made by hand, where every number is known, for the tests of the live accumulator and the live views.

#include "engine/flush/flush.h"
#include "engine/model/profile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace emberline::test {

namespace detail {

// A flush's profile with two sample types (cpu-samples, cpu-time) and one function and location per name, in
// order (location i calls function i), and a function that adds a sample of thread `tid` at `timeNs`.
struct SyntheticProfile {
    std::shared_ptr<engine::Profile> profile = std::make_shared<engine::Profile>();
    engine::StringId tidKey = 0, nameKey = 0, timeKey = 0, threadName = 0;

    SyntheticProfile(const std::vector<std::string> &names, uint64_t firstAddress, int64_t tid)
    {
        using namespace engine;
        Profile &p = *profile;
        p.sampleTypes().push_back({p.intern("cpu-samples"), p.intern("count")});
        p.sampleTypes().push_back({p.intern("cpu-time"), p.intern("nanoseconds")});
        for (const std::string &name : names) {
            Function f;
            f.id = p.functions().size() + 1;
            f.name = p.intern(name);
            p.functions().push_back(f);
            Location loc;
            loc.id = p.locations().size() + 1;
            loc.address = firstAddress + loc.id;
            loc.lines.push_back({static_cast<uint32_t>(p.functions().size() - 1), 0, 0});
            p.locations().push_back(loc);
        }
        tidKey = p.intern("thread id");
        nameKey = p.intern("thread name");
        timeKey = p.intern("end_timestamp_ns");
        threadName = p.intern("worker-" + std::to_string(tid));
    }
    void addSample(const std::vector<uint32_t> &stack, int64_t tid, int64_t timeNs)
    {
        const int64_t values[2] = {1, 10'000'000};
        const engine::Label labels[3] = {{tidKey, 0, tid, 0}, {nameKey, threadName, 0, 0}, {timeKey, 0, timeNs, 0}};
        profile->addSample(stack, values, labels);
    }
    std::shared_ptr<const engine::Flush> flush(uint32_t sequence, int64_t startNs, int n, uint64_t samples) const
    {
        auto flush = std::make_shared<engine::Flush>();
        flush->sequence = sequence;
        flush->startNs = startNs;
        flush->endNs = startNs + n * 10'000'000LL;
        flush->profile = profile;
        flush->samples = samples;
        return flush;
    }
};

} // namespace detail

// A flush of `n` samples on thread `tid`, one every 10 ms from `startNs`, alternating two stacks (a→b, a→c).
inline std::shared_ptr<const engine::Flush> syntheticFlush(uint32_t sequence, int64_t startNs, int n, int64_t tid)
{
    detail::SyntheticProfile p({"a", "b", "c"}, 0x1000, tid);
    for (int i = 0; i < n; ++i)
        p.addSample(i % 2 ? std::vector<uint32_t>{1, 0} : std::vector<uint32_t>{2, 0}, tid,
                    startNs + (i + 1) * 10'000'000LL);
    return p.flush(sequence, startNs, n, sequence * static_cast<uint64_t>(n));
}

// A flush on thread `tid` whose samples, one every 10 ms from `startNs`, are `count` of stack main→leaf for each
// (leaf, count) in turn: a program whose hot function is known flush by flush.
inline std::shared_ptr<const engine::Flush> syntheticLeafFlush(uint32_t sequence, int64_t startNs, int64_t tid,
                                                               const std::vector<std::pair<std::string, int>> &leaves)
{
    std::vector<std::string> names{"main"};
    for (const auto &leaf : leaves)
        names.push_back(leaf.first);
    detail::SyntheticProfile p(names, 0x2000, tid);
    int n = 0;
    for (size_t l = 0; l < leaves.size(); ++l) {
        for (int i = 0; i < leaves[l].second; ++i, ++n)
            p.addSample({static_cast<uint32_t>(l + 1), 0}, tid, startNs + (n + 1) * 10'000'000LL);
    }
    return p.flush(sequence, startNs, n, static_cast<uint64_t>(n));
}

} // namespace emberline::test
