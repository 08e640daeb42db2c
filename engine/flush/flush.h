#pragma once

#include "engine/health/unwind_health.h"
#include "engine/model/profile.h"
#include "engine/model/session_ids.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace emberline::engine {

// One flush of a profiling session: what the views show, what is written to disk and what is uploaded.
// Immutable once built; crosses threads as std::shared_ptr<const Flush>.
struct Flush {
    uint32_t sequence = 0; // 1, 2, ... within the session
    int64_t startNs = 0;   // wall clock, ns since the epoch
    int64_t endNs = 0;
    bool final = false;
    // False for a final flush shorter than the exporter's minimum: shown and saved like any other, not uploaded
    // (as Datadog's profilers, which leave such a short tail out; its samples are in the session's profile).
    bool upload = true;
    std::shared_ptr<const Profile> profile;
    // The recorder's session ids of the profile's locations and samples' stacks, for the live aggregate; null
    // for flushes that did not come from a recorder.
    std::shared_ptr<const SessionIds> sessionIds;
    std::string pprofBytes; // gzip-compressed profile.proto
    std::string path;       // where it was written, empty if not written
    // No tags or code provenance here: both depend on the upload's settings (service, env, version) and the
    // tags on the order of submission (profile_seq), so the Uploader derives them when it sends the flush.
    // Why it was not written ("<file>: No space left on device"), when writing was asked for and failed. The
    // flush still reaches the views and the uploader whole; only the disk missed it.
    std::string saveError;
    // Set on the flush whose samples the session's profile.pprof could not take (the first failure only):
    // the session's merged profile will be missing, and why.
    std::string sessionProfileError;
    uint64_t samples = 0; // samples in this flush
    // Session counters at flush time (cumulative).
    uint64_t lost = 0;
    uint64_t incomplete = 0;
    // Unwind and symbol health of the session as of this flush: per module, the cause and the fix; null when
    // the session's pipeline did not report it.
    std::shared_ptr<const UnwindHealth> health;
    // Memory profiling: the half-width of the 95% range sampling leaves the in-use bytes at the flush's end
    // (FlushInput::inUseBytesMargin); -1 when not known (not a memory session's, or read back from a file).
    double inUseBytesMargin = -1;
};

// A memory flush's profile tells its in-use margin in a comment ("inuse-space sampling margin (95%): 123456
// bytes"), for what reads the flush back from its file: the window reopening a session folder, the benchmarks.
inline constexpr std::string_view kInUseMarginComment = "inuse-space sampling margin (95%): ";

// The margin a profile's comment tells, -1 when none does.
inline double inUseMarginOf(const Profile &profile)
{
    for (StringId id : profile.comments()) {
        const std::string &comment = profile.str(id);
        if (comment.starts_with(kInUseMarginComment)) {
            char *end = nullptr;
            const double margin = std::strtod(comment.c_str() + kInUseMarginComment.size(), &end);
            return end != comment.c_str() + kInUseMarginComment.size() && margin >= 0 ? margin : -1;
        }
    }
    return -1;
}

} // namespace emberline::engine
