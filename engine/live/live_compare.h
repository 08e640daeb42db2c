#pragma once

#include "engine/common/result.h"
#include "engine/model/analysis.h"
#include "engine/model/comparison.h"
#include "engine/model/live_snapshot.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace emberline::engine {

// How a live session's views compare: not at all, the newest flush with the one before it, or the view's scope
// with a pinned baseline.
enum class LiveCompareMode { Off, PreviousFlush, Baseline };

// What a pinned baseline is: one flush of the session (by sequence), a time range of the session, or a profile
// loaded from a file (loaded off the GUI thread before it is pinned).
struct LiveBaseline {
    enum class Kind { Flush, TimeRange, File };
    Kind kind = Kind::Flush;
    uint32_t flushSequence = 0;
    int64_t startNs = 0;
    int64_t endNs = 0;
    std::shared_ptr<const LoadedProfile> file;
};

// What the stage compares, beside the view request's scope, hidden threads and sample type.
struct LiveCompareRequest {
    LiveCompareMode mode = LiveCompareMode::Off;
    LiveBaseline baseline;
    bool normalize = false;
};

// One comparison of a live session and what its two sides are called in the window ("flush 7", "0.0–4.5 s",
// a file name).
struct LiveComparison {
    std::shared_ptr<const Comparison> comparison;
    std::string baseLabel;
    std::string newLabel;
};

// The comparison a live view asks for. `scope` is the session's profile as the view's scope weighs it (hidden
// threads included); the other side is derived from the same snapshot with its own weights, so both share one
// frame table and the comparison costs two call trees over the session's distinct stacks. "Previous flush"
// compares the newest flush (new) with the one before it (base), whatever the scope: it answers "what changed in
// the last flush". A pinned baseline is compared with the scope.
//
// An error, in words for the window, when there is nothing to compare yet (one flush only), the pinned flush is
// not in the session, a range is empty, or a file shares no sample type with the session.
//
// Thread: the live stage's.
Result<LiveComparison> compareLive(const LiveSnapshot &snapshot, const std::shared_ptr<const LoadedProfile> &scope,
                                   const LiveCompareRequest &request, const std::vector<uint32_t> &hiddenThreads,
                                   int sampleType);

// "a.b–c.d s" of a time range of the session, in seconds after its start.
std::string sessionRangeLabel(const LiveSnapshot &snapshot, int64_t startNs, int64_t endNs);

} // namespace emberline::engine
