#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"
#include "engine/pprof/pprof_reader.h"

#include <string>
#include <vector>

namespace emberline::engine {

// A session folder read as one profile.
struct SessionFolderProfile {
    Profile profile;
    // How it was made: the folder's profile.pprof, or merged from its flush files (and then why profile.pprof
    // was not used: missing, empty or cut short, as after a crash or SIGKILL).
    bool fromFlushes = false;
    std::string sessionProfileProblem;
    size_t flushesMerged = 0;
    std::vector<std::string> skipped; // each broken flush file left out, as "<file>: <reason>"
};

// True for a folder that holds profile.pprof or flush-NNNN.pprof files (what a recording writes).
bool isSessionFolder(const std::string &directory);

// Reads a session folder (the folder a recording writes: flush-NNNN.pprof per flush, profile.pprof at the
// end) as one profile: its profile.pprof when that reads whole, otherwise its flush files merged in order with
// the merge code that builds every merged profile (ProfileMerger). A flush file that does not read is named in
// `skipped` and left out; temporary files (*.tmp) are never read. Fails only when nothing in the folder reads.
// Each file is read with `options` (limits, cancel); progress goes over the whole folder.
//
// Thread: any; slow (it reads every flush), so never the GUI thread.
Result<SessionFolderProfile> readSessionFolder(const std::string &directory, const PprofReadOptions &options = {});

} // namespace emberline::engine
