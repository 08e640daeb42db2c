#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/heap_summary.h"
#include "engine/live/live_selection.h"
#include "engine/model/frame_table.h"
#include "engine/model/profile.h"

#include <QString>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace emberline::ui {

// What a finished memory session's programs still held when they ended (their leaks), per stack of the live
// snapshot's profile. The live views do not have it: a flush's in-use values are the heap as of its end, and when a
// program ends what it held leaves the heap, so the session's final flush holds none; the leaks are in the session's
// profile.pprof alone, as its in-use values. They are read from there and matched to the snapshot's stacks by their
// frames' names, leaf first.
struct SessionLeaks {
    std::shared_ptr<const engine::Profile> matchedTo; // the snapshot profile whose stacks the vectors index
    std::vector<int64_t> inuseBytes;
    std::vector<int64_t> inuseObjects;
    int64_t bytes = 0; // in all, matched or not
    int64_t objects = 0;
    QString error; // why the file could not be read ("" when it was)
};

// Reads `sessionProfile` and matches its leaks to `profile`'s stacks (`frames` is its frame table).
//
// Thread: a worker (it reads and parses the file).
std::shared_ptr<const SessionLeaks> readSessionLeaks(const QString &sessionProfile,
                                                     const std::shared_ptr<const engine::Profile> &profile,
                                                     const engine::FrameTable &frames, const std::atomic<bool> *cancel);

// The memory values per stack a live view's scope shows, as its flame graph shows the memory types: allocated over
// the flushes that end in the scope, in use at the end of the last of them (`scope` is a LiveUpdate's profile, with
// its weights and overlay).
engine::MemoryByStack scopeMemory(const engine::LoadedProfile &scope, const std::atomic<bool> *cancel);

// The flushes of `snapshot` that end in `selection` (after its start, up to its end included), in order.
std::vector<const engine::TimelineChunk *> flushesIn(const engine::LiveSnapshot &snapshot,
                                                     const engine::LiveSelection &selection);
// The peak among those flushes: the one whose end held the most in-use space.
std::optional<engine::MemoryPeak> peakIn(const engine::LiveSnapshot &snapshot, const engine::LiveSelection &selection);

} // namespace emberline::ui
