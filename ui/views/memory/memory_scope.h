#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/heap_summary.h"
#include "engine/live/live_selection.h"
#include "engine/model/profile.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace emberline::ui {

// The memory values per stack a live view's scope shows, as its flame graph shows the memory types: allocated over
// the flushes that end in the scope, in use at the end of the last of them (`scope` is a LiveUpdate's profile, with
// its weights and overlay, and its hidden threads at 0). When that flush is the session's last (TimelineChunk::final),
// its in-use values are the leaks: what the programs still held when they ended, of the threads the scope shows.
//
// Thread: any (the memory summary's worker).
engine::MemoryByStack scopeMemory(const engine::LoadedProfile &scope, const std::atomic<bool> *cancel);

// The flushes of `snapshot` that end in `selection` (after its start, up to its end included), in order.
std::vector<const engine::TimelineChunk *> flushesIn(const engine::LiveSnapshot &snapshot,
                                                     const engine::LiveSelection &selection);
// The fullest of those flushes: the one whose end held the most in-use space.
std::optional<engine::FullestFlush> fullestFlushIn(const engine::LiveSnapshot &snapshot,
                                                   const engine::LiveSelection &selection);

} // namespace emberline::ui
