#include "engine/analysis/heatmap.h"

#include "engine/model/sample_filter.h"

#include <algorithm>
#include <limits>
#include <string>

namespace emberline::engine {

Heatmap::Heatmap(int64_t startNs, int rows) : m_startNs(startNs), m_rows(rows), m_rowNs(kColumnNs / rows)
{
    Q_ASSERT(rows > 0 && kColumnNs % rows == 0);
}

std::span<const int64_t> Heatmap::column(size_t column) const
{
    if (column >= m_columns)
        return {};
    return std::span<const int64_t>(m_cells).subspan(column * static_cast<size_t>(m_rows), static_cast<size_t>(m_rows));
}

void Heatmap::growTo(size_t columns)
{
    columns = std::min(columns, kMaxColumns);
    if (columns <= m_columns)
        return;
    m_columns = columns;
    m_cells.resize(columns * static_cast<size_t>(m_rows), 0);
}

void Heatmap::add(int64_t timeNs, int64_t value)
{
    if (timeNs < m_startNs) {
        ++m_beforeStart;
        return;
    }
    const int64_t offset = timeNs - m_startNs;
    if (static_cast<uint64_t>(offset / kColumnNs) >= kMaxColumns) {
        ++m_pastLimit;
        return;
    }
    growTo(static_cast<size_t>(offset / kColumnNs) + 1);
    int64_t &cell = m_cells[cellIndexOf(offset)];
    cell += value;
    m_max = std::max(m_max, cell);
    m_total += value;
    ++m_timed;
}

void Heatmap::addChunk(const TimelineChunk &chunk, const ChunkedColumn<uint32_t> &sampleThread,
                       const std::vector<uint8_t> &hidden)
{
    // The chunk's last entry is its latest: grow once, not per entry.
    if (chunk.entryCount() > 0) {
        const int64_t last = chunk.lastEntryNs() - m_startNs;
        if (last >= 0)
            growTo(static_cast<size_t>(last / kColumnNs) + 1);
    }
    chunk.forEach([&](int64_t timeNs, uint32_t sample) {
        const uint32_t thread = sample < sampleThread.size() ? sampleThread[sample] : kNoIndex;
        if (thread < hidden.size() && hidden[thread])
            return;
        const int64_t offset = timeNs - m_startNs;
        if (offset < 0) {
            ++m_beforeStart;
            return;
        }
        if (static_cast<uint64_t>(offset / kColumnNs) >= kMaxColumns) {
            ++m_pastLimit;
            return;
        }
        int64_t &cell = m_cells[cellIndexOf(offset)];
        m_max = std::max(m_max, ++cell);
        ++m_total;
        ++m_timed;
    });
}

void Heatmap::extendTo(int64_t endNs)
{
    if (endNs > m_startNs)
        growTo(static_cast<size_t>((endNs - 1 - m_startNs) / kColumnNs) + 1);
}

TimeRange Heatmap::cellRange(HeatmapCell cell) const
{
    const int64_t start = m_startNs + static_cast<int64_t>(cell.column) * kColumnNs + cell.row * m_rowNs;
    return {start, start + m_rowNs};
}

HeatmapCell Heatmap::cellAt(int64_t timeNs) const
{
    if (m_columns == 0 || timeNs < m_startNs)
        return {};
    const int64_t offset = timeNs - m_startNs;
    const auto column = static_cast<size_t>(offset / kColumnNs);
    if (column >= m_columns)
        return {m_columns - 1, m_rows - 1};
    return {column, static_cast<int>((offset % kColumnNs) / m_rowNs)};
}

bool Heatmap::isBetween(HeatmapCell cell, HeatmapCell a, HeatmapCell b)
{
    const auto key = [](HeatmapCell c) { return std::pair(c.column, c.row); };
    const auto ka = key(a);
    const auto kb = key(b);
    const auto kc = key(cell);
    return (ka <= kc && kc <= kb) || (kb <= kc && kc <= ka);
}

TimeRange Heatmap::rangeBetween(HeatmapCell a, HeatmapCell b) const
{
    if (std::pair(b.column, b.row) < std::pair(a.column, a.row))
        std::swap(a, b);
    return {cellRange(a).startNs, cellRange(b).endNs};
}

int64_t Heatmap::sumIn(TimeRange range) const
{
    if (range.isEmpty() || m_columns == 0)
        return 0;
    // First and one-past-last cells fully inside the range, as indexes in time order.
    const int64_t gridEnd = static_cast<int64_t>(m_columns) * kColumnNs;
    const int64_t from = std::clamp<int64_t>(range.startNs - m_startNs, 0, gridEnd);
    const int64_t to = std::clamp<int64_t>(range.endNs - m_startNs, 0, gridEnd);
    const int64_t first = (from + m_rowNs - 1) / m_rowNs;
    const int64_t last = to / m_rowNs;
    int64_t sum = 0;
    for (int64_t i = first; i < last; ++i)
        sum += m_cells[static_cast<size_t>(i)]; // column-major cells are in time order, one per rowNs
    return sum;
}

Result<Heatmap> profileHeatmap(const Profile &profile, const ThreadIndex *threads, const HeatmapRequest &request,
                               const std::atomic<bool> *cancel)
{
    const std::vector<int64_t> times = sampleTimestamps(profile);
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
    for (int64_t t : times) {
        if (t != 0) {
            first = std::min(first, t);
            last = std::max(last, t);
        }
    }
    const int64_t start = profile.timeNanos > 0 ? std::min(profile.timeNanos, first) : first;
    if (first <= last && (last - start) / Heatmap::kColumnNs >= static_cast<int64_t>(Heatmap::kMaxColumns))
        return makeError(Error::Code::Limit, "the samples' timestamps span " +
                                                 std::to_string((last - start) / 3'600'000'000'000) +
                                                 " hours; the heatmap shows at most 24 hours");
    Heatmap heatmap(first == std::numeric_limits<int64_t>::max() ? profile.timeNanos : start, request.rows);
    std::vector<uint8_t> allowed;
    if (threads && !request.threads.empty()) {
        allowed.assign(threads->threads().size(), 0);
        for (uint32_t t : request.threads) {
            if (t < allowed.size())
                allowed[t] = 1;
        }
    }
    const bool byType =
        request.sampleType >= 0 && static_cast<size_t>(request.sampleType) < profile.sampleTypes().size();
    for (size_t i = 0; i < times.size(); ++i) {
        if ((i & 0xFFFF) == 0 && cancel && cancel->load(std::memory_order_relaxed))
            return makeError(Error::Code::Cancelled, "cancelled");
        if (!allowed.empty()) {
            const uint32_t t = threads->threadOf(i);
            if (t >= allowed.size() || !allowed[t])
                continue;
        }
        if (times[i] == 0) {
            heatmap.addUntimed();
            continue;
        }
        heatmap.add(times[i], byType ? profile.sampleValues(i)[request.sampleType] : 1);
    }
    // Trailing seconds without samples still belong to the profile (at most a minute of them: a duration that
    // disagrees with the timestamps should not stretch the grid).
    if (heatmap.hasTimestamps() && profile.durationNanos > 0)
        heatmap.extendTo(std::min(profile.timeNanos + profile.durationNanos, last + 60 * Heatmap::kColumnNs));
    return heatmap;
}

} // namespace emberline::engine
