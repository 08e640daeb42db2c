#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <string>
#include <vector>

namespace emberline::engine {

struct ListOptions {
    std::string pattern;    // a regular expression matched anywhere in a function's name
    std::string sampleType; // empty: the profile's default
    bool json = false;
    std::vector<std::string> sourceRoots; // where to look for sources besides the recorded paths
};

// `emberline report FILE --list REGEX`: for every function whose name matches, its lines with self and total,
// and the source code when the file is found, like `go tool pprof -list`. Without the file the per-line table
// still prints; a line past the file's end (the file changed since the recording) is said so. JSON:
// {"functions":[{"name","file","self","total","lines":[{"line","self","total"}]}]} in the sample type's unit.
Result<std::string> buildListReport(const Profile &profile, const ListOptions &options);

} // namespace emberline::engine
