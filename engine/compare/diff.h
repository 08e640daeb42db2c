#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace emberline::engine {

// How two profiles are compared: which sample type (empty: the new profile's default, which the base must also
// have) and whether the base is scaled so that its total equals the new one's.
struct DiffOptions {
    std::string sampleType;
    bool normalize = false;
};

// One function's cost in the base and in the new profile, for one sample type. Functions are matched as the
// views group frames: by name (a name the FrameTable merges across files is one function), the file kept for
// display.
struct FunctionDelta {
    std::string name;
    std::string file;
    int64_t baseSelf = 0;
    int64_t baseTotal = 0;
    int64_t newSelf = 0;
    int64_t newTotal = 0;
    int64_t selfChange() const { return newSelf - baseSelf; }
    int64_t totalChange() const { return newTotal - baseTotal; }
};

// The difference of two profiles per function: new minus base, as `go tool pprof -diff_base=BASE -top NEW`
// reports it. Functions are ordered by the size of the self change, then of the total change, then by name.
struct FunctionDiff {
    std::string sampleType;
    std::string unit;
    int newTypeIndex = -1;
    int baseTypeIndex = -1;
    int64_t newTotal = 0;
    int64_t baseTotal = 0;      // after scaling
    int64_t baseRawTotal = 0;   // before scaling
    double baseScale = 1.0;     // what each base value was multiplied by (normalize), 1 otherwise
    std::vector<FunctionDelta> functions;
};

// The sample type both profiles have (type and unit): the named one, or the new profile's default. An error
// names both profiles' sample types when they share none or not the named one.
Result<std::pair<int, int>> sharedSampleType(const Profile &next, const Profile &base, const std::string &name);

// Per function, base and new values for the shared sample type. With normalize, each base sample's value is
// scaled by newTotal / baseTotal (truncated, as pprof scales values) so the totals compare like for like; an
// empty base (total 0) cannot be normalized and is an error.
Result<FunctionDiff> diffFunctions(const Profile &next, const Profile &base, const DiffOptions &options);

} // namespace emberline::engine
