#pragma once

#include "engine/analysis/call_tree.h"
#include "engine/common/result.h"
#include "engine/model/frame_table.h"
#include "engine/model/profile.h"

#include <atomic>
#include <optional>
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
// - HideInterpreter: no pattern; the Python interpreter's own frames that a recording kept (isInterpreterFunction:
//   the eval loop and what passes calls on between its frames) go as Hide's do, which leaves the stacks a recording
//   without them gives. The views put it first in a chain while View > Python Interpreter Frames is off.
struct Transform {
    enum class Kind { Focus, Ignore, Hide, CollapseRecursion, MergeIntoCaller, HideInterpreter };
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

// The call tree that CallTree::build would give for the transformed profile, made from `tree` (a call tree of
// `profile` over `frames`) in one pass over its nodes instead of a walk of every transformed stack: Focus and
// Ignore keep or drop each node's self value by the frames on its path, Hide and MergeIntoCaller give a matching
// node's children and self value to its nearest kept ancestor, merging what meets there. Frame ids stay those of
// `frames`. A frame is matched or not as a whole, so the result is exact only where every instance of a frame
// (each line of each location it stands for) matches a step alike: when some frame mixes (a regular expression
// that matches the file of one function of that name but not of another, or a mapping's file), for
// CollapseRecursion, and for a pattern that does not compile, it returns nullopt and the caller builds the tree
// from the transformed profile. Also nullopt when cancelled.
//
// Thread: any; reads immutable inputs.
std::optional<CallTree> transformCallTree(const Profile &profile, const FrameTable &frames, const CallTree &tree,
                                          std::span<const Transform> chain, const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
