#include "engine/report/folded_writer.h"

#include "engine/analysis/valued_stacks.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "engine/report/sample_type.h"

#include <algorithm>
#include <map>

namespace emberline::engine {

Result<std::string> writeFoldedStacks(const Profile &profile, const std::string &sampleType)
{
    auto typeIndex = resolveSampleType(profile, sampleType);
    if (!typeIndex)
        return typeIndex.error();
    const FrameTable frames(profile);
    std::vector<std::string> names;
    names.reserve(frames.size());
    for (uint32_t f = 0; f < frames.size(); ++f) {
        std::string name = frames.frame(f).name;
        std::replace(name.begin(), name.end(), ';', ':');
        std::replace(name.begin(), name.end(), '\n', ' ');
        names.push_back(std::move(name));
    }
    const std::vector<int64_t> perStack = valuesPerStack(profile, typeIndex.value(), {});
    // Distinct location stacks can read the same once expanded to names (two addresses of one function).
    std::map<std::string, int64_t> lines;
    std::vector<uint32_t> path;
    forEachValuedStack(perStack, [&](uint32_t s, int64_t v) {
        path.clear();
        frames.expandRootFirst(profile.stacks().stack(s), path);
        if (path.empty())
            return;
        std::string key;
        for (uint32_t f : path)
            key += (key.empty() ? "" : ";") + names[f];
        lines[key] += v;
    });
    std::string out;
    for (const auto &[stack, value] : lines) {
        if (value != 0)
            out += stack + " " + std::to_string(value) + "\n";
    }
    return out;
}

} // namespace emberline::engine
