#include "engine/model/sample_kinds.h"

#include <array>

namespace emberline::engine {

bool isSnapshotSampleType(std::string_view type)
{
    static constexpr std::array<std::string_view, 4> kSnapshots{"inuse-objects", "inuse-space", "inuse_objects",
                                                                "inuse_space"};
    for (std::string_view name : kSnapshots) {
        if (type == name)
            return true;
    }
    return false;
}

bool isMemorySampleType(std::string_view type)
{
    static constexpr std::array<std::string_view, 4> kAllocations{"alloc-samples", "alloc-space", "alloc_objects",
                                                                  "alloc_space"};
    for (std::string_view name : kAllocations) {
        if (type == name)
            return true;
    }
    return isSnapshotSampleType(type);
}

} // namespace emberline::engine
