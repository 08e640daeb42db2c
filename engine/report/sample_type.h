#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <string>

namespace emberline::engine {

// The index of the sample type a report shows: the named one, or the profile's default when `name` is empty.
// An unknown name is an error that lists the profile's sample types.
Result<int> resolveSampleType(const Profile &profile, const std::string &name);

} // namespace emberline::engine
