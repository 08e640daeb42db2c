#include "engine/live/flush_memory.h"

#include <algorithm>

namespace emberline::engine {

FlushMemory::FlushMemory(const SampleOverlay &rows) : m_totals(rows.types.size(), 0), m_width(rows.types.size())
{
    uint32_t previous = 0;
    for (size_t k = 0; k < rows.samples.size(); ++k) {
        const std::span<const int64_t> values = rows.row(k);
        if (std::all_of(values.begin(), values.end(), [](int64_t v) { return v == 0; }))
            continue;
        putVarint(rows.samples[k] - previous);
        previous = rows.samples[k];
        for (size_t c = 0; c < values.size(); ++c) {
            const int64_t v = values[c];
            putVarint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
            m_totals[c] += v;
        }
        ++m_rows;
    }
    m_packed.shrink_to_fit();
}

void FlushMemory::putVarint(uint64_t v)
{
    while (v >= 0x80) {
        m_packed.push_back(static_cast<uint8_t>(v | 0x80));
        v >>= 7;
    }
    m_packed.push_back(static_cast<uint8_t>(v));
}

} // namespace emberline::engine
