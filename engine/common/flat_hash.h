#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace emberline::engine {

// A minimal open-addressing map from 64-bit keys to 32-bit values, for the hot loops of tree building and
// recording where std::unordered_map's node allocations dominate. Keys must not be UINT64_MAX.
//
// Thread: not synchronised.
class U64ToU32Map {
public:
    static constexpr uint64_t kEmpty = UINT64_MAX;

    explicit U64ToU32Map(size_t expected = 16) { rehash(capacityFor(expected)); }

    // Returns the value for key, inserting `value` if key was absent; `inserted` tells which.
    uint32_t findOrInsert(uint64_t key, uint32_t value, bool &inserted) { return slotFor(key, value, inserted); }

    // The value slot for key, inserting `value` if key was absent; valid until the next insertion.
    uint32_t &slotFor(uint64_t key, uint32_t value, bool &inserted)
    {
        if ((m_size + 1) * 4 > m_keys.size() * 3)
            rehash(m_keys.size() * 2);
        size_t i = slot(key);
        while (m_keys[i] != kEmpty) {
            if (m_keys[i] == key) {
                inserted = false;
                return m_values[i];
            }
            i = (i + 1) & m_mask;
        }
        m_keys[i] = key;
        m_values[i] = value;
        ++m_size;
        inserted = true;
        return m_values[i];
    }

    const uint32_t *find(uint64_t key) const
    {
        size_t i = slot(key);
        while (m_keys[i] != kEmpty) {
            if (m_keys[i] == key)
                return &m_values[i];
            i = (i + 1) & m_mask;
        }
        return nullptr;
    }

    size_t size() const { return m_size; }

private:
    static size_t capacityFor(size_t n)
    {
        size_t c = 16;
        while (c * 3 < n * 4)
            c *= 2;
        return c;
    }
    size_t slot(uint64_t key) const
    {
        uint64_t h = key * 0x9E3779B97F4A7C15ull;
        return (h ^ (h >> 29)) & m_mask;
    }
    void rehash(size_t capacity)
    {
        std::vector<uint64_t> keys(capacity, kEmpty);
        std::vector<uint32_t> values(capacity);
        keys.swap(m_keys);
        values.swap(m_values);
        m_mask = capacity - 1;
        m_size = 0;
        for (size_t i = 0; i < keys.size(); ++i) {
            if (keys[i] != kEmpty) {
                bool inserted;
                findOrInsert(keys[i], values[i], inserted);
            }
        }
    }

    std::vector<uint64_t> m_keys;
    std::vector<uint32_t> m_values;
    size_t m_mask = 0;
    size_t m_size = 0;
};

} // namespace emberline::engine
