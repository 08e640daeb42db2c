#pragma once

#include <algorithm>
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
        if ((m_size + 1) * 4 > m_slots.size() * 3)
            rehash(m_slots.size() * 2);
        size_t i = slot(key);
        while (!m_slots[i].empty()) {
            if (m_slots[i].key() == key) {
                inserted = false;
                return m_slots[i].value;
            }
            i = (i + 1) & m_mask;
        }
        m_slots[i].setKey(key);
        m_slots[i].value = value;
        ++m_size;
        inserted = true;
        return m_slots[i].value;
    }

    const uint32_t *find(uint64_t key) const
    {
        size_t i = slot(key);
        while (!m_slots[i].empty()) {
            if (m_slots[i].key() == key)
                return &m_slots[i].value;
            i = (i + 1) & m_mask;
        }
        return nullptr;
    }

    size_t size() const { return m_size; }

private:
    // Key and value side by side in 12 bytes, so that a probe touches one cache line, not one per array.
    struct Slot {
        uint32_t keyLow = UINT32_MAX;
        uint32_t keyHigh = UINT32_MAX;
        uint32_t value = 0;
        uint64_t key() const { return (static_cast<uint64_t>(keyHigh) << 32) | keyLow; }
        void setKey(uint64_t k)
        {
            keyLow = static_cast<uint32_t>(k);
            keyHigh = static_cast<uint32_t>(k >> 32);
        }
        bool empty() const { return keyLow == UINT32_MAX && keyHigh == UINT32_MAX; }
    };

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
        std::vector<Slot> slots(capacity);
        slots.swap(m_slots);
        m_mask = capacity - 1;
        m_size = 0;
        for (const Slot &old : slots) {
            if (!old.empty()) {
                bool inserted;
                findOrInsert(old.key(), old.value, inserted);
            }
        }
    }

    std::vector<Slot> m_slots;
    size_t m_mask = 0;
    size_t m_size = 0;
};

// An open-addressing table of 32-bit indices into the caller's own rows, for maps whose key is already stored in
// those rows (an aggregated sample's stack and label set, a call-tree node's parent and frame): a slot is the
// index and a one-byte tag of the key's hash, 5 bytes where a map that keeps its keys takes 12 or more. A lookup
// hashes the key it looks for and asks the caller whether the row at a probed index holds it, only where the tag
// matches (one probe in 128 of those that miss), so a lookup reads about one row whatever the load; growing asks
// the caller for the hash of each row.
//
// Thread: not synchronised.
class IndexHashTable {
public:
    static constexpr uint32_t kNone = UINT32_MAX;

    // The index of the row `matches` accepts among those inserted under `hash`, or kNone.
    template <typename Matches> uint32_t find(uint64_t hash, Matches &&matches) const
    {
        if (m_tags.empty())
            return kNone;
        const uint64_t h = mix(hash);
        const uint8_t want = tagOf(h);
        for (size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            const uint8_t tag = m_tags[i];
            if (tag == kEmptyTag)
                return kNone;
            if (tag == want && matches(m_slots[i]))
                return m_slots[i];
        }
    }

    // Adds `index` (not kNone, not present) under `hash`. `hashOf(index)` gives the hash of a row already in the
    // table, for when it grows.
    template <typename HashOf> void insert(uint64_t hash, uint32_t index, HashOf &&hashOf)
    {
        if ((m_size + 1) * 4 > m_tags.size() * 3) {
            const size_t capacity = std::max<size_t>(16, m_tags.size() * 2);
            std::vector<uint32_t> oldSlots(capacity);
            std::vector<uint8_t> oldTags(capacity, kEmptyTag);
            oldSlots.swap(m_slots);
            oldTags.swap(m_tags);
            m_mask = capacity - 1;
            for (size_t i = 0; i < oldTags.size(); ++i) {
                if (oldTags[i] != kEmptyTag)
                    place(mix(hashOf(oldSlots[i])), oldSlots[i]);
            }
        }
        place(mix(hash), index);
        ++m_size;
    }

    size_t size() const { return m_size; }
    size_t memoryBytes() const { return m_slots.capacity() * sizeof(uint32_t) + m_tags.capacity(); }

private:
    static constexpr uint8_t kEmptyTag = 0;
    static uint64_t mix(uint64_t hash)
    {
        const uint64_t h = hash * 0x9E3779B97F4A7C15ull;
        return h ^ (h >> 29);
    }
    // The top seven bits (the slot comes from the low ones), with the eighth set so that no tag is empty.
    static uint8_t tagOf(uint64_t mixed) { return static_cast<uint8_t>((mixed >> 57) | 0x80); }
    void place(uint64_t mixed, uint32_t index)
    {
        size_t i = mixed & m_mask;
        while (m_tags[i] != kEmptyTag)
            i = (i + 1) & m_mask;
        m_slots[i] = index;
        m_tags[i] = tagOf(mixed);
    }

    std::vector<uint32_t> m_slots;
    std::vector<uint8_t> m_tags; // per slot: kEmptyTag, or the tag of the hash the slot's index was put under
    size_t m_mask = 0;
    size_t m_size = 0;
};

} // namespace emberline::engine
