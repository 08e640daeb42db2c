#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"
#include "engine/pprof/pprof_reader.h"

#include <cstddef>
#include <string>

namespace emberline::engine {

// Reads a file of `perf script` text in `parts` pieces at once, each cut at a sample's end (text_parts.h) and
// parsed on a thread of its own by a PerfScriptParser; the parsers are then joined in file order
// (PerfScriptParser::append), so the profile is the one reading the file whole makes, table for table and sample
// for sample. `parts` 1, or a file without an empty line near a cut, reads it whole on the calling thread.
//
// Errors are those of reading the file whole: an error in the first part is that one (the same lines, the same
// numbers); an error in a later part, or parts that disagree on the event, has the file read again whole for
// its words, which only bad input pays. Progress is reported and the cancel flag watched on the calling thread,
// which parses the first part; the other threads watch the cancel flag between blocks and stop early when a part
// fails.
//
// Thread: the calling thread, and parts - 1 threads that end before the call returns.
Result<Profile> readPerfScriptFileInParts(const std::string &path, const PprofReadOptions &options, size_t parts);

// How many parts readPerfScriptFile cuts a file of `bytes` into: one per core, each of at least 16 MiB.
size_t perfScriptPartsFor(uint64_t bytes);

} // namespace emberline::engine
