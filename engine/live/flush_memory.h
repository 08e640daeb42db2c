#pragma once

#include "engine/model/sample_overlay.h"

#include <cstdint>
#include <span>
#include <vector>

namespace emberline::engine {

// One flush's memory samples in a live session: per aggregated sample, its values of the session's memory types
// (LiveSnapshot::memoryTypes) in that flush, the allocations made during it and the in-use snapshot at its end. A
// time range or a flush of the session takes its memory values from here (the aggregate sums the allocations and
// keeps the newest snapshot only). Memory samples have no moment within their flush, so they are kept here instead of
// on the timeline of samples.
//
// Packed as the timeline is, in base-128 varints: per row, the change of the sample index since the row before and
// each value zigzagged; a dozen bytes a row where plain arrays take 36 (a memory session repeats its whole in-use
// snapshot in every flush). Immutable once built.
class FlushMemory {
public:
    FlushMemory() = default;
    // The rows of `rows` (samples ascending, as SampleOverlayBuilder gives them); rows of zeros are left out.
    explicit FlushMemory(const SampleOverlay &rows);

    size_t rows() const { return m_rows; }
    size_t width() const { return m_width; }
    // Per column, the sum over every row: what the flush allocated, what was in use at its end (the memory chart).
    const std::vector<int64_t> &totals() const { return m_totals; }
    // f(uint32_t sample, std::span<const int64_t> values) for every row, samples ascending.
    template <typename F> void forEach(F &&f) const
    {
        std::vector<int64_t> values(m_width);
        const uint8_t *p = m_packed.data();
        uint32_t sample = 0;
        for (size_t r = 0; r < m_rows; ++r) {
            sample += static_cast<uint32_t>(getVarint(p));
            for (int64_t &v : values) {
                const uint64_t zigzag = getVarint(p);
                v = static_cast<int64_t>(zigzag >> 1) ^ -static_cast<int64_t>(zigzag & 1);
            }
            f(sample, std::span<const int64_t>(values));
        }
    }
    size_t memoryBytes() const { return m_packed.capacity() + m_totals.capacity() * sizeof(int64_t); }

private:
    void putVarint(uint64_t v);
    static uint64_t getVarint(const uint8_t *&p)
    {
        uint64_t v = 0;
        for (unsigned shift = 0;; shift += 7) {
            const uint8_t byte = *p++;
            v |= static_cast<uint64_t>(byte & 0x7f) << shift;
            if (byte < 0x80)
                return v;
        }
    }

    std::vector<uint8_t> m_packed;
    std::vector<int64_t> m_totals;
    size_t m_rows = 0;
    size_t m_width = 0;
};

} // namespace emberline::engine
