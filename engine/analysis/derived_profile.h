#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/transforms.h"
#include "engine/common/result.h"

#include <atomic>
#include <memory>
#include <vector>

namespace emberline::engine {

// How a view shows a loaded profile: through a transform chain, and upside down (bottom-up) or not.
struct ProfileShape {
    std::vector<Transform> transforms;
    bool inverted = false;
    bool isIdentity() const { return transforms.empty() && !inverted; }
};

// The loaded profile a view draws: `source` itself when the shape changes nothing, else a LoadedProfile of the
// transformed (then inverted) samples with its own frame table and names, whose `original` is `source`. Its
// thread index keeps `source`'s thread ordinals, so a thread filter chosen on the source applies to it; sample
// timestamps travel with the samples' labels, so a time range does too.
// A live session's time range (`sampleWeights`) carries over: each kept sample keeps its weight, and the totals are
// those of the kept samples within the range.
// Errors: a transform's regular expression, a chain that leaves no sample, or none within the time range (both
// named), Cancelled.
//
// Thread: any but the GUI's; reads the immutable source.
Result<std::shared_ptr<const LoadedProfile>> deriveProfile(const std::shared_ptr<const LoadedProfile> &source,
                                                           const ProfileShape &shape,
                                                           const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
