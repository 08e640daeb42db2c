#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/transforms.h"
#include "engine/common/result.h"
#include "engine/model/sample_filter.h"

#include <atomic>
#include <memory>
#include <span>

namespace emberline::engine {

// The samples a view shows, as a profile of their own to save as pprof: `source` through the transform chain
// (top-down: a bottom-up view is saved as the stacks it inverts), then only the samples the filter keeps (threads,
// time range). A live session's weighted samples are saved with their values scaled by their weights. Every
// sample type is kept; the tables are the transformed profile's.
// Errors: those of deriveProfile; a view that keeps no sample; Cancelled.
//
// Thread: any but the GUI's; reads the immutable source.
Result<Profile> viewProfile(const std::shared_ptr<const LoadedProfile> &source, std::span<const Transform> transforms,
                            const SampleFilter &filter, const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
