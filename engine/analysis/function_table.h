#pragma once

#include "engine/analysis/call_tree.h"
#include "engine/model/frame_table.h"

#include <atomic>
#include <optional>
#include <span>
#include <vector>

namespace emberline::engine {

// Self and total per frame for one sample type, like `go tool pprof -top`: self counts the samples whose
// leaf is the frame; total counts each sample once even when the frame recurs in its stack.
//
// Thread: built on a worker; immutable afterwards.
class FunctionTable {
public:
    struct Row {
        uint32_t frame = 0;
        int64_t self = 0;
        int64_t total = 0;
    };

    static std::optional<FunctionTable> build(const Profile &profile, const FrameTable &frames,
                                              std::span<const int64_t> perStack,
                                              const std::atomic<bool> *cancel = nullptr);
    // The same table read off a call tree of the same values, in one pass over its nodes instead of over every
    // frame of every stack: a frame's total is the sum of its outermost nodes (recursion counted once).
    static FunctionTable fromCallTree(const CallTree &tree, const FrameTable &frames);
    // From per-frame self and total values already summed (CallTreeUpdater keeps them).
    static FunctionTable fromFrameTotals(const FrameTable &frames, std::span<const int64_t> self,
                                         std::span<const int64_t> total, int64_t grandTotal);

    // Rows with a non-zero self or total, ordered by self then total (descending), then by name.
    const std::vector<Row> &rows() const { return m_rows; }
    int64_t grandTotal() const { return m_grandTotal; }

private:
    void setRows(const FrameTable &frames, std::span<const int64_t> self, std::span<const int64_t> total);

    std::vector<Row> m_rows;
    int64_t m_grandTotal = 0;
};

// Who calls a frame and whom it calls, weighted by the samples that pass through it.
struct CallerCallee {
    struct Edge {
        uint32_t frame = 0;
        int64_t value = 0;
    };
    uint32_t frame = 0;
    int64_t self = 0;
    int64_t total = 0;
    std::vector<Edge> callers; // descending by value
    std::vector<Edge> callees; // descending by value
};

CallerCallee computeCallerCallee(const Profile &profile, const FrameTable &frames, std::span<const int64_t> perStack,
                                 uint32_t frame);

} // namespace emberline::engine
