#pragma once

#include "engine/model/profile.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

// One source line of a function: `self` counts the samples whose leaf is this line, `total` counts each sample
// once when the line is anywhere on its stack (a recursive call line is not counted twice).
struct LineCost {
    int64_t line = 0;
    int64_t self = 0;
    int64_t total = 0;
};

// A function (by name and source file, as `go tool pprof -list` groups its routines) with its lines' costs.
// `total` counts each sample once, even when several of the function's lines are on its stack.
struct FunctionLines {
    std::string name;
    std::string file;
    int64_t startLine = 0;
    int64_t self = 0;
    int64_t total = 0;
    std::vector<LineCost> lines; // ascending by line, only lines with a cost
};

// Per-line costs of the functions whose names a predicate accepts, for one sample type, as `go tool pprof
// -list` computes them: every line of a location is a frame of its own (inlined functions have their own
// lines), the leaf line takes the self value, and a line's total counts a sample once.
//
// Thread: built on any thread from an immutable Profile; the result is a plain value.
class LineTable {
public:
    using NameMatcher = std::function<bool(const std::string &name)>;

    // `perStack` is one value per interned stack (valuesPerStack, so a thread or time selection applies).
    // Functions come ordered by name, then file. Returns nullopt when `cancel` is raised.
    static std::optional<std::vector<FunctionLines>> build(const Profile &profile, std::span<const int64_t> perStack,
                                                           const NameMatcher &matches,
                                                           const std::atomic<bool> *cancel = nullptr);
};

} // namespace emberline::engine
