#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <string>

namespace emberline::engine {

struct ReportOptions {
    std::string sampleType; // empty: the profile's default sample type
    int top = 0;            // rows to print; 0 prints every function
    bool json = false;
    std::string fileName;   // shown in the text header
};

// `emberline report`: the top functions by self value, with totals, as text (like `go tool pprof -top`) or as
// JSON: {"sample_types":[{"type","unit","total"}],"samples":N,"functions":[{"name","self","total"}]}.
Result<std::string> buildReport(const Profile &profile, const ReportOptions &options);

} // namespace emberline::engine
