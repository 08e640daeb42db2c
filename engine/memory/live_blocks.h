#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace emberline::engine {

// The live blocks of a heap by (process image, address): an open-addressing table with the blocks in its slots
// (linear probing, deletion by shifting back, so that no tombstone slows later look-ups). In exact mode every
// allocation inserts and every free looks up and erases: millions a second, where std::unordered_map's node per
// block cost two or three cache misses each (a fifth of the session's time on a CPython run). Image 0 marks an empty
// slot: the session numbers images from 1.
//
// Thread: not synchronised.
template <typename Block> class LiveBlocks {
public:
    LiveBlocks() { m_slots.resize(kFirstCapacity); }

    size_t size() const { return m_size; }

    // Asks the CPU for the cache lines of the slot where (image, address) is looked up first (its first and last
    // bytes: a slot may span two lines): a reader that knows the blocks it will look up next hides its misses behind
    // its work on those before (a hint; the table may grow meanwhile). An instruction of its own: GCC takes a
    // function whose only effect is __builtin_prefetch for a pure one, and drops the calls to it.
    void prefetch(uint64_t image, uint64_t address) const
    {
        const Slot *slot = m_slots.data() + home(image, address);
        const char *last = reinterpret_cast<const char *>(slot) + sizeof(Slot) - 1;
#if defined(__x86_64__)
        asm volatile("prefetcht0 %0\n\tprefetcht0 %1" : : "m"(*slot), "m"(*last));
#else
        __builtin_prefetch(slot);
        __builtin_prefetch(last);
#endif
    }

    Block *find(uint64_t image, uint64_t address)
    {
        for (size_t i = home(image, address);; i = (i + 1) & mask()) {
            Slot &s = m_slots[i];
            if (s.image == 0)
                return nullptr;
            if (s.image == image && s.address == address)
                return &s.block;
        }
    }

    // The block at (image, address), made (default) when absent; `inserted` says which. Valid until the next
    // insertion or erasure.
    Block &tryEmplace(uint64_t image, uint64_t address, bool &inserted)
    {
        if ((m_size + 1) * 2 > m_slots.size())
            grow();
        size_t i = home(image, address);
        for (;; i = (i + 1) & mask()) {
            Slot &s = m_slots[i];
            if (s.image == 0)
                break;
            if (s.image == image && s.address == address) {
                inserted = false;
                return s.block;
            }
        }
        m_slots[i] = Slot{image, address, Block{}};
        ++m_size;
        inserted = true;
        return m_slots[i].block;
    }

    // Erases the block at (image, address); false when there is none.
    bool erase(uint64_t image, uint64_t address)
    {
        size_t i = home(image, address);
        for (;; i = (i + 1) & mask()) {
            if (m_slots[i].image == 0)
                return false;
            if (m_slots[i].image == image && m_slots[i].address == address)
                break;
        }
        // Shift back every later block of the run that may sit at i (its home is not in (i, j]).
        for (size_t j = (i + 1) & mask(); m_slots[j].image != 0; j = (j + 1) & mask()) {
            const size_t k = home(m_slots[j].image, m_slots[j].address);
            const bool between = i <= j ? (i < k && k <= j) : (i < k || k <= j);
            if (between)
                continue;
            m_slots[i] = m_slots[j];
            i = j;
        }
        m_slots[i].image = 0;
        --m_size;
        return true;
    }

    // Calls f(image, address, block) for every live block, in no particular order.
    template <typename F> void forEach(F &&f) const
    {
        for (const Slot &s : m_slots)
            if (s.image != 0)
                f(s.image, s.address, s.block);
    }

    // Erases every block of `image`, handing each to f(address, block) first.
    template <typename F> void eraseImage(uint64_t image, F &&f)
    {
        std::vector<uint64_t> addresses;
        for (const Slot &s : m_slots)
            if (s.image == image)
                addresses.push_back(s.address);
        for (uint64_t address : addresses) {
            f(address, *find(image, address));
            erase(image, address);
        }
    }

private:
    static constexpr size_t kFirstCapacity = 1024;
    struct Slot {
        uint64_t image = 0;
        uint64_t address = 0;
        Block block{};
    };

    size_t mask() const
    {
        return m_slots.size() - 1;
    }
    // Blocks close in memory have homes close in the table: a 256-byte stretch of the address space (16 blocks of 16
    // bytes) takes 16 slots in a row, the stretches scattered by a hash. A program allocates and frees near where it
    // did a moment ago, and the slots it touches share cache lines and pages: the session's exact-mode CPU on CPython
    // fell by about a sixth against a hash of the whole address. Stretches no longer than that keep linear probing's
    // runs short where blocks are dense (a look-up among 2 million blocks 16 bytes apart, in no order: 57 ns against
    // 34 with the whole address hashed; 1 KiB stretches took 139).
    size_t home(uint64_t image, uint64_t address) const
    {
        uint64_t h = ((address >> 8) ^ (image << 48)) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 31;
        return size_t(h + ((address >> 4) & 15)) & mask();
    }
    void grow()
    {
        std::vector<Slot> old(m_slots.size() * 2);
        std::swap(old, m_slots);
        m_size = 0;
        for (Slot &s : old) {
            if (s.image == 0)
                continue;
            bool inserted = false;
            tryEmplace(s.image, s.address, inserted) = std::move(s.block);
        }
    }

    std::vector<Slot> m_slots;
    size_t m_size = 0;
};

} // namespace emberline::engine
