#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// Frame text -> location, for the hot loop of an import: the keys live end to end in one string and the table is
// open-addressed, so a lookup is one hash over the text, one probe and one comparison, without a node or an
// allocation per frame.
//
// Thread: owned by one parser's thread.
class FrameTextCache {
public:
    FrameTextCache() { m_slots.resize(1024); }

    const uint32_t *find(std::string_view key) const
    {
        const uint64_t h = hashText(key);
        for (size_t i = h & (m_slots.size() - 1);; i = (i + 1) & (m_slots.size() - 1)) {
            const Slot &slot = m_slots[i];
            if (slot.length == kEmptySlot)
                return nullptr;
            if (slot.hash == h && slot.length == key.size() &&
                std::memcmp(m_text.data() + slot.offset, key.data(), key.size()) == 0)
                return &slot.location;
        }
    }

    // Adds a key that find() did not find.
    void insert(std::string_view key, uint32_t location)
    {
        if ((m_size + 1) * 4 > m_slots.size() * 3)
            grow();
        place(Slot{hashText(key), m_text.size(), static_cast<uint32_t>(key.size()), location});
        m_text.append(key);
        ++m_size;
    }

    // Sixteen bytes at a time in two independent lanes (thirty-two in four for long texts), each word folded in with
    // a multiply, so that the multiplies overlap; the last one to sixteen bytes are read as the words ending the text
    // (overlapping bytes already hashed, which is harmless) rather than byte by byte.
    static uint64_t hashText(std::string_view s)
    {
        constexpr uint64_t kMulA = 0x9E3779B97F4A7C15ull;
        constexpr uint64_t kMulB = 0xC2B2AE3D27D4EB4Full;
        const char *p = s.data();
        size_t n = s.size();
        uint64_t a = n;
        uint64_t b = ~uint64_t(0);
        if (n < 8) {
            uint64_t w = 0;
            if (n > 0)
                std::memcpy(&w, p, n);
            a = (a ^ w) * kMulA;
        } else {
            const char *const end = p + n;
            if (n > 64) { // a sample's frame lines: four lanes
                uint64_t c = n * kMulB;
                uint64_t d = ~c;
                for (; n > 32; p += 32, n -= 32) {
                    a = (a ^ word(p)) * kMulA;
                    b = (b ^ word(p + 8)) * kMulB;
                    c = (c ^ word(p + 16)) * kMulA;
                    d = (d ^ word(p + 24)) * kMulB;
                    a ^= a >> 29;
                    b ^= b >> 31;
                    c ^= c >> 29;
                    d ^= d >> 31;
                }
                a ^= (c >> 17) ^ (c << 47);
                b ^= (d >> 23) ^ (d << 41);
            }
            for (; n > 16; p += 16, n -= 16) {
                a = (a ^ word(p)) * kMulA;
                b = (b ^ word(p + 8)) * kMulB;
                a ^= a >> 29;
                b ^= b >> 31;
            }
            if (n > 8)
                a = (a ^ word(p)) * kMulA;
            b = (b ^ word(end - 8)) * kMulB;
        }
        uint64_t h = (a ^ (b >> 32) ^ (b << 32)) * kMulA;
        return h ^ (h >> 32);
    }

private:
    static constexpr uint32_t kEmptySlot = UINT32_MAX;
    struct Slot {
        uint64_t hash = 0;
        size_t offset = 0;
        uint32_t length = kEmptySlot;
        uint32_t location = 0;
    };

    static uint64_t word(const char *p)
    {
        uint64_t w = 0;
        std::memcpy(&w, p, sizeof w);
        return w;
    }

    void place(const Slot &slot)
    {
        size_t i = slot.hash & (m_slots.size() - 1);
        while (m_slots[i].length != kEmptySlot)
            i = (i + 1) & (m_slots.size() - 1);
        m_slots[i] = slot;
    }

    void grow()
    {
        std::vector<Slot> old(m_slots.size() * 2);
        old.swap(m_slots);
        for (const Slot &slot : old) {
            if (slot.length != kEmptySlot)
                place(slot);
        }
    }

    std::vector<Slot> m_slots;
    std::string m_text;
    size_t m_size = 0;
};

} // namespace emberline::engine
