#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <string>
#include <vector>

namespace emberline::engine {

struct DisasmOptions {
    std::string pattern;    // a regular expression matched anywhere in a function's name
    std::string sampleType; // empty: the profile's default
    bool json = false;
    std::vector<std::string> sourceRoots; // where to look for sources besides the recorded paths
    std::vector<std::string> debugDirectories{"/usr/lib/debug"};
};

// `emberline report FILE --disasm REGEX`, like `go tool pprof -disasm`: for every function whose name matches, its
// instructions with self and total, the source lines interleaved, from the ELF file found by build id (never a
// file whose build id differs). JSON: {"type","unit","functions":[{"name","file","binary","build_id","self",
// "total","notes","error","instructions":[{"address","bytes","text","file","line","self","total"}]}]}, values in
// the sample type's unit, addresses as "0x..." link-time addresses.
// An error when the regex does not compile, nothing matches, the profile has no addresses, or no matching
// function could be disassembled (each one's reason said).
// Thread: not the GUI thread (debuginfod).
Result<std::string> buildDisasmReport(const Profile &profile, const DisasmOptions &options);

} // namespace emberline::engine
