#include "engine/analysis/call_tree.h"

#include "engine/analysis/valued_stacks.h"
#include "engine/common/flat_hash.h"
#include "engine/common/vector_room.h"

#include <QtGlobal>

#include <algorithm>
#include <numeric>
#include <string>

namespace emberline::engine {

namespace {

const std::shared_ptr<const CallTree::ShapeTable> &emptyShapes()
{
    static const auto empty = std::make_shared<const CallTree::ShapeTable>();
    return empty;
}

} // namespace

CallTree::CallTree() : m_shapes(emptyShapes()) {}

void CallTree::appendNode(const Node &node, ShapeTable &shapes)
{
    shapes.rows.push_back(Shape{node.frame, node.parent, node.depth});
    m_self.push_back(node.self);
    m_total.push_back(node.total);
    m_deepest.push_back(node.deepest);
}

void CallTree::assignNodes(const std::vector<Node> &nodes)
{
    auto shapes = std::make_shared<ShapeTable>();
    shapes->rows.reserve(nodes.size());
    m_self.reserve(nodes.size());
    m_total.reserve(nodes.size());
    m_deepest.reserve(nodes.size());
    for (const Node &node : nodes)
        appendNode(node, *shapes);
    m_shapes = std::move(shapes);
}

std::optional<CallTree> CallTree::build(const Profile &profile, const FrameTable &frames,
                                        std::span<const int64_t> perStack, const std::atomic<bool> *cancel)
{
    CallTree tree;
    // Sized by the stacks that hold a value, not by every stack of the profile: a live session's flush touches a
    // few thousand of its hundreds of thousands, and clearing a map sized for all of them cost more than the walk.
    const auto valued =
        static_cast<size_t>(std::count_if(perStack.begin(), perStack.end(), [](int64_t v) { return v != 0; }));
    // Most trees hold a few nodes per such stack: reserved address space, touched only as nodes are added, spares
    // the copies of a growing vector.
    auto shapes = std::make_shared<ShapeTable>();
    std::vector<Shape> &rows = shapes->rows;
    rows.reserve(valued * 4 + 1);
    tree.m_self.reserve(valued * 4 + 1);
    rows.push_back(Shape{});
    tree.m_self.push_back(0);
    U64ToU32Map childOf(valued * 4);
    std::vector<uint32_t> path;
    const StackTable &stacks = profile.stacks();

    const bool complete = forEachValuedStack(perStack, cancel, [&](uint32_t s, int64_t v) {
        path.clear();
        frames.expandRootFirst(stacks.stack(s), path);
        uint32_t node = 0;
        for (const uint32_t frame : path) {
            bool inserted = false;
            const auto candidate = static_cast<uint32_t>(rows.size());
            const uint32_t child =
                childOf.findOrInsert((static_cast<uint64_t>(node) << 32) | frame, candidate, inserted);
            if (inserted) {
                const uint32_t depth = rows[node].depth + 1;
                rows.push_back(Shape{frame, node, depth});
                tree.m_self.push_back(0);
                tree.m_maxDepth = std::max(tree.m_maxDepth, depth);
            }
            node = child;
        }
        tree.m_self[node] += v;
    });
    if (!complete)
        return std::nullopt;
    // Totals from the selves, children before parents: one sequential pass instead of a write to every node of
    // every stack's path.
    tree.m_total = tree.m_self;
    for (size_t i = rows.size(); i-- > 1;)
        tree.m_total[rows[i].parent] += tree.m_total[i];
    tree.m_deepest.resize(rows.size());
    for (size_t i = 0; i < rows.size(); ++i)
        tree.m_deepest[i] = rows[i].depth;
    tree.m_shapes = std::move(shapes);
    tree.finish(frames);
    return tree;
}

CallTree CallTree::fromNodes(const std::vector<Node> &nodes, const FrameTable &frames)
{
    CallTree tree;
    tree.assignNodes(nodes);
    if (tree.m_self.empty()) {
        auto shapes = std::make_shared<ShapeTable>();
        tree.appendNode(Node{}, *shapes);
        tree.m_shapes = std::move(shapes);
    }
    const std::vector<Shape> &rows = tree.m_shapes->rows;
    for (size_t i = 0; i < rows.size(); ++i) {
        tree.m_deepest[i] = rows[i].depth;
        if (tree.m_total[i] != 0)
            tree.m_maxDepth = std::max(tree.m_maxDepth, rows[i].depth);
    }
    tree.finish(frames);
    return tree;
}

CallTree CallTree::withValues(const std::vector<Node> &nodes, const CallTree &shape)
{
    Q_ASSERT(nodes.size() == shape.size());
    CallTree tree;
    tree.m_shapes = shape.m_shapes;
    tree.m_self.reserve(nodes.size());
    tree.m_total.reserve(nodes.size());
    tree.m_deepest.reserve(nodes.size());
    for (const Node &node : nodes) {
        tree.m_self.push_back(node.self);
        tree.m_total.push_back(node.total);
        tree.m_deepest.push_back(node.deepest);
    }
    tree.computeDepths();
    tree.m_childOffsets = shape.m_childOffsets;
    tree.m_children = shape.m_children;
    return tree;
}

CallTree CallTree::withRoot()
{
    CallTree tree;
    auto shapes = std::make_shared<ShapeTable>();
    tree.appendNode(Node{}, *shapes);
    tree.m_shapes = std::move(shapes);
    tree.m_childOffsets.assign(2, 0);
    return tree;
}

CallTree CallTree::withChildren(const std::vector<Node> &nodes, std::vector<uint32_t> childOffsets,
                                std::vector<uint32_t> children)
{
    Q_ASSERT(childOffsets.size() == nodes.size() + 1);
    CallTree tree;
    tree.assignNodes(nodes);
    tree.computeDepths();
    tree.m_childOffsets = std::move(childOffsets);
    tree.m_children = std::move(children);
    return tree;
}

void CallTree::computeDepths()
{
    const std::vector<Shape> &rows = m_shapes->rows;
    const size_t n = size();
    for (size_t i = 0; i < n; ++i) {
        m_deepest[i] = rows[i].depth;
        if (m_total[i] != 0)
            m_maxDepth = std::max(m_maxDepth, rows[i].depth);
    }
    for (size_t i = n; i-- > 1;) {
        if (m_total[i] == 0)
            continue;
        uint32_t &parent = m_deepest[rows[i].parent];
        parent = std::max(parent, m_deepest[i]);
    }
}

void CallTree::finish(const FrameTable &frames)
{
    const std::vector<Shape> &rows = m_shapes->rows;
    const size_t n = size();
    // Parents come before their children: one backward pass carries subtree depths upwards.
    for (size_t i = n; i-- > 1;) {
        if (m_total[i] == 0)
            continue; // a path with no value in this tree takes no row
        uint32_t &parent = m_deepest[rows[i].parent];
        parent = std::max(parent, m_deepest[i]);
    }

    // Children in CSR form, ordered by frame name (the table ranks its names once, not per tree).
    const std::vector<uint32_t> &rank = frames.nameRank();
    m_childOffsets.assign(n + 1, 0);
    for (size_t i = 1; i < n; ++i)
        m_childOffsets[rows[i].parent + 1]++;
    std::partial_sum(m_childOffsets.begin(), m_childOffsets.end(), m_childOffsets.begin());
    m_children.resize(n > 0 ? n - 1 : 0);
    std::vector<uint32_t> fill(m_childOffsets.begin(), m_childOffsets.end() - 1);
    for (uint32_t i = 1; i < n; ++i)
        m_children[fill[rows[i].parent]++] = i;
    for (size_t p = 0; p < n; ++p) {
        auto begin = m_children.begin() + m_childOffsets[p];
        auto end = m_children.begin() + m_childOffsets[p + 1];
        if (end - begin > 1) {
            std::sort(begin, end, [&](uint32_t a, uint32_t b) { return rank[rows[a].frame] < rank[rows[b].frame]; });
        }
    }
}

std::vector<uint32_t> CallTree::pathTo(uint32_t id) const
{
    std::vector<uint32_t> path;
    for (uint32_t n = id; n != 0 && n != kNoIndex; n = parent(n))
        path.push_back(frame(n));
    std::reverse(path.begin(), path.end());
    return path;
}

uint32_t CallTree::findPath(const FrameTable &frames, std::span<const std::string> names) const
{
    uint32_t node = 0;
    for (const std::string &name : names) {
        uint32_t next = kNoIndex;
        for (uint32_t c : children(node)) {
            if (frames.frame(frame(c)).name == name) {
                next = c;
                break;
            }
        }
        if (next == kNoIndex)
            return kNoIndex;
        node = next;
    }
    return node;
}

std::string CallTree::dump(const FrameTable &frames, int64_t minTotal) const
{
    std::string out;
    if (size() == 0)
        return out;
    out += "<root> " + std::to_string(m_self[0]) + " " + std::to_string(m_total[0]) + "\n";
    // Iterative pre-order walk: recursion depth of real profiles reaches thousands of frames.
    std::vector<uint32_t> stack;
    const auto rootChildren = children(0);
    for (auto it = rootChildren.rbegin(); it != rootChildren.rend(); ++it)
        stack.push_back(*it);
    while (!stack.empty()) {
        const uint32_t id = stack.back();
        stack.pop_back();
        const Node n = node(id);
        if (n.total < minTotal && n.total >= 0)
            continue;
        out.append(2 * static_cast<size_t>(n.depth), ' ');
        out += frames.frame(n.frame).name + " " + std::to_string(n.self) + " " + std::to_string(n.total) + "\n";
        auto c = children(id);
        for (auto it = c.rbegin(); it != c.rend(); ++it)
            stack.push_back(*it);
    }
    return out;
}

namespace {

// Makes `out` hold [first, last), in its own memory when that is large enough.
template <typename T> void assignWithRoom(std::vector<T> &out, const T *first, const T *last)
{
    out.clear(); // nothing of the old contents is copied if it has to grow
    reserveWithRoom(out, static_cast<size_t>(last - first));
    out.assign(first, last);
}

} // namespace

CallTreeUpdater::CallTreeUpdater()
    : m_tree(std::make_shared<CallTree>()), m_shapes(std::make_shared<CallTree::ShapeTable>())
{
    m_tree->appendNode(CallTree::Node{}, *m_shapes);
    m_tree->m_shapes = m_shapes;
    m_tree->m_childOffsets.assign(2, 0);
    m_tree->m_recycler = m_recycler;
}

uint32_t CallTreeUpdater::child(uint32_t parent, uint32_t frame)
{
    CallTree &tree = *m_tree;
    std::vector<CallTree::Shape> &rows = m_shapes->rows;
    const auto keyOf = [](uint32_t p, uint32_t f) { return (static_cast<uint64_t>(p) << 32) | f; };
    const uint32_t found = m_childOf.find(
        keyOf(parent, frame), [&](uint32_t n) { return rows[n].parent == parent && rows[n].frame == frame; });
    if (found != IndexHashTable::kNone)
        return found;
    const auto node = static_cast<uint32_t>(tree.size());
    const uint32_t depth = rows[parent].depth + 1;
    if (rows.size() == rows.capacity()) {
        // Published trees read these rows: a larger table, never a move of the rows under them.
        auto larger = std::make_shared<CallTree::ShapeTable>();
        reserveWithRoom(larger->rows, rows.size() + 1);
        larger->rows.assign(rows.begin(), rows.end());
        m_shapes = std::move(larger);
        tree.m_shapes = m_shapes;
    }
    m_shapes->rows.push_back(CallTree::Shape{frame, parent, depth});
    reserveWithRoom(tree.m_self, tree.m_self.size() + 1);
    reserveWithRoom(tree.m_total, tree.m_total.size() + 1);
    reserveWithRoom(tree.m_deepest, tree.m_deepest.size() + 1);
    tree.m_self.push_back(0);
    tree.m_total.push_back(0);
    tree.m_deepest.push_back(depth);
    const std::vector<CallTree::Shape> &shapes = m_shapes->rows;
    m_childOf.insert(keyOf(parent, frame), node, [&](uint32_t n) { return keyOf(shapes[n].parent, shapes[n].frame); });
    for (uint32_t p = parent; p != kNoIndex && tree.m_deepest[p] < depth; p = shapes[p].parent)
        tree.m_deepest[p] = depth;
    m_newChildren.push_back({parent, node});
    m_maxDepth = std::max(m_maxDepth, depth);
    ++m_emptyNodes;
    return node;
}

uint32_t CallTreeUpdater::walk(const Profile &profile, const FrameTable &frames, uint32_t stack, int64_t delta)
{
    uint32_t leaf = m_leaf[stack];
    if (leaf == kNoIndex) {
        m_path.clear();
        frames.expandRootFirst(profile.stacks().stack(stack), m_path);
        leaf = 0;
        for (uint32_t frame : m_path)
            leaf = child(leaf, frame);
        m_leaf[stack] = leaf;
    }
    CallTree &tree = *m_tree;
    const std::vector<CallTree::Shape> &rows = m_shapes->rows;
    tree.m_self[leaf] += delta;
    if (leaf != 0)
        m_frameSelf[rows[leaf].frame] += delta;
    if (++m_walks == 0) { // wrapped: forget every mark
        std::fill(m_frameSeen.begin(), m_frameSeen.end(), 0);
        m_walks = 1;
    }
    for (uint32_t n = leaf; n != kNoIndex; n = rows[n].parent) {
        int64_t &total = tree.m_total[n];
        const bool wasEmpty = total == 0;
        total += delta;
        if (n != 0 && wasEmpty != (total == 0))
            wasEmpty ? --m_emptyNodes : ++m_emptyNodes;
        const uint32_t frame = rows[n].frame;
        if (n != 0 && m_frameSeen[frame] != m_walks) {
            m_frameSeen[frame] = m_walks;
            m_frameTotal[frame] += delta;
        }
    }
    return leaf;
}

std::shared_ptr<const CallTree> CallTreeUpdater::takeTree()
{
    if (chunked::exclusive(m_tree))
        return nullptr;
    // A reader holds the tree the last update returned: the values go on in a copy, made in the arrays of a tree
    // that readers have let go of when there is one. The shapes stay shared (rows are only appended, past what
    // the reader reads); the children lists are written afresh by writeChildren.
    std::shared_ptr<const CallTree> previous = std::move(m_tree);
    CallTreeRecycler::Arrays arrays = m_recycler->take();
    auto tree = std::make_shared<CallTree>();
    const auto copy = [](auto &out, const auto &from) { assignWithRoom(out, from.data(), from.data() + from.size()); };
    copy(arrays.self, previous->m_self);
    copy(arrays.total, previous->m_total);
    copy(arrays.deepest, previous->m_deepest);
    tree->m_self = std::move(arrays.self);
    tree->m_total = std::move(arrays.total);
    tree->m_deepest = std::move(arrays.deepest);
    tree->m_childOffsets = std::move(arrays.childOffsets);
    tree->m_children = std::move(arrays.children);
    tree->m_shapes = m_shapes;
    tree->m_recycler = m_recycler;
    m_tree = std::move(tree);
    return previous;
}

std::shared_ptr<const CallTree> CallTreeUpdater::update(const Profile &profile, const FrameTable &frames,
                                                        std::span<const int64_t> perStack,
                                                        const std::vector<uint32_t> *changed)
{
    if (perStack.size() < m_values.size() || frames.size() < m_frames) {
        *this = CallTreeUpdater{}; // not the profile this tree grew from: start over
        changed = nullptr;
    }
    const std::shared_ptr<const CallTree> previous = takeTree();
    m_frames = frames.size();
    m_frameSelf.resize(m_frames, 0);
    m_frameTotal.resize(m_frames, 0);
    m_frameSeen.resize(m_frames, 0);
    m_values.resize(perStack.size(), 0);
    m_leaf.resize(perStack.size(), kNoIndex);
    const auto visit = [&](uint32_t s) {
        if (perStack[s] != m_values[s]) {
            walk(profile, frames, s, perStack[s] - m_values[s]);
            m_values[s] = perStack[s];
        }
    };
    if (changed) {
        for (uint32_t s : *changed) {
            if (s < perStack.size())
                visit(s);
        }
    } else {
        for (uint32_t s = 0; s < perStack.size(); ++s)
            visit(s);
    }

    writeChildren(frames, previous.get());
    m_tree->m_maxDepth = m_maxDepth;
    if (m_emptyNodes == 0)
        return m_tree; // shared from now on: the next update copies it
    return std::make_shared<const CallTree>(publishSkippingEmpty());
}

CallTree::~CallTree()
{
    if (m_recycler)
        m_recycler->give({std::move(m_self), std::move(m_total), std::move(m_deepest), std::move(m_childOffsets),
                          std::move(m_children)});
}

void CallTreeRecycler::give(Arrays arrays)
{
    std::unique_lock lock(m_mutex);
    if (!m_kept)
        m_kept = std::move(arrays);
    lock.unlock(); // a set not kept is freed here, outside the lock
}

CallTreeRecycler::Arrays CallTreeRecycler::take()
{
    std::lock_guard lock(m_mutex);
    Arrays out;
    if (m_kept) {
        out = std::move(*m_kept);
        m_kept.reset();
    }
    return out;
}

void CallTreeUpdater::writeChildren(const FrameTable &frames, const CallTree *previous)
{
    CallTree &tree = *m_tree;
    const std::vector<CallTree::Shape> &rows = m_shapes->rows;
    const size_t known = tree.size();
    // The lists as of the last update: the shared tree's when m_tree is a fresh copy, else m_tree's own.
    const std::vector<uint32_t> &oldOffsets = previous ? previous->m_childOffsets : tree.m_childOffsets;
    const std::vector<uint32_t> &oldChildren = previous ? previous->m_children : tree.m_children;
    if (m_newChildren.empty() && oldOffsets.size() == known + 1) {
        if (previous) {
            assignWithRoom(tree.m_childOffsets, oldOffsets.data(), oldOffsets.data() + oldOffsets.size());
            assignWithRoom(tree.m_children, oldChildren.data(), oldChildren.data() + oldChildren.size());
        }
        return;
    }
    // The new nodes by parent, and under one parent in frame-name order (frameOrderLess: strict, as build()'s is).
    const auto before = [&](uint32_t a, uint32_t b) {
        return frameOrderLess(frames.frame(rows[a].frame), frames.frame(rows[b].frame));
    };
    std::sort(m_newChildren.begin(), m_newChildren.end(), [&](const NewChild &a, const NewChild &b) {
        return a.parent != b.parent ? a.parent < b.parent : before(a.node, b.node);
    });
    // Parents without a new child keep their list: copied in runs (memory order). The others merge their old
    // list with the new children. Written into the copy's own arrays when the old lists are another tree's.
    std::vector<uint32_t> offsets = previous ? std::move(tree.m_childOffsets) : std::vector<uint32_t>{};
    std::vector<uint32_t> children = previous ? std::move(tree.m_children) : std::vector<uint32_t>{};
    offsets.clear();
    children.clear();
    reserveWithRoom(offsets, known + 1);
    reserveWithRoom(children, known > 0 ? known - 1 : 0);
    const size_t lastKnown = oldOffsets.empty() ? 0 : oldOffsets.size() - 1;
    size_t next = 0; // into m_newChildren
    for (uint32_t n = 0; n < known; ++n) {
        const uint32_t gainer = next < m_newChildren.size() ? m_newChildren[next].parent : kNoIndex;
        if (n != gainer && n < lastKnown) {
            const uint32_t end = static_cast<uint32_t>(std::min<size_t>(gainer, lastKnown));
            const uint32_t from = oldOffsets[n];
            const uint32_t to = oldOffsets[end];
            const uint32_t base = static_cast<uint32_t>(children.size());
            children.insert(children.end(), oldChildren.begin() + from, oldChildren.begin() + to);
            for (uint32_t k = n; k < end; ++k)
                offsets.push_back(base + oldOffsets[k] - from);
            n = end - 1;
            continue;
        }
        offsets.push_back(static_cast<uint32_t>(children.size()));
        if (n != gainer)
            continue; // a node made since, without children
        auto old = n < lastKnown ? oldChildren.begin() + oldOffsets[n] : oldChildren.end();
        const auto oldEnd = n < lastKnown ? oldChildren.begin() + oldOffsets[n + 1] : oldChildren.end();
        for (; next < m_newChildren.size() && m_newChildren[next].parent == n; ++next) {
            const uint32_t added = m_newChildren[next].node;
            for (; old != oldEnd && before(*old, added); ++old)
                children.push_back(*old);
            children.push_back(added);
        }
        children.insert(children.end(), old, oldEnd);
    }
    offsets.push_back(static_cast<uint32_t>(children.size()));
    tree.m_childOffsets = std::move(offsets);
    tree.m_children = std::move(children);
    m_newChildren.clear();
}

CallTree CallTreeUpdater::publishSkippingEmpty() const
{
    // The tree of the paths that hold a value, parents before children as in build(), in a shape table of its
    // own (its ids are not the updater's).
    CallTree tree;
    const CallTree &all = *m_tree;
    const std::vector<uint32_t> &childOffsets = all.m_childOffsets;
    const std::vector<uint32_t> &children = all.m_children;
    const size_t known = all.size();
    std::vector<uint32_t> newId(known, kNoIndex);
    auto shapes = std::make_shared<CallTree::ShapeTable>();
    shapes->rows.reserve(known);
    for (uint32_t n = 0; n < known; ++n) {
        CallTree::Node copy = all.node(n);
        if (n != 0 && copy.total == 0)
            continue;
        newId[n] = static_cast<uint32_t>(tree.size());
        copy.deepest = copy.depth; // paths left out may have been the deepest
        if (n != 0)
            copy.parent = newId[copy.parent];
        tree.m_maxDepth = std::max(tree.m_maxDepth, copy.depth);
        tree.appendNode(copy, *shapes);
    }
    const size_t kept = tree.size();
    for (size_t i = kept; i-- > 1;) {
        uint32_t &parent = tree.m_deepest[shapes->rows[i].parent];
        parent = std::max(parent, tree.m_deepest[i]);
    }
    tree.m_shapes = std::move(shapes);
    tree.m_childOffsets.reserve(kept + 1);
    tree.m_children.reserve(kept > 0 ? kept - 1 : 0);
    for (uint32_t n = 0; n < known; ++n) {
        if (newId[n] == kNoIndex)
            continue;
        tree.m_childOffsets.push_back(static_cast<uint32_t>(tree.m_children.size()));
        for (uint32_t i = childOffsets[n]; i < childOffsets[n + 1]; ++i) {
            if (newId[children[i]] != kNoIndex)
                tree.m_children.push_back(newId[children[i]]);
        }
    }
    tree.m_childOffsets.push_back(static_cast<uint32_t>(tree.m_children.size()));
    return tree;
}

} // namespace emberline::engine
