#pragma once

// Hand-made profiles over the real tests/targets/hot_loop binary for the disassembly tests: the addresses of
// spin and main are read from the binary with plain libelf, so that a bug in the engine cannot hide in them.

#include "../symbols/elf_test_image.h"
#include "../test_support.h"
#include "engine/annotate/disassembly.h"

namespace emberline::test {

inline const std::string kHotLoop = HOT_LOOP_BINARY;
inline const std::string kOther = OTHER_BINARY;
inline constexpr uint64_t kBase = 0x555555550000ull; // where the profile says the file was mapped (offset 0)

// A profile of two stacks through hot_loop's code: spin (leaf, 5) called from main, and main alone (3).
struct HotLoopProfile {
    engine::Profile profile;
    uint64_t spinAddress = 0; // link-time
    uint64_t mainAddress = 0;
};

inline HotLoopProfile hotLoopProfile(const std::string &path, const std::string &buildId)
{
    const auto image = ElfTestImage::fromFile(kHotLoop);
    HotLoopProfile out;
    if (!image || !image->address("spin") || !image->address("main"))
        return out;
    out.spinAddress = *image->address("spin");
    out.mainAddress = *image->address("main");
    ProfileBuilder b({{"cpu-samples", "count"}});
    const uint32_t spin = b.function("spin", "hot_loop.c");
    const uint32_t main = b.function("main", "hot_loop.c");
    const uint32_t mapping = b.mapping(path, kBase, kBase + 0x100000, 0);
    b.profile().mappings()[mapping].buildId = b.profile().intern(buildId);
    const uint32_t inSpin = b.location({spin}, mapping, kBase + *image->symbolFileOffset("spin"));
    const uint32_t inMain = b.location({main}, mapping, kBase + *image->symbolFileOffset("main"));
    b.sample({inSpin, inMain}, {5});
    b.sample({inMain}, {3});
    out.profile = b.take();
    return out;
}

inline std::vector<int64_t> perStack(const engine::Profile &p)
{
    std::vector<int64_t> values(p.stacks().size(), 0);
    for (size_t i = 0; i < p.sampleCount(); ++i)
        values[p.sampleStackId(i)] += p.sampleValues(i)[0];
    return values;
}

inline engine::DisassemblyRequest request(const std::string &name, std::vector<std::string> debugDirectories = {})
{
    engine::DisassemblyRequest r;
    r.matches = [name](const std::string &n) { return n == name; };
    r.debugDirectories = std::move(debugDirectories);
    r.useDebuginfod = false;
    return r;
}

} // namespace emberline::test
