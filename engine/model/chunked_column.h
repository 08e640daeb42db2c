#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace emberline::engine {

namespace chunked {

// True when `owner` is the only reference to its chunk, so that it may be written in place. use_count() is a
// relaxed read; the fence pairs with the release of a copy's last reference on another thread, so that thread's
// reads of the chunk happen before this thread writes it.
template <typename Chunk> bool exclusive(const std::shared_ptr<Chunk> &owner)
{
    if (owner.use_count() != 1)
        return false;
    std::atomic_thread_fence(std::memory_order_acquire);
    return true;
}

} // namespace chunked

// A column of fixed-width rows (one value, or one row of sample values) kept in chunks that copies of the column
// share: copying a column copies a pointer per chunk, and a write (an append or a change) copies only the chunk
// it touches, and only while another copy still shares it. So a profile that grows flush by flush can be
// snapshotted after every flush for readers on other threads at the cost of the chunks the next flush changes.
//
// Thread: one writer per copy; copies may live on other threads (each chunk is immutable while shared).
template <typename T> class ChunkedColumn {
public:
    // Rows of `width` values each; must be set before the first row (0: rows without values).
    void setWidth(size_t width)
    {
        m_width = width;
        m_rowShift = 0;
        while (m_rowShift < kMaxRowShift && (size_t{2} << m_rowShift) * std::max<size_t>(width, 1) <= kChunkValues)
            ++m_rowShift;
    }
    size_t width() const { return m_width; }
    size_t rows() const { return m_rows; }
    size_t size() const { return m_rows; } // of a width-1 column: its values
    bool empty() const { return m_rows == 0; }

    std::span<const T> row(size_t i) const
    {
        return {m_chunks[i >> m_rowShift].get() + (i & rowMask()) * m_width, m_width};
    }
    const T &operator[](size_t i) const { return m_chunks[i >> m_rowShift][i & rowMask()]; } // width 1
    // The row to change in place; its chunk is copied first if another copy of the column shares it.
    std::span<T> mutableRow(size_t i) { return {writable(i >> m_rowShift) + (i & rowMask()) * m_width, m_width}; }
    // Appends a row of width() values (missing values are 0, extra ones are dropped).
    void appendRow(std::span<const T> values)
    {
        const size_t c = m_rows >> m_rowShift;
        const size_t at = (m_rows & rowMask()) * m_width;
        T *chunk = nullptr;
        if (c == m_chunks.size()) {
            // The first chunk grows as rows come, so that small profiles stay small; later ones are made whole.
            if (c == 0)
                m_firstCapacity = std::min(chunkValues(), std::max(m_firstCapacity, m_width));
            m_chunks.push_back(std::make_shared_for_overwrite<T[]>(capacityOf(c)));
            chunk = m_chunks.back().get();
        } else if (c == 0 && at + m_width > m_firstCapacity) {
            const size_t capacity = std::min(chunkValues(), std::max<size_t>(m_firstCapacity * 2, m_width));
            auto grown = std::make_shared_for_overwrite<T[]>(capacity);
            std::copy_n(m_chunks[0].get(), at, grown.get());
            m_chunks[0] = std::move(grown);
            m_firstCapacity = capacity;
            chunk = m_chunks[0].get();
        } else {
            chunk = writable(c);
        }
        const size_t n = std::min(values.size(), m_width);
        std::copy_n(values.begin(), n, chunk + at);
        std::fill_n(chunk + at + n, m_width - n, T{});
        ++m_rows;
    }
    void push_back(const T &value) { appendRow(std::span<const T>(&value, 1)); }
    void reserveRows(size_t rows) { m_chunks.reserve((rows >> m_rowShift) + 1); }
    // Heap taken by the chunks (shared chunks counted in full by every copy).
    size_t memoryBytes() const
    {
        size_t bytes = m_chunks.capacity() * sizeof(m_chunks[0]);
        for (size_t c = 0; c < m_chunks.size(); ++c)
            bytes += kChunkOverhead + capacityOf(c) * sizeof(T);
        return bytes;
    }

private:
    // Small chunks: a live session's aggregate changes the values of a few thousand samples scattered over a
    // million in every flush, and a snapshot a reader holds makes each chunk the flush touches a copy. At 256
    // values (2 KiB of int64) a flush copies about a fifth of the column at most, where 64 Ki-value chunks made
    // it copy all of it. A chunk is one allocation (its values after the shared count), so a copy costs one
    // malloc and its bookkeeping stays under 2% of it.
    static constexpr size_t kChunkValues = size_t{1} << 8;
    static constexpr unsigned kMaxRowShift = 16;
    static constexpr size_t kChunkOverhead = 32; // the shared count beside the values, and the allocator's header
    size_t rowMask() const { return (size_t{1} << m_rowShift) - 1; }
    size_t chunkValues() const { return std::max<size_t>((size_t{1} << m_rowShift) * m_width, 1); }
    size_t capacityOf(size_t c) const { return c == 0 ? m_firstCapacity : chunkValues(); }
    T *writable(size_t c)
    {
        // A chunk is written only while this column alone holds it.
        if (!chunked::exclusive(m_chunks[c])) {
            const size_t used = std::min(m_rows - (c << m_rowShift), size_t{1} << m_rowShift) * m_width;
            auto copy = std::make_shared_for_overwrite<T[]>(capacityOf(c));
            std::copy_n(m_chunks[c].get(), used, copy.get());
            m_chunks[c] = std::move(copy);
        }
        return m_chunks[c].get();
    }

    size_t m_width = 1;
    unsigned m_rowShift = std::countr_zero(kChunkValues); // width 1
    size_t m_rows = 0;
    size_t m_firstCapacity = 16; // values the first chunk has room for
    std::vector<std::shared_ptr<T[]>> m_chunks;
};

// Rows of any length (a sample's labels), in chunks of a fixed number of rows shared between copies as in
// ChunkedColumn. Rows are only appended.
template <typename T> class ChunkedRows {
public:
    size_t rows() const { return m_rows; }
    std::span<const T> row(size_t i) const
    {
        const Chunk &chunk = *m_chunks[i >> kRowShift];
        const size_t r = i & kRowMask;
        return {chunk.values.data() + chunk.offsets[r], chunk.offsets[r + 1] - chunk.offsets[r]};
    }
    void appendRow(std::span<const T> values)
    {
        const size_t c = m_rows >> kRowShift;
        if (c == m_chunks.size()) {
            // The previous chunk is full: give back what its vectors' doubling left unused.
            if (c > 0 && chunked::exclusive(m_chunks[c - 1])) {
                m_chunks[c - 1]->offsets.shrink_to_fit();
                m_chunks[c - 1]->values.shrink_to_fit();
            }
            m_chunks.push_back(std::make_shared<Chunk>());
        }
        if (!chunked::exclusive(m_chunks[c]))
            m_chunks[c] = std::make_shared<Chunk>(*m_chunks[c]);
        Chunk &chunk = *m_chunks[c];
        chunk.values.insert(chunk.values.end(), values.begin(), values.end());
        chunk.offsets.push_back(static_cast<uint32_t>(chunk.values.size()));
        ++m_rows;
    }
    void reserveRows(size_t rows) { m_chunks.reserve((rows >> kRowShift) + 1); }
    // Rewrites every value of every row as f(value); shared chunks are copied first.
    template <typename F> void transformValues(F &&f)
    {
        for (auto &chunk : m_chunks) {
            if (!chunked::exclusive(chunk))
                chunk = std::make_shared<Chunk>(*chunk);
            for (T &value : chunk->values)
                value = f(value);
        }
    }
    size_t memoryBytes() const
    {
        size_t bytes = m_chunks.capacity() * sizeof(m_chunks[0]);
        for (const auto &chunk : m_chunks)
            bytes +=
                sizeof(Chunk) + chunk->offsets.capacity() * sizeof(uint32_t) + chunk->values.capacity() * sizeof(T);
        return bytes;
    }

private:
    static constexpr unsigned kRowShift = 12;
    static constexpr size_t kRowMask = (size_t{1} << kRowShift) - 1;
    struct Chunk {
        std::vector<uint32_t> offsets{0};
        std::vector<T> values;
    };
    size_t m_rows = 0;
    std::vector<std::shared_ptr<Chunk>> m_chunks;
};

} // namespace emberline::engine
