#pragma once

#include "engine/analysis/call_tree.h"
#include "engine/model/frame_table.h"
#include "engine/model/profile.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>

namespace emberline::engine {

// The sandwich of one function, as speedscope draws it: its callers and its callees, both rooted at the
// function. Every sample through the function counts once, from the function's outermost call on its stack:
// `callees` is the stack from there to the leaf, `callers` the stack from there to the root, reversed (its
// first level under the function is the direct caller). Node 0 of each tree is the sum; its only child is the
// function, whose total is the function's total.
struct Sandwich {
    uint32_t frame = kNoIndex;
    CallTree callers;
    CallTree callees;
    int64_t total = 0; // the function's total: the value of the samples with it on their stack
    int64_t self = 0;  // the value of the samples with it as their leaf
};

// Thread: built on a worker from an immutable Profile; returns nullopt when `cancel` rises.
std::optional<Sandwich> buildSandwich(const Profile &profile, const FrameTable &frames,
                                      std::span<const int64_t> perStack, uint32_t frame,
                                      const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
