#include "engine/analysis/inverted_profile.h"

#include <algorithm>
#include <vector>

namespace emberline::engine {
namespace {

// Per location, the location to use in a reversed stack: itself, or a copy with its lines reversed.
std::vector<uint32_t> reversedLocations(Profile &out)
{
    uint64_t nextId = 1;
    for (const Location &loc : out.locations())
        nextId = std::max(nextId, loc.id + 1);
    const size_t count = out.locations().size();
    std::vector<uint32_t> map(count);
    for (size_t i = 0; i < count; ++i) {
        map[i] = static_cast<uint32_t>(i);
        if (out.locations()[i].lines.size() < 2)
            continue;
        Location copy = out.locations()[i];
        copy.id = nextId++;
        std::reverse(copy.lines.begin(), copy.lines.end());
        map[i] = static_cast<uint32_t>(out.locations().size());
        out.locations().push_back(std::move(copy));
    }
    return map;
}

} // namespace

Result<Profile> invertStacks(const Profile &profile, const std::atomic<bool> *cancel)
{
    Profile out = profile.withoutSamples();
    const std::vector<uint32_t> reversed = reversedLocations(out);
    std::vector<uint32_t> stackMap(profile.stacks().size(), kNoIndex);
    std::vector<uint32_t> frames;
    out.reserveSamples(profile.sampleCount());
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        if ((i & 0xFFFF) == 0 && cancel && cancel->load(std::memory_order_relaxed))
            return makeError(Error::Code::Cancelled, "cancelled");
        const uint32_t stack = profile.sampleStackId(i);
        if (stackMap[stack] == kNoIndex) {
            const std::span<const uint32_t> locations = profile.stacks().stack(stack);
            frames.clear();
            for (auto it = locations.rbegin(); it != locations.rend(); ++it)
                frames.push_back(reversed[*it]);
            stackMap[stack] = out.internStack(frames);
        }
        out.addSampleWithStack(stackMap[stack], profile.sampleValues(i), profile.sampleLabels(i));
    }
    return out;
}

} // namespace emberline::engine
