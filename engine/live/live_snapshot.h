#pragma once

#include "engine/live/flush_memory.h"
#include "engine/model/chunked_column.h"
#include "engine/model/profile.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

// One flush's samples on the session timeline, about four bytes each: the time as milliseconds after the flush's
// start (a flush lasts at most 60 s, so 16 bits suffice) and the index of the aggregated session sample that
// took its values (which gives its stack and thread). Immutable once built.
//
// The entries are packed, in the order they were added: per entry, the change of the time since the entry before
// (zigzag, so that the few entries out of order cost as little) and the sample's index, each a base-128 varint.
// The time moves by a millisecond or two from one entry to the next and an index takes three bytes up to two
// million aggregated samples, where plain arrays took six bytes an entry: the timeline is the part of a live
// session that grows with every sample. forEach() reads them back in order.
struct TimelineChunk {
    uint32_t sequence = 0;
    int64_t startNs = 0;
    int64_t endNs = 0;
    uint64_t samples = 0; // samples this flush holds
    uint64_t lost = 0;    // samples lost during this flush
    // CPU time and samples per thread in kActivityBinNs bins of the session's time, from bin `firstBin` on:
    // [thread * binCount + bin], for the threads known when the flush was added. The timeline's buckets are
    // sums of bins, so bucketing never walks the samples again.
    static constexpr int64_t kActivityBinNs = 50'000'000;
    size_t firstBin = 0;
    size_t binCount = 0;
    size_t binThreads = 0;
    std::vector<int64_t> binCpuNs;
    std::vector<uint32_t> binSamples;
    // The flush's memory samples (a memory session's): their values per aggregated sample. They are not entries.
    FlushMemory memory;
    // The half-width of the 95% range sampling leaves the in-use bytes at the flush's end (Flush::inUseBytesMargin);
    // -1 when not known.
    double inUseBytesMargin = -1;
    // The session's last flush (Flush::final): a memory session's in-use values are then its leaks, what each
    // process still held when it ended.
    bool final = false;

    void append(uint16_t offsetMs, uint32_t sample)
    {
        const int32_t delta = static_cast<int32_t>(offsetMs) - static_cast<int32_t>(m_lastOffsetMs);
        putVarint(static_cast<uint32_t>((delta << 1) ^ (delta >> 31)));
        putVarint(sample);
        m_lastOffsetMs = offsetMs;
        m_maxOffsetMs = std::max(m_maxOffsetMs, offsetMs);
        ++m_entries;
    }
    // Gives back what growing the packed entries left unused; call once the flush is added.
    void finish() { m_packed.shrink_to_fit(); }

    size_t entryCount() const { return m_entries; }
    // The latest time of an entry (startNs without entries).
    int64_t lastEntryNs() const { return startNs + static_cast<int64_t>(m_maxOffsetMs) * 1'000'000; }
    // f(int64_t timeNs, uint32_t sample) for every entry, in the order they were added.
    template <typename F> void forEach(F &&f) const
    {
        const uint8_t *p = m_packed.data();
        int32_t offset = 0;
        for (size_t i = 0; i < m_entries; ++i) {
            const uint32_t zigzag = getVarint(p);
            offset += static_cast<int32_t>(zigzag >> 1) ^ -static_cast<int32_t>(zigzag & 1);
            const uint32_t sample = getVarint(p);
            f(startNs + static_cast<int64_t>(offset) * 1'000'000, sample);
        }
    }
    // The aggregated sample of every entry, in order.
    std::vector<uint32_t> entrySamples() const
    {
        std::vector<uint32_t> out;
        out.reserve(m_entries);
        forEach([&](int64_t, uint32_t sample) { out.push_back(sample); });
        return out;
    }
    size_t memoryBytes() const
    {
        return m_packed.capacity() + binCpuNs.capacity() * 8 + binSamples.capacity() * 4 + memory.memoryBytes() +
               sizeof(*this);
    }

private:
    void putVarint(uint32_t v)
    {
        while (v >= 0x80) {
            m_packed.push_back(static_cast<uint8_t>(v | 0x80));
            v >>= 7;
        }
        m_packed.push_back(static_cast<uint8_t>(v));
    }
    static uint32_t getVarint(const uint8_t *&p)
    {
        uint32_t v = 0;
        for (unsigned shift = 0;; shift += 7) {
            const uint8_t byte = *p++;
            v |= static_cast<uint32_t>(byte & 0x7f) << shift;
            if (byte < 0x80)
                return v;
        }
    }

    std::vector<uint8_t> m_packed;
    size_t m_entries = 0;
    uint16_t m_lastOffsetMs = 0;
    uint16_t m_maxOffsetMs = 0;
};

// A thread of the session, as the timeline shows it. Keyed by thread id; the name is the latest seen.
struct LiveThread {
    int64_t tid = 0;
    std::string name;
    uint64_t hits = 0; // timeline entries (samples) of this thread
    std::string displayName() const;
};

// Per aggregated sample of a live profile: its thread (a LiveThread ordinal, stable for the whole session) and the
// number of timeline entries that point at it. (The CPU time it holds is its cpu-time value in the profile.)
// In chunks that a snapshot's copy shares with the live aggregate (ChunkedColumn): a flush copies only the chunks
// it changes while a snapshot holds them.
struct LiveSampleColumns {
    ChunkedColumn<uint32_t> thread;
    // Per sample type, the session's value per stack of the aggregated profile: what valuesPerStack() gives
    // without a filter, kept up to date flush by flush so that a refresh of the whole session reads it as is.
    // A snapshot holds the types its views show (null for the others); the live profile copies a type's values
    // before a flush changes them only while a snapshot still holds them.
    std::vector<std::shared_ptr<const std::vector<int64_t>>> stackValues;
};

// What a live session's views are derived from, frozen after a flush: the whole session so far aggregated
// (identical stack and thread summed, no per-sample timestamps), and the compact timeline that keeps when each
// sample was taken.
//
// Thread: built by LiveProfile on its worker; immutable afterwards, shared as std::shared_ptr<const>.
struct LiveSnapshot {
    uint32_t flushes = 0;
    int64_t startNs = 0;
    int64_t endNs = 0;
    std::shared_ptr<const Profile> profile;
    int cpuType = -1; // the index of cpu-time among the profile's sample types, -1 without it
    // The per-sample columns, shared with the merger that holds `profile` (never copied per flush).
    std::shared_ptr<const LiveSampleColumns> columns;
    std::vector<int64_t> totals; // per sample type, over every sample of the session
    std::vector<LiveThread> threads;
    std::vector<std::shared_ptr<const TimelineChunk>> chunks;
    // The profile's memory sample types (isMemorySampleType), ascending: the columns of each chunk's `memory`; per
    // one, whether it is a snapshot type (in-use, as of a flush's end) rather than what a flush allocated.
    std::vector<int> memoryTypes;
    std::vector<uint8_t> memorySnapshots;
    // The column of a chunk's `memory` that holds a sample type (of `memoryTypes`), -1 when none does.
    int memoryColumn(int sampleType) const;

    // Per aggregated sample of `profile`: its thread (a `threads` ordinal) and its CPU time. Its timeline entries
    // (hits) are the live profile's, read on the stage's thread (LiveProfile::sampleHits).
    const ChunkedColumn<uint32_t> &sampleThread() const;
    int64_t sampleCpuNs(size_t i) const; // the cpu-time value of aggregated sample i (0 without the type)
    // The session's value per stack for one sample type (empty for a type the profile does not have, or that
    // the snapshot was not taken with).
    std::span<const int64_t> stackValues(int sampleType) const;
    std::shared_ptr<const std::vector<int64_t>> sharedStackValues(int sampleType) const;
    // Stacks whose value changed in flushes [from, flushes) of this session, each named at least once, from the
    // timeline and the flushes' memory samples (with those of flush from - 1: a stack its in-use snapshot held and
    // a later one does not went to 0); empty when `from` is not an earlier flush count of it.
    std::vector<uint32_t> stacksChangedSince(uint32_t from) const;
    size_t timelineSamples() const;
    size_t timelineBytes() const;
};

} // namespace emberline::engine
