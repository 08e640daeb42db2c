#pragma once

#include "engine/model/chunked_column.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace emberline::engine {

// One step of the 64-bit multiply-mix that InternedRows' hashes are made of: strong enough for ids, cheap enough for
// the sampling path. A row's hash starts at kRowHashSeed ^ its length and mixes in each value.
inline constexpr uint64_t kRowHashSeed = 0x9E3779B97F4A7C15ull;
inline uint64_t mixRowHash(uint64_t h, uint64_t value)
{
    h ^= value;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

// Interns rows of values (a stack's location ids, a sample's labels) and hands out dense row ids: each distinct
// row is stored once. Open addressing over a power-of-two slot array. The rows live in chunks (ChunkedRows) that
// copies of the table share, with their hashes beside them, so copying a table (a live session's snapshot after
// every flush) copies a pointer per 4,096 rows. A copy leaves the lookup index behind: it is rebuilt on the copy's
// first intern(), so read-only copies never pay for it.
//
// `Hash` is a callable uint64_t(std::span<const T>); T needs ==.
//
// Thread: not synchronised; owned by one thread at a time. Copies may live on other threads.
template <typename T, typename Hash> class InternedRows {
public:
    InternedRows() = default;
    InternedRows(const InternedRows &other)
        : m_rows(other.m_rows), m_hashes(other.m_hashes), m_valueCount(other.m_valueCount)
    {
    }
    InternedRows &operator=(const InternedRows &other)
    {
        if (this != &other) {
            m_rows = other.m_rows;
            m_hashes = other.m_hashes;
            m_slots.clear();
            m_valueCount = other.m_valueCount;
        }
        return *this;
    }
    InternedRows(InternedRows &&) noexcept = default;
    InternedRows &operator=(InternedRows &&) noexcept = default;
    ~InternedRows() = default;

    uint32_t intern(std::span<const T> values)
    {
        if ((size() + 1) * 2 > m_slots.size())
            grow();
        const uint64_t h = Hash{}(values);
        const size_t mask = m_slots.size() - 1;
        size_t i = h & mask;
        while (uint32_t slot = m_slots[i]) {
            const uint32_t id = slot - 1;
            if (m_hashes[id] == h) {
                const auto existing = row(id);
                if (existing.size() == values.size() && std::equal(existing.begin(), existing.end(), values.begin()))
                    return id;
            }
            i = (i + 1) & mask;
        }
        const auto id = static_cast<uint32_t>(size());
        m_rows.appendRow(values);
        m_hashes.push_back(h);
        m_valueCount += values.size();
        m_slots[i] = id + 1;
        return id;
    }
    std::span<const T> row(uint32_t id) const { return m_rows.row(id); }
    size_t size() const { return m_rows.rows(); }
    size_t valueCount() const { return m_valueCount; }
    void reserve(size_t rows)
    {
        m_rows.reserveRows(rows);
        m_hashes.reserveRows(rows);
    }
    // Rewrites every stored value as map(value) and rehashes; row ids are kept. `map` must be one-to-one over the
    // values present, so that distinct rows stay distinct.
    template <typename Map> void remapValues(Map &&map)
    {
        m_rows.transformValues(map);
        for (size_t id = 0; id < size(); ++id)
            m_hashes.mutableRow(id)[0] = Hash{}(row(static_cast<uint32_t>(id)));
        m_slots.clear();
        grow();
    }
    // Heap taken by the rows, the hashes and the index (shared chunks counted in full by every copy).
    size_t memoryBytes() const
    {
        return m_rows.memoryBytes() + m_hashes.memoryBytes() + m_slots.capacity() * sizeof(uint32_t);
    }

private:
    void grow()
    {
        // At most half full after growing: the index of a copy (empty) is rebuilt at the size its rows need.
        size_t newSize = std::max<size_t>(m_slots.size() * 2, 1024);
        while (newSize < (size() + 1) * 2)
            newSize *= 2;
        std::vector<uint32_t> slots(newSize, 0);
        const size_t mask = newSize - 1;
        for (size_t id = 0; id < m_hashes.size(); ++id) {
            size_t i = m_hashes[id] & mask;
            while (slots[i] != 0)
                i = (i + 1) & mask;
            slots[i] = static_cast<uint32_t>(id + 1);
        }
        m_slots.swap(slots);
    }

    ChunkedRows<T> m_rows;
    ChunkedColumn<uint64_t> m_hashes; // per row, to rebuild the index without rereading rows
    std::vector<uint32_t> m_slots;    // row id + 1, 0 = empty; empty in a copy until its first intern()
    size_t m_valueCount = 0;
};

} // namespace emberline::engine
