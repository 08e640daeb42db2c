#pragma once

#include "engine/analysis/call_tree.h"
#include "engine/model/frame_table.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

// The differential call tree of two profiles: every call path of either, with its value in the base and in the
// new profile. Paths are matched frame by frame as the views group frames (by function name; the file is kept
// for display), so a path that exists only in the base is a node of its own, flagged base-only, and one that
// exists only in the new profile is new-only. Node 0 is the root; parents come before their children.
//
// The flame graph draws it through three call trees over the same nodes (same ids, same children order), one
// per choice of widths: the new values, the new values plus the base-only paths (drawn at their base width),
// or the base values. The new widths (and the widths the view shows, when it asks for others) are made with the
// tree, on the worker; the others on first use, from any thread (a view asks for them off the GUI thread: at
// millions of nodes each is hundreds of megabytes and hundreds of milliseconds that a comparison would
// otherwise spend on widths nobody looks at).
//
// Thread: built on a worker; immutable afterwards (the width trees made on first use once, under a lock), shared
// with the GUI thread.
class DiffTree {
public:
    struct Node {
        uint32_t frame = kNoIndex; // in frames(); kNoIndex for the root
        uint32_t parent = kNoIndex;
        uint32_t depth = 0;
        int64_t baseSelf = 0;
        int64_t baseTotal = 0;
        int64_t newSelf = 0;
        int64_t newTotal = 0;
        int64_t change() const { return newTotal - baseTotal; }
    };
    enum class Widths { New, NewWithBaseOnly, Base };

    // `newTree` over `frames`' first frames (the new profile's table, whose ids unionOf keeps), `baseTree` over
    // the base profile's table, whose ids `baseToUnion` maps into `frames`. Returns nullopt when cancelled.
    static std::optional<DiffTree> build(const CallTree &newTree, const CallTree &baseTree,
                                         std::shared_ptr<const FrameTable> frames,
                                         std::span<const uint32_t> baseToUnion,
                                         const std::atomic<bool> *cancel = nullptr, Widths shown = Widths::New);

    size_t size() const { return m_base.size(); }
    Node node(uint32_t id) const;
    const std::shared_ptr<const FrameTable> &frames() const { return m_frames; }
    bool isBaseOnly(uint32_t id) const { return m_new->node(id).total == 0 && m_base[id].total != 0; }
    bool isNewOnly(uint32_t id) const { return m_base[id].total == 0 && m_new->node(id).total != 0; }
    // Every path holds the same value on both sides.
    bool isUnchanged() const { return m_unchanged; }
    // The tree of one choice of widths, made now if it was not made yet (linear in the nodes).
    std::shared_ptr<const CallTree> widths(Widths widths) const;
    // Whether widths() returns at once for this choice.
    bool hasWidths(Widths widths) const;

    // Indented text, one node a line in the children order of the trees: "<indent>name base new[ (base only)]".
    std::string dump() const;

private:
    // The width trees, made once each; shared, so that the tree stays movable.
    struct WidthTrees {
        std::mutex mutex;
        std::shared_ptr<const CallTree> trees[3];
    };

    std::shared_ptr<const CallTree> makeWidths(Widths widths) const; // New's shape, these values

    // A node is the new widths' node (frame, parent, depth, new values) and its base values.
    struct BaseValues {
        int64_t self = 0;
        int64_t total = 0;
    };
    std::vector<BaseValues> m_base;
    const CallTree *m_new = nullptr; // the new widths' tree, kept by m_widths
    std::shared_ptr<const FrameTable> m_frames;
    std::shared_ptr<WidthTrees> m_widths = std::make_shared<WidthTrees>();
    bool m_unchanged = true;
};

// The relative change of a value: (new - base) / max(|base|, |new|), in [-1, 1]. +1 when it is new (base 0),
// -1 when it is gone (new 0), 0 when unchanged. What the differential flame graph's colour intensity reads.
double relativeChange(int64_t base, int64_t next);

// The change as a percentage of the base: (new - base) / base * 100; nullopt when the base is 0 (a new path).
std::optional<double> changePercent(int64_t base, int64_t next);

} // namespace emberline::engine
