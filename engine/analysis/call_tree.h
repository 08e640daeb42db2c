#pragma once

#include "engine/common/flat_hash.h"
#include "engine/model/frame_table.h"
#include "engine/model/profile.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

class CallTreeRecycler;

// The top-down call tree of one sample type: node 0 is the root (all samples), every other node is a frame
// reached by one call path. total = value of the samples passing through the node; self = value of the
// samples ending there. Children are ordered by frame name, so the layout of a flame graph is stable when
// the same profile grows between live refreshes.
//
// A node's frame, parent and depth never change once it is made: they are kept apart from its values (self,
// total, deepest), in a table that the trees of one updater share (each reads the first size() rows), so that
// the copy a live refresh makes on write copies only values and children lists.
//
// Thread: built on a worker (never the GUI thread for large profiles); immutable afterwards.
class CallTree {
public:
    struct Node {
        uint32_t frame = kNoIndex; // kNoIndex for the root
        uint32_t parent = kNoIndex;
        uint32_t depth = 0;   // root is 0
        uint32_t deepest = 0; // the largest depth in the node's subtree (its own when a leaf)
        int64_t self = 0;
        int64_t total = 0;
    };
    // What never changes about a node once made.
    struct Shape {
        uint32_t frame = kNoIndex;
        uint32_t parent = kNoIndex;
        uint32_t depth = 0;
    };
    // Rows of shapes, appended only. A CallTreeUpdater appends to the table its published trees read, but only
    // past their sizes and never moving the rows (a full table is copied into a larger one instead).
    struct ShapeTable {
        std::vector<Shape> rows;
    };

    // perStack: value per interned stack (valuesPerStack()); returns nullopt when cancelled.
    static std::optional<CallTree> build(const Profile &profile, const FrameTable &frames,
                                         std::span<const int64_t> perStack, const std::atomic<bool> *cancel = nullptr);
    // A tree from nodes already made (a differential tree's widths): parents before children, node 0 the root.
    // Node ids are kept, so trees made from the same nodes with other values share ids; `deepest` counts only
    // nodes whose total is not zero, and children are ordered by frame name as build() orders them.
    static CallTree fromNodes(const std::vector<Node> &nodes, const FrameTable &frames);
    // A tree over the same nodes as `shape` (ids, parents, frames, in the same order) with other values: its
    // shapes are shared with `shape` and its children lists copied from it instead of being sorted again (a
    // differential tree's width trees).
    static CallTree withValues(const std::vector<Node> &nodes, const CallTree &shape);
    // A tree from nodes already made whose children lists are known too, in CSR form (the children of node i are
    // children[childOffsets[i]] up to children[childOffsets[i + 1]], in frame-name order, as build() orders
    // them): nothing is sorted (a differential tree, whose merge visits children in name order).
    static CallTree withChildren(const std::vector<Node> &nodes, std::vector<uint32_t> childOffsets,
                                 std::vector<uint32_t> children);

    // A tree of the root alone (no samples).
    static CallTree withRoot();

    size_t size() const { return m_self.size(); }
    Node node(uint32_t id) const
    {
        const Shape &shape = m_shapes->rows[id];
        return Node{shape.frame, shape.parent, shape.depth, m_deepest[id], m_self[id], m_total[id]};
    }
    uint32_t frame(uint32_t id) const { return m_shapes->rows[id].frame; }
    uint32_t parent(uint32_t id) const { return m_shapes->rows[id].parent; }
    int64_t selfOf(uint32_t id) const { return m_self[id]; }
    int64_t totalOf(uint32_t id) const { return m_total[id]; }
    // Every node's total, by id.
    std::span<const int64_t> totals() const { return m_total; }
    // Whether this tree reads its shapes from the same table as `other` (trees of one updater, width trees).
    bool sharesShapesWith(const CallTree &other) const { return m_shapes == other.m_shapes; }
    std::span<const uint32_t> children(uint32_t id) const
    {
        return {m_children.data() + m_childOffsets[id], m_childOffsets[id + 1] - m_childOffsets[id]};
    }
    int64_t total() const { return m_total.empty() ? 0 : m_total[0]; }
    uint32_t maxDepth() const { return m_maxDepth; }
    // Frames from the root's child down to `id`.
    std::vector<uint32_t> pathTo(uint32_t id) const;
    // Finds the node reached by following frame names from the root; kNoIndex if absent.
    uint32_t findPath(const FrameTable &frames, std::span<const std::string> names) const;

    // Indented text, one node a line: "<indent>name self total". Nodes under minTotal are left out.
    std::string dump(const FrameTable &frames, int64_t minTotal = 0) const;

    CallTree();
    CallTree(const CallTree &) = default;
    CallTree(CallTree &&) noexcept = default;
    CallTree &operator=(const CallTree &) = default;
    CallTree &operator=(CallTree &&) noexcept = default;
    ~CallTree(); // a tree from CallTreeUpdater gives its arrays back to it

private:
    friend class CallTreeUpdater;
    // Takes the nodes' shapes (into a table of its own) and values.
    void assignNodes(const std::vector<Node> &nodes);
    void appendNode(const Node &node, ShapeTable &shapes);
    // Depths below each node and the children lists in CSR form, once every node is in.
    void finish(const FrameTable &frames);
    // Each node's `deepest` and the tree's maxDepth, counting only nodes whose total is not zero.
    void computeDepths();
    std::shared_ptr<const ShapeTable> m_shapes;
    std::vector<int64_t> m_self;
    std::vector<int64_t> m_total;
    std::vector<uint32_t> m_deepest;
    std::vector<uint32_t> m_childOffsets;
    std::vector<uint32_t> m_children;
    uint32_t m_maxDepth = 0;
    std::shared_ptr<CallTreeRecycler> m_recycler;
};

// The arrays of trees an updater copied on write, once their readers let go of them, kept for the updater's next
// copy: a refresh then writes into memory that is already mapped instead of faulting a whole fresh copy of the tree
// in (some 10 MB per refresh at 400,000 nodes). One set is kept; more are freed.
//
// Thread: any; trees are dropped on whichever thread held them last.
class CallTreeRecycler {
public:
    struct Arrays {
        std::vector<int64_t> self;
        std::vector<int64_t> total;
        std::vector<uint32_t> deepest;
        std::vector<uint32_t> childOffsets;
        std::vector<uint32_t> children;
    };
    void give(Arrays arrays);
    Arrays take(); // empty arrays when none is kept

private:
    std::mutex m_mutex;
    std::optional<Arrays> m_kept;
};

// Keeps the call tree of a growing profile (a live session's merged profile) up to date: each update() is given
// the new value per stack and walks only the stacks whose value changed since the previous update, along paths
// it already knows, so a refresh costs in proportion to what the last flush touched rather than to the whole
// session. The tree it returns equals CallTree::build() on the same values (the same nodes and children order;
// node ids may differ).
//
// Requires what a merged profile guarantees: stack ids and frame ids keep their meaning from one update to the
// next (stacks and locations are only ever appended, and FrameTable numbers frames in location order).
//
// Thread: one caller at a time.
class CallTreeUpdater {
public:
    CallTreeUpdater();

    // `changed`, when given, names every stack whose value may differ from the previous update's (repeats are
    // fine; stacks new since then must be in it): only those are read, so an update costs nothing per stack the
    // last flush left alone. Without it, every stack's value is compared.
    std::shared_ptr<const CallTree> update(const Profile &profile, const FrameTable &frames,
                                           std::span<const int64_t> perStack,
                                           const std::vector<uint32_t> *changed = nullptr);
    // Nodes known so far, including paths whose value fell back to zero (left out of the trees returned).
    size_t knownNodes() const { return m_tree->size(); }
    // Per frame, as of the last update: its self value, and its total (each stack counted once however often
    // the frame recurs in it), kept up to date along the same walks, so that the function table costs a pass
    // over the frames rather than over the tree. Equal to FunctionTable::fromCallTree on the tree returned.
    std::span<const int64_t> frameSelf() const { return m_frameSelf; }
    std::span<const int64_t> frameTotal() const { return m_frameTotal; }

private:
    struct NewChild {
        uint32_t parent;
        uint32_t node;
    };
    uint32_t walk(const Profile &profile, const FrameTable &frames, uint32_t stack, int64_t delta);
    uint32_t child(uint32_t parent, uint32_t frame);
    // Makes m_tree the updater's alone, copying its values when a published tree still shares them (the shapes
    // stay shared); returns the tree it shared, whose children lists writeChildren then reads (null when m_tree
    // was not shared).
    std::shared_ptr<const CallTree> takeTree();
    // Brings m_tree's children lists up to date with the nodes made since they were last written, from the lists
    // of `previous` when given (the tree m_tree was copied from) or of m_tree itself.
    void writeChildren(const FrameTable &frames, const CallTree *previous);

    // Every node known, and their children ordered by frame name in CSR form (as of the last update; nodes made
    // since wait in m_newChildren). While every node holds a value (a growing session, no filter) this is the
    // very tree update() returns: the next update copies it only if a reader still holds it (copy on write),
    // so a session keeps the tree the views show and the one the next flush makes, not a third.
    std::shared_ptr<CallTree> m_tree;
    std::shared_ptr<CallTree::ShapeTable> m_shapes; // m_tree's, which this updater alone appends to
    std::vector<NewChild> m_newChildren;
    IndexHashTable m_childOf;      // nodes other than the root by (parent, frame), which the nodes hold
    std::vector<int64_t> m_values; // per stack, as of the last update
    std::vector<uint32_t> m_leaf;  // per stack: the node its path ends at, once walked
    std::vector<uint32_t> m_path;
    std::vector<int64_t> m_frameSelf;
    std::vector<int64_t> m_frameTotal;
    std::vector<uint32_t> m_frameSeen; // per frame: the walk that last counted it (recursion counts once)
    uint32_t m_walks = 0;
    size_t m_frames = 0;     // frames known at the last update
    size_t m_emptyNodes = 0; // nodes other than the root whose total is 0
    uint32_t m_maxDepth = 0;
    // The arrays of trees copied on write, once their readers let go, for the next copy.
    std::shared_ptr<CallTreeRecycler> m_recycler = std::make_shared<CallTreeRecycler>();
    CallTree publishSkippingEmpty() const;
};

} // namespace emberline::engine
