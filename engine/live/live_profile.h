#pragma once

#include "engine/common/result.h"
#include "engine/flush/flush.h"
#include "engine/live/live_snapshot.h"
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
// A memory session's flushes also carry memory samples (isMemorySampleType): the aggregate sums what each flush
// allocated, and holds the in-use values (snapshot types) of the newest flush only, since every flush carries the
// whole live heap again (ProfileMerger::Options::latestSnapshots). Memory samples are not entries of the timeline
// (they have no moment but their flush's end); each flush's chunk keeps their values instead (TimelineChunk::memory),
// from which a time range or one flush gets its memory (memoryOverlay).
//
// There is one aggregate. A snapshot is a copy of it whose sample columns share their chunks with the aggregate
// (Profile's ChunkedColumn): the next flush copies only the chunks it changes (the values of the samples it adds
// to, and the last chunk of each column), and only while a snapshot still holds them. So a session costs one
// aggregate plus, while the views hold a snapshot, the chunks of values changed since.
//
// Thread: one owner at a time (the live stage's thread, one flush after another); snapshots are read anywhere.
class LiveProfile {
public:
    LiveProfile();
    ~LiveProfile();

    Status add(const std::shared_ptr<const Flush> &flush);
    Status add(const Flush &flush); // copies the flush (tests); the stage passes its shared flush
    static constexpr int kAllTypes = -1;
    static constexpr int kDefaultType = -2; // the profile's default sample type
    // The current state as an immutable snapshot, taken once per flush and shared by every caller until the next
    // that asks for the same values per stack: those of `stackValuesType` (the type the views show) or of every
    // type. The values of a type a snapshot holds are copied by the next flush that changes them while it does.
    std::shared_ptr<const LiveSnapshot> snapshot(int stackValuesType = kAllTypes) const;
    uint32_t flushes() const { return m_flushes; }
    // Per aggregated sample, its timeline entries (the samples summed into it), as of the last flush added: read
    // on the owner's thread beside the newest snapshot. Snapshots do not carry it, so that a flush changes it in
    // place instead of copying the parts a snapshot holds.
    std::span<const uint32_t> sampleHits() const { return m_hits; }

private:
    uint32_t threadOrdinal(int64_t tid, const std::string &name);
    void addToColumns(const Profile &taken, const std::vector<uint32_t> &destination,
                      const std::vector<uint32_t> &threadOf, const std::vector<uint32_t> &entries);
    void addBins(TimelineChunk &chunk, const std::vector<uint32_t> &threadOf, const std::vector<int64_t> &cpuOf) const;
    void findMemoryTypes(const Profile &profile);
    bool isMemorySample(std::span<const int64_t> values) const;

    ProfileMerger m_merger;
    LiveSampleColumns m_columns; // the thread per sample; the values per stack are m_stackValues
    std::vector<uint32_t> m_hits;
    // Per sample type, the value per stack, shared with the snapshots that hold it (copied before a change then).
    std::vector<std::shared_ptr<std::vector<int64_t>>> m_stackValues;
    // The memory types (LiveSnapshot::memoryTypes), per sample type whether it is a snapshot, and the stacks the
    // newest flush gave snapshot values (the next flush sets them to 0 before it adds its own).
    std::vector<int> m_memoryTypes;
    std::vector<uint8_t> m_memorySnapshots;
    std::vector<uint8_t> m_isSnapshot;
    std::vector<uint32_t> m_snapshotStacks;
    mutable std::shared_ptr<const LiveSnapshot> m_snapshot; // of the newest flush, taken on first demand
    mutable int m_snapshotType = kAllTypes;                 // the stack values m_snapshot holds
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
