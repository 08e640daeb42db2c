#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace emberline::engine {

// A sorted array of half-open address ranges [start, end), each with a value, answered by a binary search: which
// module holds a pc, which file bytes back an address. The memory maps change rarely and are asked on every frame,
// so the ranges are collected (add), sorted once (build), and then read without walking a tree or allocating.
// Ranges may be added in any order; whether two of them overlap is noted by build(), and find() then answers only
// for an address that one range alone holds (a caller that must pick among overlapping ranges asks overlaps()).
//
// Thread: not synchronised; the session thread.
template <typename T> class AddressIndex {
public:
    struct Range {
        uint64_t start = 0;
        uint64_t end = 0;
        T value{};
    };

    void clear()
    {
        m_ranges.clear();
        m_overlaps = false;
    }
    // An empty range (end <= start) is ignored. Call build() before the next find().
    void add(uint64_t start, uint64_t end, T value)
    {
        if (end > start)
            m_ranges.push_back(Range{start, end, std::move(value)});
    }
    // Sorts by start (ranges with the same start keep the order they were added in) and notes overlaps.
    void build()
    {
        std::stable_sort(m_ranges.begin(), m_ranges.end(),
                         [](const Range &a, const Range &b) { return a.start < b.start; });
        m_overlaps = false;
        for (size_t i = 1; i < m_ranges.size() && !m_overlaps; ++i)
            m_overlaps = m_ranges[i].start < m_ranges[i - 1].end;
    }
    bool overlaps() const { return m_overlaps; }

    // The range that holds all of [address, address + size) (size 0 counts as 1), or nullptr. With overlapping
    // ranges, the one with the greatest start not above `address`.
    const Range *find(uint64_t address, uint64_t size = 1) const
    {
        auto it = std::upper_bound(m_ranges.begin(), m_ranges.end(), address,
                                   [](uint64_t a, const Range &r) { return a < r.start; });
        if (it == m_ranges.begin())
            return nullptr;
        const Range &r = *std::prev(it);
        if (address >= r.end || std::max<uint64_t>(size, 1) > r.end - address)
            return nullptr;
        return &r;
    }

    const std::vector<Range> &ranges() const { return m_ranges; }
    size_t size() const { return m_ranges.size(); }
    bool empty() const { return m_ranges.empty(); }

private:
    std::vector<Range> m_ranges;
    bool m_overlaps = false;
};

} // namespace emberline::engine
