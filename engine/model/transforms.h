#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <atomic>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

// One step of a transform chain, with pprof's meaning for the first three (a frame matches when the regular
// expression matches its function's name or source file, or its mapping's file, anywhere in the string):
// - Focus: keeps the samples with a matching frame.
// - Ignore: drops the samples with a matching frame.
// - Hide: removes the matching frames from the stacks; their cost goes to their caller. A sample left with no
//   frame is dropped, as pprof drops it.
// - CollapseRecursion: `pattern` is a function name; from the outermost call of it to the innermost, the frames
//   in between go (direct and indirect recursion become one call). The innermost call stays, so its lines keep
//   their self cost.
// - MergeIntoCaller: `pattern` is a function name; its frames go and its cost goes to its caller.
struct Transform {
    enum class Kind { Focus, Ignore, Hide, CollapseRecursion, MergeIntoCaller };
    Kind kind = Kind::Focus;
    std::string pattern;

    // "focus 'REGEX'", "merge 'name' into caller": what a chain shows and an error names.
    std::string describe() const;
};

// Applies `chain` in order to a profile and returns the transformed profile: the same tables (plus a location for
// each location some of whose inlined frames were removed), each sample with its transformed stack, or left
// out. Every step is a function of a sample's stack alone, so each distinct stack is transformed once.
// Errors: a regular expression that does not compile (named), and a chain that leaves no sample of a profile
// that had some (the chain is named in the message). Returns a Cancelled error when `cancel` rises.
//
// Samples keep their order; `sourceSamples`, when given, receives each kept sample's index in `profile` (so that
// per-sample data such as a time range's weights can follow them).
//
// Thread: any; reads an immutable Profile.
Result<Profile> applyTransforms(const Profile &profile, std::span<const Transform> chain,
                                const std::atomic<bool> *cancel = nullptr,
                                std::vector<uint32_t> *sourceSamples = nullptr);

} // namespace emberline::engine
