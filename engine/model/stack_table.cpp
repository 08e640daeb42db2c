#include "engine/model/stack_table.h"

#include <algorithm>
#include <cstring>

namespace emberline::engine {

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

void StackTable::reserve(size_t stacks, size_t frames)
{
    m_frames.reserve(frames);
    m_offsets.reserve(stacks + 1);
    m_hashes.reserve(stacks);
}

size_t StackTable::memoryBytes() const
{
    return m_frames.capacity() * sizeof(uint32_t) + m_offsets.capacity() * sizeof(uint32_t) +
           m_hashes.capacity() * sizeof(uint64_t) + m_slots.capacity() * sizeof(uint32_t);
}

void StackTable::grow()
{
    size_t newSize = m_slots.empty() ? 1024 : m_slots.size() * 2;
    std::vector<uint32_t> slots(newSize, 0);
    const size_t mask = newSize - 1;
    for (uint32_t id = 0; id < m_hashes.size(); ++id) {
        size_t i = m_hashes[id] & mask;
        while (slots[i] != 0)
            i = (i + 1) & mask;
        slots[i] = id + 1;
    }
    m_slots.swap(slots);
}

void StackTable::rehashAll()
{
    for (uint32_t id = 0; id < m_hashes.size(); ++id)
        m_hashes[id] = hashFrames(stack(id));
    m_slots.clear();
    size_t slots = 1024;
    while (slots < (m_hashes.size() + 1) * 2)
        slots *= 2;
    m_slots.resize(slots / 2); // grow() doubles it and reinserts every stack
    grow();
}

uint32_t StackTable::intern(std::span<const uint32_t> frames)
{
    if ((m_hashes.size() + 1) * 2 > m_slots.size())
        grow();
    const uint64_t h = hashFrames(frames);
    const size_t mask = m_slots.size() - 1;
    size_t i = h & mask;
    while (uint32_t slot = m_slots[i]) {
        const uint32_t id = slot - 1;
        if (m_hashes[id] == h) {
            auto existing = stack(id);
            if (existing.size() == frames.size() &&
                std::equal(existing.begin(), existing.end(), frames.begin()))
                return id;
        }
        i = (i + 1) & mask;
    }
    const auto id = static_cast<uint32_t>(m_hashes.size());
    m_frames.insert(m_frames.end(), frames.begin(), frames.end());
    m_offsets.push_back(static_cast<uint32_t>(m_frames.size()));
    m_hashes.push_back(h);
    m_slots[i] = id + 1;
    return id;
}

} // namespace emberline::engine
