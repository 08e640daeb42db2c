#pragma once

#include "engine/analysis/analysis.h"
#include "engine/common/result.h"
#include "engine/compare/comparison.h"
#include "engine/live/live_snapshot.h"

#include <cstdint>
#include <memory>
#include <span>
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
    DiffTree::Widths widths = DiffTree::Widths::New; // the widths the view draws (ComparisonRequest::widths)
};

// One comparison of a live session and what its two sides are called in the window ("flush 7", "0.0–4.5 s",
// a file name).
struct LiveComparison {
    std::shared_ptr<const Comparison> comparison;
    std::string baseLabel;
    std::string newLabel;
};

// The sides of flushes already derived for comparisons (values per stack and call tree), kept by the live stage
// from one update to the next, so that "with the previous flush" derives each flush once: as the new side when it
// is the newest, then as the base beside the next one (a pinned flush, once). A flush's side is derived from the
// session as it was when it was first asked for: with a sample type other than counts, the share of an
// aggregated sample's value a flush holds is estimated from its timeline entries, and later flushes would shift
// that estimate a little; kept, a flush shows the same values as new and then as base. Sides for another sample
// type or other hidden threads are dropped. One per session (its stage's).
//
// Thread: the live stage's.
class LiveFlushSides {
public:
    // The side of one flush of `snapshot` over `frames` (the frame table of the snapshot's profile), derived now
    // or kept from before.
    // `hits`: each aggregated sample's timeline entries as of the snapshot (LiveProfile::sampleHits).
    std::shared_ptr<const ComparisonSide> side(const LiveSnapshot &snapshot, std::span<const uint32_t> hits,
                                               const FrameTable &frames, const TimelineChunk &chunk, int sampleType,
                                               const std::vector<uint32_t> &hiddenThreads);
    size_t kept() const { return m_entries.size(); }

private:
    struct Entry {
        uint32_t sequence = 0;
        std::shared_ptr<const ComparisonSide> side;
    };
    static constexpr size_t kKept = 3; // the two newest flushes and a pinned one
    std::vector<Entry> m_entries;      // most recently used last
    int m_sampleType = -1;
    std::vector<uint32_t> m_hiddenThreads;
};

// The comparison a live view asks for. `scope` is the session's profile as the view's scope weighs it (hidden
// threads included); the other side is derived from the same snapshot with its own weights, so both share one
// frame table and the comparison costs two call trees over the session's distinct stacks. "Previous flush"
// compares the newest flush (new) with the one before it (base), whatever the scope: it answers "what changed in
// the last flush". A pinned baseline is compared with the scope.
//
// With `flushSides`, the flushes' sides come from it (and stay in it for the next update). `hits`: each aggregated
// sample's timeline entries as of the snapshot (LiveProfile::sampleHits).
//
// An error, in words for the window, when there is nothing to compare yet (one flush only), the pinned flush is
// not in the session, a range is empty, or a file shares no sample type with the session.
//
// Thread: the live stage's.
Result<LiveComparison> compareLive(const LiveSnapshot &snapshot, std::span<const uint32_t> hits,
                                   const std::shared_ptr<const LoadedProfile> &scope, const LiveCompareRequest &request,
                                   const std::vector<uint32_t> &hiddenThreads, int sampleType,
                                   LiveFlushSides *flushSides = nullptr);

// "a.b–c.d s" of a time range of the session, in seconds after its start.
std::string sessionRangeLabel(const LiveSnapshot &snapshot, int64_t startNs, int64_t endNs);

} // namespace emberline::engine
