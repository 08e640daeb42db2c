#pragma once

#include "engine/common/result.h"
#include "engine/export/flush.h"
#include "engine/model/live_snapshot.h"
#include "engine/model/merge.h"
#include "engine/model/profile.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

// The accumulator of a live session: merges each flush into the aggregated session profile (ProfileMerger
// with aggregation, dropping end_timestamp_ns) and appends the flush's samples to the compact timeline. Memory
// grows with distinct stacks plus a few bytes per sample.
//
// Snapshots share the merged profile instead of copying it: two mergers take the same flushes in the same order
// (so their sample indices agree), each with its own per-sample columns. The published one is read by snapshots;
// the other one, once no snapshot holds it, catches up on the one flush it missed (between flushes, catchUp(),
// or else when the next flush comes), takes the new one and is published in turn. Only if a snapshot of it is
// still held when the next flush comes is it replaced by a copy of the published merger (rare: the views drop a
// snapshot as soon as they show the next one). So at most one flush is kept, until the next one.
//
// Thread: one owner at a time (the GUI's ingestion worker, one flush after another).
class LiveProfile {
public:
    LiveProfile();
    ~LiveProfile();

    Status add(const std::shared_ptr<const Flush> &flush);
    Status add(const Flush &flush); // copies the flush (tests); the GUI passes its shared flush
    // Merges the flush the back buffer missed now, if no snapshot holds that buffer any more, so that the next
    // add() has only its own flush to merge (called between flushes, once the views let go of the previous
    // snapshot); otherwise does nothing, and add() catches up as before.
    Status catchUp();
    // The current state as an immutable snapshot; its profile is shared with the published merger.
    std::shared_ptr<const LiveSnapshot> snapshot() const;
    uint32_t flushes() const { return m_flushes; }

private:
    struct Buffer;
    struct TakenFlush;
    uint32_t threadOrdinal(int64_t tid, const std::string &name);
    Status mergeIntoBack(const std::shared_ptr<const Flush> &flush, std::vector<uint32_t> &destination);
    static void addToColumns(LiveSampleColumns &columns, const Profile &merged, const TakenFlush &flush);
    void addBins(TimelineChunk &chunk, const std::vector<uint32_t> &threadOf, const std::vector<int64_t> &cpuOf) const;

    std::shared_ptr<Buffer> m_published;
    std::shared_ptr<Buffer> m_back;
    uint32_t m_flushes = 0;
    int64_t m_startNs = 0;
    int64_t m_endNs = 0;
    uint64_t m_lastLost = 0;
    std::vector<int64_t> m_totals;
    std::vector<LiveThread> m_threads;
    std::unordered_map<int64_t, uint32_t> m_threadByTid;
    std::vector<std::shared_ptr<const TimelineChunk>> m_chunks;
};

} // namespace emberline::engine
