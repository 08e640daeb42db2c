#pragma once

#include "engine/analysis/analysis.h"
#include "engine/model/profile.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace emberline::ui::test {

// A small profile with known values (one sample type, cpu/nanoseconds):
//   main→a→b 30, main→a 10, main→c 40, main→c→b 20   (total 100)
// so that the call tree is  main 100 { a 40 (self 10) { b 30 }, c 60 (self 40) { b 20 } }.
// With threads, the first two samples carry thread "worker" (tid 7) and the others "io" (tid 9).
inline engine::Profile makeSmallProfile(bool withThreads = false)
{
    engine::Profile p;
    p.sampleTypes().push_back({p.intern("cpu"), p.intern("nanoseconds")});
    const std::vector<std::string> names = {"main", "a", "b", "c"};
    for (size_t i = 0; i < names.size(); ++i) {
        engine::Function f;
        f.id = i + 1;
        f.name = p.intern(names[i]);
        f.filename = p.intern("/src/" + names[i] + ".cc");
        f.startLine = 10 * static_cast<int64_t>(i + 1);
        p.functions().push_back(f);
        engine::Location loc;
        loc.id = i + 1;
        loc.address = 0x1000 + i;
        loc.lines.push_back({static_cast<uint32_t>(i), 0, 0});
        p.locations().push_back(loc);
    }
    enum : uint32_t { Main, A, B, C };
    const engine::StringId tidKey = p.intern("thread id");
    const engine::StringId nameKey = p.intern("thread name");
    const auto add = [&](std::vector<uint32_t> stack, int64_t value, int thread) {
        std::vector<engine::Label> labels;
        if (withThreads) {
            labels.push_back({tidKey, 0, thread == 0 ? 7 : 9, 0});
            labels.push_back({nameKey, p.intern(thread == 0 ? "worker" : "io"), 0, 0});
        }
        const int64_t values[] = {value};
        p.addSample(stack, values, labels);
    };
    add({B, A, Main}, 30, 0);
    add({A, Main}, 10, 0);
    add({C, Main}, 40, 1);
    add({B, C, Main}, 20, 1);
    p.durationNanos = 1'000'000'000;
    return p;
}

// A profile of name paths (root first) with their values, one sample type cpu/nanoseconds, one function and one
// location a name.
inline engine::Profile profileOfPaths(const std::vector<std::pair<std::vector<std::string>, int64_t>> &stacks)
{
    engine::Profile p;
    p.sampleTypes().push_back({p.intern("cpu"), p.intern("nanoseconds")});
    std::map<std::string, uint32_t> location;
    for (const auto &[names, value] : stacks) {
        std::vector<uint32_t> ids;
        for (auto it = names.rbegin(); it != names.rend(); ++it) { // leaf first
            auto [at, inserted] = location.try_emplace(*it, static_cast<uint32_t>(p.locations().size()));
            if (inserted) {
                engine::Function f;
                f.id = p.functions().size() + 1;
                f.name = p.intern(*it);
                p.functions().push_back(f);
                engine::Location loc;
                loc.id = p.locations().size() + 1;
                loc.lines.push_back({static_cast<uint32_t>(p.functions().size() - 1), 0, 0});
                p.locations().push_back(loc);
            }
            ids.push_back(at->second);
        }
        const int64_t values[] = {value};
        p.addSample(ids, values, {});
    }
    return p;
}

// `profile` with the frame table, thread index and totals a comparison needs (no path, no frame display names).
inline std::shared_ptr<const engine::LoadedProfile> loadedFrom(engine::Profile profile)
{
    auto l = std::make_shared<engine::LoadedProfile>();
    l->profile = std::make_shared<const engine::Profile>(std::move(profile));
    l->frames = std::make_shared<const engine::FrameTable>(*l->profile);
    l->threads = std::make_shared<const engine::ThreadIndex>(*l->profile);
    l->totals = l->profile->totals();
    return l;
}

} // namespace emberline::ui::test
