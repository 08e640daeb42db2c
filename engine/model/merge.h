#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <span>

namespace emberline::engine {

// Merges profiles of the same sample types (type and unit, in the same order) into one: identical functions,
// mappings and locations are shared, samples are appended with their labels, and the time span covers all
// inputs. Used to build a session's whole profile from its flushes and to open several files as one.
Result<Profile> mergeProfiles(std::span<const Profile *const> profiles);

} // namespace emberline::engine
