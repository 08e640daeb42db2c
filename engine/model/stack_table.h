#pragma once

#include "engine/model/interned_rows.h"

#include <cstdint>
#include <span>

namespace emberline::engine {

// Interns sequences of 32-bit ids (stacks of location indices, leaf first) and hands out dense stack ids
// (InternedRows: a stack costs its frames plus about four words, and copies share the stacks). Used by the pprof
// reader, the recorder and the merge.
//
// Thread: not synchronised; owned by one thread at a time. Copies may live on other threads.
class StackTable {
public:
    uint32_t intern(std::span<const uint32_t> frames) { return m_rows.intern(frames); }
    std::span<const uint32_t> stack(uint32_t id) const { return m_rows.row(id); }
    size_t size() const { return m_rows.size(); }
    size_t frameCount() const { return m_rows.valueCount(); }
    void reserve(size_t stacks) { m_rows.reserve(stacks); }
    // Rewrites every stored frame as map(frame) and rehashes; stack ids are kept. `map` must be one-to-one over
    // the frames present, so that distinct stacks stay distinct (the reader's raw id -> location index).
    template <typename Map> void remapFrames(Map &&map) { m_rows.remapValues(map); }
    size_t memoryBytes() const { return m_rows.memoryBytes(); }

private:
    struct HashFrames {
        uint64_t operator()(std::span<const uint32_t> frames) const;
    };
    InternedRows<uint32_t, HashFrames> m_rows;
};

} // namespace emberline::engine
