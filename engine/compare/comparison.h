#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/heatmap.h"
#include "engine/common/result.h"
#include "engine/compare/diff_tree.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace emberline::engine {

// One side of a comparison as derived: its values per stack (of its profile's stacks; a shorter list means
// zeros after it) and the call tree over them, with their total.
struct ComparisonSide {
    std::shared_ptr<const std::vector<int64_t>> perStack;
    std::shared_ptr<const CallTree> tree;
    int64_t total = 0;
};

// What a compare view asks for: two loaded profiles, a sample type both have (by name; empty: the shared
// default), normalization, and the threads of the new profile to show (the base's threads of the same names are
// shown beside them).
struct ComparisonRequest {
    std::shared_ptr<const LoadedProfile> next;
    std::shared_ptr<const LoadedProfile> base;
    std::string sampleType;
    bool normalize = false;
    std::vector<uint32_t> newThreads; // ThreadIndex ordinals of `next`; empty: every thread
    // Time ranges of each side, [startNs, endNs) by the samples' end_timestamp_ns: two ranges of one profile
    // compared (nullopt: every sample of that side).
    std::optional<TimeRange> newRange;
    std::optional<TimeRange> baseRange;
    // Sides already derived by the caller for this sample type and these threads (a live session's flushes,
    // each derived once): used as they are, instead of being derived from `next` and `base`. A given base side is
    // not used when normalizing (its values would need scaling).
    std::shared_ptr<const ComparisonSide> nextSide;
    std::shared_ptr<const ComparisonSide> baseSide;
    // The widths the view draws: made with the differential tree (the others are made when first asked for).
    DiffTree::Widths widths = DiffTree::Widths::New;
    // Only the totals and the per-function table (`emberline report --base`): the sides' function tables are
    // summed from their values per stack, and neither call trees, the differential tree (`tree` stays null) nor the
    // frames' display names are made.
    bool functionsOnly = false;
};

// One function's values on both sides, by its id in the comparison's frame table. Functions are matched as the
// views group frames: by name (a name the FrameTable merges across files is one function).
struct DiffFunction {
    uint32_t frame = 0;
    int64_t baseSelf = 0;
    int64_t baseTotal = 0;
    int64_t newSelf = 0;
    int64_t newTotal = 0;
    int64_t selfChange() const { return newSelf - baseSelf; }
    int64_t totalChange() const { return newTotal - baseTotal; }
};

// Everything a compare view shows for one request: the differential tree, the per-function table, the values
// per stack the caller/callee view reads, and what the user must be told about the two inputs (the same file,
// an empty side, a base far larger than the new). Values of the base are scaled when normalized.
//
// Thread: built on a worker; immutable afterwards, shared with the GUI thread.
struct Comparison {
    ComparisonRequest request;
    std::string sampleType;
    std::string unit;
    int newTypeIndex = -1;
    int baseTypeIndex = -1;
    int64_t newTotal = 0;
    int64_t baseTotal = 0;    // after scaling
    int64_t baseRawTotal = 0; // before scaling
    double baseScale = 1.0;
    bool sameFile = false;
    std::shared_ptr<const FrameTable> frames; // the new profile's frames (same ids), then the base's others
    std::vector<uint32_t> baseToUnion;        // base frame id -> id in `frames`
    std::shared_ptr<const std::vector<QString>> frameNames; // frameDisplayNames(frames) to draw; null: functionsOnly
    std::shared_ptr<const std::vector<int64_t>> newPerStack;
    std::shared_ptr<const std::vector<int64_t>> basePerStack; // scaled
    std::shared_ptr<const DiffTree> tree;                     // null with functionsOnly
    // Every function with a value on either side, by the size of the self change, then of the total change, then
    // by name (as `go tool pprof -diff_base=BASE -top NEW` orders them; `report --base` prints those that changed).
    std::vector<DiffFunction> functions;
    std::vector<std::string> notices;
};

// Builds the comparison; the two sides are derived in parallel. An error when the profiles share no sample type
// (naming both sets) or when cancelled (Error::Code::Cancelled). With normalize, each base sample's value is scaled
// by newTotal / baseTotal (truncated, as pprof scales values); a base whose total is 0 is left as it is (a notice
// says so).
Result<std::shared_ptr<const Comparison>> compareProfiles(const ComparisonRequest &request,
                                                          const std::atomic<bool> *cancel = nullptr);

// The sample type both profiles have (type and unit), as indices into next's and base's sample types: the named one,
// or the new profile's default when the base has it, else the first both have. An error names both profiles'
// sample types when they share none or not the named one.
Result<std::pair<int, int>> sharedSampleType(const Profile &next, const Profile &base, const std::string &name);

// The sample types of `next` that `base` also has (type and unit), as indices into next's sample types.
std::vector<int> sharedSampleTypes(const Profile &next, const Profile &base);

// The base's notable size next to the new one: its total is this many times the new total or more.
constexpr double kBaseFarLargerRatio = 4.0;

// Callers and callees of one function on both sides of a comparison, by frame id in the comparison's table.
struct DiffCallerCallee {
    struct Edge {
        uint32_t frame = 0;
        int64_t base = 0;
        int64_t next = 0;
    };
    uint32_t frame = 0;
    int64_t baseSelf = 0;
    int64_t baseTotal = 0;
    int64_t newSelf = 0;
    int64_t newTotal = 0;
    std::vector<Edge> callers; // largest change first
    std::vector<Edge> callees;
};

DiffCallerCallee diffCallerCallee(const Comparison &comparison, uint32_t frame);

} // namespace emberline::engine
