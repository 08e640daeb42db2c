#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <atomic>

namespace emberline::engine {

// The same samples with every stack turned upside down: the leaf becomes the root, so that a call tree built
// from it is the bottom-up (inverted) tree, whose first level is each function's self cost. A location with
// inlined lines gets a copy with its lines reversed too, so the frames of the whole stack are reversed, not
// only its locations. Returns a Cancelled error when `cancel` rises.
//
// Thread: any; reads an immutable Profile.
Result<Profile> invertStacks(const Profile &profile, const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
