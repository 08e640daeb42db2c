#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"
#include "engine/pprof/pprof_reader.h"

#include <string>
#include <string_view>

namespace emberline::engine {

// Reads Brendan Gregg's collapsed stacks (`root;...;leaf COUNT`, one stack a line, as stackcollapse-*.pl and
// `emberline report --format folded` write them) into a Profile with one sample type, samples/count (the
// format carries no unit). Blank lines and lines starting with '#' are skipped. A line without a whole,
// non-negative count, with an empty frame, or with binary bytes is an error naming the line.
//
// Thread: any; one call owns everything it touches.
Result<Profile> readFoldedFile(const std::string &path, const PprofReadOptions &options = {});
Result<Profile> readFoldedText(std::string_view text, const std::string &name = "<memory>");

} // namespace emberline::engine
