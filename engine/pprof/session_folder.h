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
    // With SessionTimes::Wanted: the flush files were merged for their samples' timestamps although
    // profile.pprof was whole (it adds up each thread's stacks without them), or why they were not (too large).
    bool timesFromFlushes = false;
    std::string timesProblem;
};

// Whether the reader needs each sample's time (the window's heatmap and time ranges), which only a session's
// flush files keep.
enum class SessionTimes { NotNeeded, Wanted };

// Flush files larger than this together are not merged only for their timestamps: profile.pprof is read instead
// (about 7 million samples; a session that long opens from its aggregate, without the heatmap).
constexpr uint64_t kTimedFlushesMaxBytes = 128ull << 20;

// True for a folder that holds profile.pprof or flush-NNNN.pprof files (what a recording writes).
bool isSessionFolder(const std::string &directory);

// Reads a session folder (the folder a recording writes: flush-NNNN.pprof per flush, profile.pprof at the
// end) as one profile: its profile.pprof when that reads whole, otherwise its flush files merged in order with
// the merge code that builds every merged profile (ProfileMerger). A flush file that does not read is named in
// `skipped` and left out; temporary files (*.tmp) are never read. Fails only when nothing in the folder reads.
// Each file is read with `options` (limits, cancel); progress goes over the whole folder.
//
// With SessionTimes::Wanted, a whole profile.pprof whose samples carry no end_timestamp_ns gives way to the flush
// files merged (the same values, with each sample's time) when they all read and are not larger than
// kTimedFlushesMaxBytes together.
//
// Thread: any; slow (it reads every flush), so never the GUI thread.
Result<SessionFolderProfile> readSessionFolder(const std::string &directory, const PprofReadOptions &options = {},
                                               SessionTimes times = SessionTimes::NotNeeded);

} // namespace emberline::engine
