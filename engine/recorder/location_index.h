#pragma once

#include "engine/recorder/location_key.h"

#include <cstdint>
#include <vector>

namespace emberline::engine {

// The recorder's location ids by (module, address): an open-addressing table with the key and the id side by side
// in one 16-byte slot, so that the lookup every unwound frame makes touches one cache line and allocates nothing
// (std::unordered_map chases a node per lookup and allocates one per insertion). Ids are whatever the caller hands
// in on insertion; the table never removes.
//
// Thread: not synchronised; the session thread.
class LocationIndex {
public:
    // The id of `key`; when it is absent, `id` is stored for it and returned, and `inserted` is set.
    uint32_t findOrInsert(const LocationKey &key, uint32_t id, bool &inserted)
    {
        if ((m_size + 1) * 4 > m_slots.size() * 3)
            grow();
        Slot *slot = probe(key);
        if (slot->idPlusOne != 0) {
            inserted = false;
            return slot->idPlusOne - 1;
        }
        slot->address = key.address;
        slot->moduleId = key.moduleId;
        slot->idPlusOne = id + 1;
        ++m_size;
        inserted = true;
        return id;
    }
    // The id of `key`, -1 when it is absent.
    int64_t find(const LocationKey &key) const
    {
        if (m_slots.empty())
            return -1;
        const Slot *slot = probe(key);
        return slot->idPlusOne ? static_cast<int64_t>(slot->idPlusOne - 1) : -1;
    }
    size_t size() const { return m_size; }

private:
    struct Slot {
        uint64_t address = 0;
        uint32_t moduleId = 0;
        uint32_t idPlusOne = 0; // 0: empty
    };

    // The slot that holds `key`, or the empty one where it would go.
    template <typename Self> static auto *probeIn(Self &self, const LocationKey &key)
    {
        const size_t mask = self.m_slots.size() - 1;
        size_t i = LocationKeyHash{}(key)&mask;
        while (self.m_slots[i].idPlusOne != 0 &&
               (self.m_slots[i].address != key.address || self.m_slots[i].moduleId != key.moduleId))
            i = (i + 1) & mask;
        return &self.m_slots[i];
    }
    Slot *probe(const LocationKey &key) { return probeIn(*this, key); }
    const Slot *probe(const LocationKey &key) const { return probeIn(*this, key); }

    void grow()
    {
        std::vector<Slot> old(m_slots.empty() ? 1024 : m_slots.size() * 2);
        old.swap(m_slots);
        for (const Slot &s : old) {
            if (s.idPlusOne != 0)
                *probe(LocationKey{s.moduleId, s.address}) = s;
        }
    }

    std::vector<Slot> m_slots; // a power of two long, at most three quarters full
    size_t m_size = 0;
};

} // namespace emberline::engine
