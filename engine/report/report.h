#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <string>

namespace emberline::engine {

struct ReportOptions {
    std::string sampleType; // empty: the profile's default sample type
    int top = 0;            // rows to print; 0 prints every function
    bool json = false;
    std::string fileName; // shown in the text header
    // With a base (buildDiffReport): the base's file name and whether its values are scaled to the new total.
    std::string baseFileName;
    bool normalize = false;
};

// `emberline report`: the top functions by self value, with totals, as text (like `go tool pprof -top`) or as
// JSON: {"sample_types":[{"type","unit","total"}],"samples":N,"functions":[{"name","self","total"}]}.
Result<std::string> buildReport(const Profile &profile, const ReportOptions &options);

// `emberline report NEW --base BASE`: the functions of the comparison (compareProfiles) whose self or total
// changed, self and total as NEW minus BASE (like `go tool pprof -diff_base=BASE -top NEW`), ordered by the size of
// the change. JSON keeps buildReport's shape and adds "base_self" and "base_total" to every function, and "base"
// (file, total, scale) beside "sample_types". Normalizing a base whose total is 0 is an error. The profiles are
// taken over: the comparison holds them.
Result<std::string> buildDiffReport(Profile next, Profile base, const ReportOptions &options);

} // namespace emberline::engine
