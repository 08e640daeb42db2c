#pragma once

#include "engine/common/result.h"
#include "engine/live/live_snapshot.h"
#include "engine/model/profile.h"

#include <QMetaType>

#include <atomic>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace emberline::engine {

class ThreadIndex;

// A half-open span of wall-clock time, [startNs, endNs), in ns since the Unix epoch.
struct TimeRange {
    int64_t startNs = 0;
    int64_t endNs = 0;
    bool isEmpty() const { return endNs <= startNs; }
    bool operator==(const TimeRange &) const = default;
};

// One cell of a heatmap: a whole second since the start (column) and a sub-second bucket in it (row).
struct HeatmapCell {
    size_t column = 0;
    int row = 0;
    bool operator==(const HeatmapCell &) const = default;
};

// The sub-second heatmap of a profile or a live session, as Netflix's FlameScope draws it: column c holds the
// samples taken in second c after the start, row r of it those in [r, r + 1) × rowNs within that second, each
// cell the sum of a sample type's values (samples by default). Time flows down a column, then to the next one
// (column-major), so a range of cells from one to another in that order is one contiguous span of time.
//
// A sample exactly on a bucket boundary belongs to the bucket it starts; a sample before the start is left out
// and counted (beforeStart); columns grow as later samples arrive (add, addChunk), and only the cells they touch
// change, so a live session's heatmap is extended flush by flush instead of rebuilt.
//
// Thread: any; a value type. Built on a worker (a profile's loader job, a live session's stage) and shared
// immutable afterwards.
class Heatmap {
public:
    static constexpr int64_t kColumnNs = 1'000'000'000;
    static constexpr int kDefaultRows = 50; // 20 ms each
    // A day of seconds (34 MB of cells at 50 rows): a timestamp further out is counted, not placed, so a bogus
    // label cannot make the grid huge.
    static constexpr size_t kMaxColumns = 86'400;

    Heatmap() = default;
    // `rows` must divide a second into whole nanoseconds (50 → 20 ms).
    explicit Heatmap(int64_t startNs, int rows = kDefaultRows);

    int64_t startNs() const { return m_startNs; }
    int rows() const { return m_rows; }
    int64_t rowNs() const { return m_rowNs; }
    size_t columns() const { return m_columns; }
    int64_t value(size_t column, int row) const { return m_cells[column * static_cast<size_t>(m_rows) + row]; }
    // The column's cells, top (row 0) to bottom.
    std::span<const int64_t> column(size_t column) const;
    int64_t maxValue() const { return m_max; }
    int64_t total() const { return m_total; }
    // Samples with a timestamp on the grid; without any, the heatmap has nothing to show ("no timestamps").
    uint64_t timedSamples() const { return m_timed; }
    bool hasTimestamps() const { return m_timed > 0; }
    uint64_t beforeStart() const { return m_beforeStart; }
    uint64_t pastLimit() const { return m_pastLimit; } // more than kMaxColumns seconds after the start
    uint64_t untimed() const { return m_untimed; }

    // Adds a value at a time; a time before the start is only counted.
    void add(int64_t timeNs, int64_t value);
    // Adds a live flush's timeline entries, one sample each, except those whose aggregated sample's thread is
    // hidden (`hidden[thread]` non-zero; `sampleThread` maps an aggregated sample to its thread).
    void addChunk(const TimelineChunk &chunk, const ChunkedColumn<uint32_t> &sampleThread,
                  const std::vector<uint8_t> &hidden);
    // A sample without a timestamp: counted, not placed.
    void addUntimed() { ++m_untimed; }
    // Grows the grid to include the second holding `endNs - 1`, so that trailing empty seconds show too.
    void extendTo(int64_t endNs);

    // Time ↔ cells.
    TimeRange cellRange(HeatmapCell cell) const;
    // The cell holding a time on the grid (clamped to the grid's first and last cell).
    HeatmapCell cellAt(int64_t timeNs) const;
    // The time from the earlier of two cells (in time order: by column, then by row) to the end of the later one.
    TimeRange rangeBetween(HeatmapCell a, HeatmapCell b) const;
    // Whether `cell` lies between a and b (inclusive) in time order.
    static bool isBetween(HeatmapCell cell, HeatmapCell a, HeatmapCell b);
    // Sum of the cells whose span lies inside the range (a range made of whole cells sums exactly).
    int64_t sumIn(TimeRange range) const;

private:
    size_t cellIndexOf(int64_t offsetNs) const
    {
        return static_cast<size_t>(offsetNs / kColumnNs) * static_cast<size_t>(m_rows) +
               static_cast<size_t>((offsetNs % kColumnNs) / m_rowNs);
    }
    void growTo(size_t columns);

    int64_t m_startNs = 0;
    int m_rows = kDefaultRows;
    int64_t m_rowNs = kColumnNs / kDefaultRows;
    size_t m_columns = 0;
    std::vector<int64_t> m_cells; // column-major: [column * rows + row]
    int64_t m_max = 0;
    int64_t m_total = 0;
    uint64_t m_timed = 0;
    uint64_t m_beforeStart = 0;
    uint64_t m_untimed = 0;
    uint64_t m_pastLimit = 0;
};

// What to bucket of a loaded profile: one sample type's values (-1: the sample count) of the samples of some
// threads (ThreadIndex ordinals; empty: every thread).
struct HeatmapRequest {
    int sampleType = -1;
    std::vector<uint32_t> threads;
    int rows = Heatmap::kDefaultRows;
};

// The heatmap of a loaded profile from its samples' `end_timestamp_ns` labels, starting at the profile's start
// (time_nanos) or at its first sample when that is earlier or unknown. A profile without any timestamp gives a
// heatmap without timestamps (hasTimestamps() false); timestamps spread over more than kMaxColumns seconds give
// Error::Code::Limit; a cancelled build gives Error::Code::Cancelled. Walks every sample once; runs on a worker.
Result<Heatmap> profileHeatmap(const Profile &profile, const ThreadIndex *threads, const HeatmapRequest &request,
                               const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine

Q_DECLARE_METATYPE(emberline::engine::TimeRange)
