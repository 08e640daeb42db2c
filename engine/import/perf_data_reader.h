#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"
#include "engine/pprof/pprof_reader.h"

#include <string>

namespace emberline::engine {

// Opens a perf.data file by running `perf script --no-inline` (Debian's linux-perf) in a child process and
// parsing its text as it streams (PerfScriptParser): never the whole text in memory. Inlined frames are left
// out so that a sample's leaf is the function its address lies in, as `perf report` counts self. When
// `options.cancel` rises, the child is killed and the result is a Cancelled error. Without perf, the error says
// how to install it.
//
// Thread: any thread but the GUI's (it blocks until perf is done).
Result<Profile> readPerfDataFile(const std::string &path, const PprofReadOptions &options = {});

// The program that reads perf.data: $EMBERLINE_PERF when set (tests point it elsewhere), else `perf` in PATH;
// empty when there is none.
std::string perfProgram();

} // namespace emberline::engine
