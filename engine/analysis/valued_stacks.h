#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace emberline::engine {

// Stacks walked between two looks at a cancel flag: a cancelled walk of a million stacks stops within milliseconds,
// and the look costs nothing next to the walk.
inline constexpr size_t kStacksPerCancelCheck = 0x4000;

// The walk every derived view makes over a profile's values per stack (call trees, function and line tables,
// sandwiches, disassembly): f(stackId, value) for each stack whose value is not 0, in id order. `cancel` (may be
// null) is read before each run of kStacksPerCancelCheck stacks; false when it was set (f may have seen some stacks),
// true once every stack was seen. A template, so that f is inlined into the loop, the hot loop of building a call
// tree: the inner loop has no cancel test at all.
template <class F>
inline bool forEachValuedStack(std::span<const int64_t> perStack, const std::atomic<bool> *cancel, F &&f)
{
    const size_t count = perStack.size();
    for (size_t start = 0; start < count; start += kStacksPerCancelCheck) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return false;
        // Stack ids are 32-bit, as everywhere else.
        const auto end =
            static_cast<uint32_t>(count - start > kStacksPerCancelCheck ? start + kStacksPerCancelCheck : count);
        for (auto s = static_cast<uint32_t>(start); s < end; ++s) {
            if (const int64_t v = perStack[s]; v != 0)
                f(s, v);
        }
    }
    return true;
}

// The same walk where nothing can cancel it.
template <class F> inline void forEachValuedStack(std::span<const int64_t> perStack, F &&f)
{
    for (size_t s = 0; s < perStack.size(); ++s) {
        if (const int64_t v = perStack[s]; v != 0)
            f(static_cast<uint32_t>(s), v);
    }
}

} // namespace emberline::engine
