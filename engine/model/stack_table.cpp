#include "engine/model/stack_table.h"

#include <algorithm>

namespace emberline::engine {

StackTable::StackTable(const StackTable &other)
    : m_rows(other.m_rows), m_hashes(other.m_hashes), m_frameCount(other.m_frameCount)
{
}

StackTable &StackTable::operator=(const StackTable &other)
{
    if (this != &other) {
        m_rows = other.m_rows;
        m_hashes = other.m_hashes;
        m_slots.clear();
        m_frameCount = other.m_frameCount;
    }
    return *this;
}

uint64_t StackTable::hashFrames(std::span<const uint32_t> frames)
{
    // 64-bit multiply-mix per element; strong enough for ids, cheap enough for the sampling path.
    uint64_t h = 0x9E3779B97F4A7C15ull ^ frames.size();
    for (uint32_t f : frames) {
        h ^= f;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

void StackTable::reserve(size_t stacks)
{
    m_rows.reserveRows(stacks);
    m_hashes.reserveRows(stacks);
}

size_t StackTable::memoryBytes() const
{
    return m_rows.memoryBytes() + m_hashes.memoryBytes() + m_slots.capacity() * sizeof(uint32_t);
}

void StackTable::grow()
{
    // At most half full after growing: the index of a copy (empty) is rebuilt at the size its stacks need.
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

void StackTable::rehashAll()
{
    for (size_t id = 0; id < size(); ++id)
        m_hashes.mutableRow(id)[0] = hashFrames(stack(static_cast<uint32_t>(id)));
    m_slots.clear();
    grow();
}

uint32_t StackTable::intern(std::span<const uint32_t> frames)
{
    if ((size() + 1) * 2 > m_slots.size())
        grow();
    const uint64_t h = hashFrames(frames);
    const size_t mask = m_slots.size() - 1;
    size_t i = h & mask;
    while (uint32_t slot = m_slots[i]) {
        const uint32_t id = slot - 1;
        if (m_hashes[id] == h) {
            auto existing = stack(id);
            if (existing.size() == frames.size() && std::equal(existing.begin(), existing.end(), frames.begin()))
                return id;
        }
        i = (i + 1) & mask;
    }
    const auto id = static_cast<uint32_t>(size());
    m_rows.appendRow(frames);
    m_hashes.push_back(h);
    m_frameCount += frames.size();
    m_slots[i] = id + 1;
    return id;
}

} // namespace emberline::engine
