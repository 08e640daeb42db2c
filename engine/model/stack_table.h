#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace emberline::engine {

// Interns sequences of 32-bit ids (stacks of location indices, leaf first) and hands out dense stack ids.
// Open addressing over a power-of-two slot array; the sequences live back to back in one vector, so a stack
// costs its frames plus two words. Used by the pprof reader, the recorder and the merge.
//
// Thread: not synchronised; owned by one thread at a time.
class StackTable {
public:
    uint32_t intern(std::span<const uint32_t> frames);
    std::span<const uint32_t> stack(uint32_t id) const
    {
        return {m_frames.data() + m_offsets[id], m_offsets[id + 1] - m_offsets[id]};
    }
    size_t size() const { return m_offsets.size() - 1; }
    size_t frameCount() const { return m_frames.size(); }
    void reserve(size_t stacks, size_t frames);
    // Rewrites every stored frame as map(frame) and rehashes; stack ids are kept. `map` must be one-to-one over
    // the frames present, so that distinct stacks stay distinct (the reader's raw id -> location index).
    template <typename Map>
    void remapFrames(Map &&map)
    {
        for (uint32_t &f : m_frames)
            f = map(f);
        rehashAll();
    }
    size_t memoryBytes() const;

private:
    static uint64_t hashFrames(std::span<const uint32_t> frames);
    void grow();
    void rehashAll();

    std::vector<uint32_t> m_frames;
    std::vector<uint32_t> m_offsets{0};
    std::vector<uint64_t> m_hashes;          // per stack, to rehash without rereading frames
    std::vector<uint32_t> m_slots;           // stack id + 1, 0 = empty
};

} // namespace emberline::engine
