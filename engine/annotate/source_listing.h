#pragma once

#include "engine/analysis/line_table.h"
#include "engine/annotate/source_locator.h"
#include "engine/common/result.h"
#include "engine/model/frame_table.h"
#include "engine/model/profile.h"

#include <atomic>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

// What the window's source view shows for one function: its per-line costs (as `report --list` computes them),
// its source file when found, and what the user must be told otherwise.
struct SourceListing {
    FunctionLines function;           // lines with a cost, ascending
    std::optional<SourceFile> source; // nullopt when the file was not found or could not be read
    std::string sourceProblem;        // why there is no source (where it was looked for)
    std::vector<LineCost> pastEnd;    // costly lines past the file's end (the file changed since the recording)
    int64_t hottestLine = 0;          // the line with the largest total (self on a tie), 0 when none
    int functionsWithName = 1;        // how many files hold a function of that name (the costliest is shown)
};

// Builds the listing of the frame's function for one sample type's values per stack: the function of that name
// whose file is the frame's (or the costliest of that name when the frame's file has none), its file looked up
// at the recorded path and under `roots`. Errors: the function has no cost in these samples; Cancelled.
//
// Thread: any but the GUI's (it reads files); reads an immutable Profile.
Result<SourceListing> buildSourceListing(const Profile &profile, std::span<const int64_t> perStack, const Frame &frame,
                                         const SourceLocator &locator, const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
