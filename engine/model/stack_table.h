#pragma once

#include "engine/model/chunked_column.h"

#include <cstdint>
#include <span>
#include <vector>

namespace emberline::engine {

// Interns sequences of 32-bit ids (stacks of location indices, leaf first) and hands out dense stack ids.
// Open addressing over a power-of-two slot array. The sequences live in chunks of rows (ChunkedRows) that copies
// of the table share, so a stack costs its frames plus about four words, and copying a table (a live session's
// snapshot after every flush) copies a pointer per 4,096 stacks. A copy leaves the lookup index behind: it is
// rebuilt on the copy's first intern(), so read-only copies never pay for it. Used by the pprof reader, the
// recorder and the merge.
//
// Thread: not synchronised; owned by one thread at a time. Copies may live on other threads.
class StackTable {
public:
    StackTable() = default;
    StackTable(const StackTable &other);
    StackTable &operator=(const StackTable &other);
    StackTable(StackTable &&) noexcept = default;
    StackTable &operator=(StackTable &&) noexcept = default;
    ~StackTable() = default;

    uint32_t intern(std::span<const uint32_t> frames);
    std::span<const uint32_t> stack(uint32_t id) const { return m_rows.row(id); }
    size_t size() const { return m_rows.rows(); }
    size_t frameCount() const { return m_frameCount; }
    void reserve(size_t stacks);
    // Rewrites every stored frame as map(frame) and rehashes; stack ids are kept. `map` must be one-to-one over
    // the frames present, so that distinct stacks stay distinct (the reader's raw id -> location index).
    template <typename Map>
    void remapFrames(Map &&map)
    {
        m_rows.transformValues(map);
        rehashAll();
    }
    // Heap taken by the rows, the hashes and the index (shared chunks counted in full by every copy).
    size_t memoryBytes() const;

private:
    static uint64_t hashFrames(std::span<const uint32_t> frames);
    void grow();
    void rehashAll();

    ChunkedRows<uint32_t> m_rows;
    ChunkedColumn<uint64_t> m_hashes; // per stack, to rehash without rereading frames
    std::vector<uint32_t> m_slots;    // stack id + 1, 0 = empty; empty in a copy until its first intern()
    size_t m_frameCount = 0;
};

} // namespace emberline::engine
