#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <string>

namespace emberline::engine {

// `emberline report --format folded`: Brendan Gregg's collapsed stacks, `root;...;leaf VALUE`, one line per
// distinct stack of frame names (inlined frames are frames of their own), outermost frame first, with the sum of
// one sample type (empty: the profile's default). Lines come sorted, as stackcollapse scripts write them;
// stacks whose sum is zero are left out. A ';' inside a frame name would split the frame, so it is written ':'.
Result<std::string> writeFoldedStacks(const Profile &profile, const std::string &sampleType);

} // namespace emberline::engine
