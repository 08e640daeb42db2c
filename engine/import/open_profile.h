#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"
#include "engine/pprof/pprof_reader.h"

#include <string>

namespace emberline::engine {

// Reads a profile file of any format Emberline opens, told by its content (sniffFormat): pprof, perf.data
// (through `perf script`), `perf script` text, or folded stacks. Past this call nothing knows the format.
//
// Thread: any thread but the GUI's.
Result<Profile> readProfileFile(const std::string &path, const PprofReadOptions &options = {});

} // namespace emberline::engine
