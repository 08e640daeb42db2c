#include "engine/model/call_tree.h"

#include "engine/common/flat_hash.h"
#include "engine/common/vector_room.h"

#include <QtGlobal>

#include <algorithm>
#include <string>
#include <numeric>

namespace emberline::engine {

std::optional<CallTree> CallTree::build(const Profile &profile, const FrameTable &frames,
                                        std::span<const int64_t> perStack, const std::atomic<bool> *cancel)
{
    CallTree tree;
    // Sized by the stacks that hold a value, not by every stack of the profile: a live session's flush touches a
    // few thousand of its hundreds of thousands, and clearing a map sized for all of them cost more than the walk.
    const auto valued = static_cast<size_t>(
        std::count_if(perStack.begin(), perStack.end(), [](int64_t v) { return v != 0; }));
    // Most trees hold a few nodes per such stack: reserved address space, touched only as nodes are added, spares
    // the copies of a growing vector.
    tree.m_nodes.reserve(valued * 4 + 1);
    tree.m_nodes.push_back(Node{});
    U64ToU32Map childOf(valued * 4);
    std::vector<uint32_t> path;
    const StackTable &stacks = profile.stacks();

    for (uint32_t s = 0; s < perStack.size(); ++s) {
        const int64_t v = perStack[s];
        if (v == 0)
            continue;
        if ((s & 0x3FFF) == 0 && cancel && cancel->load(std::memory_order_relaxed))
            return std::nullopt;
        path.clear();
        frames.expandRootFirst(stacks.stack(s), path);
        uint32_t node = 0;
        for (const uint32_t frame : path) {
            bool inserted = false;
            const auto candidate = static_cast<uint32_t>(tree.m_nodes.size());
            const uint32_t child =
                childOf.findOrInsert((static_cast<uint64_t>(node) << 32) | frame, candidate, inserted);
            if (inserted) {
                const uint32_t depth = tree.m_nodes[node].depth + 1;
                tree.m_nodes.push_back(Node{frame, node, depth, depth, 0, 0});
                tree.m_maxDepth = std::max(tree.m_maxDepth, depth);
            }
            node = child;
        }
        tree.m_nodes[node].self += v;
    }
    // Totals from the selves, children before parents: one sequential pass instead of a write to every node of
    // every stack's path.
    for (Node &node : tree.m_nodes)
        node.total = node.self;
    for (size_t i = tree.m_nodes.size(); i-- > 1;)
        tree.m_nodes[tree.m_nodes[i].parent].total += tree.m_nodes[i].total;
    tree.finish(frames);
    return tree;
}

CallTree CallTree::fromNodes(std::vector<Node> nodes, const FrameTable &frames)
{
    CallTree tree;
    tree.m_nodes = std::move(nodes);
    if (tree.m_nodes.empty())
        tree.m_nodes.push_back(Node{});
    for (Node &node : tree.m_nodes) {
        node.deepest = node.depth;
        if (node.total != 0)
            tree.m_maxDepth = std::max(tree.m_maxDepth, node.depth);
    }
    tree.finish(frames);
    return tree;
}

CallTree CallTree::withValues(std::vector<Node> nodes, const CallTree &shape)
{
    Q_ASSERT(nodes.size() == shape.m_nodes.size());
    CallTree tree;
    tree.m_nodes = std::move(nodes);
    tree.computeDepths();
    tree.m_childOffsets = shape.m_childOffsets;
    tree.m_children = shape.m_children;
    return tree;
}

CallTree CallTree::withRoot()
{
    CallTree tree;
    tree.m_nodes.assign(1, Node{});
    tree.m_childOffsets.assign(2, 0);
    return tree;
}

CallTree CallTree::withChildren(std::vector<Node> nodes, std::vector<uint32_t> childOffsets,
                                std::vector<uint32_t> children)
{
    Q_ASSERT(childOffsets.size() == nodes.size() + 1);
    CallTree tree;
    tree.m_nodes = std::move(nodes);
    tree.computeDepths();
    tree.m_childOffsets = std::move(childOffsets);
    tree.m_children = std::move(children);
    return tree;
}

void CallTree::computeDepths()
{
    for (Node &node : m_nodes) {
        node.deepest = node.depth;
        if (node.total != 0)
            m_maxDepth = std::max(m_maxDepth, node.depth);
    }
    for (size_t i = m_nodes.size(); i-- > 1;) {
        if (m_nodes[i].total == 0)
            continue;
        Node &parent = m_nodes[m_nodes[i].parent];
        parent.deepest = std::max(parent.deepest, m_nodes[i].deepest);
    }
}

void CallTree::finish(const FrameTable &frames)
{
    // Parents come before their children: one backward pass carries subtree depths upwards.
    for (size_t i = m_nodes.size(); i-- > 1;) {
        if (m_nodes[i].total == 0)
            continue; // a path with no value in this tree takes no row
        Node &parent = m_nodes[m_nodes[i].parent];
        parent.deepest = std::max(parent.deepest, m_nodes[i].deepest);
    }

    // Children in CSR form, ordered by frame name (the table ranks its names once, not per tree).
    const std::vector<uint32_t> &rank = frames.nameRank();
    const size_t n = m_nodes.size();
    m_childOffsets.assign(n + 1, 0);
    for (size_t i = 1; i < n; ++i)
        m_childOffsets[m_nodes[i].parent + 1]++;
    std::partial_sum(m_childOffsets.begin(), m_childOffsets.end(), m_childOffsets.begin());
    m_children.resize(n > 0 ? n - 1 : 0);
    std::vector<uint32_t> fill(m_childOffsets.begin(), m_childOffsets.end() - 1);
    for (uint32_t i = 1; i < n; ++i)
        m_children[fill[m_nodes[i].parent]++] = i;
    for (size_t p = 0; p < n; ++p) {
        auto begin = m_children.begin() + m_childOffsets[p];
        auto end = m_children.begin() + m_childOffsets[p + 1];
        if (end - begin > 1) {
            std::sort(begin, end, [&](uint32_t a, uint32_t b) {
                return rank[m_nodes[a].frame] < rank[m_nodes[b].frame];
            });
        }
    }
}

std::vector<uint32_t> CallTree::pathTo(uint32_t id) const
{
    std::vector<uint32_t> path;
    for (uint32_t n = id; n != 0 && n != kNoIndex; n = m_nodes[n].parent)
        path.push_back(m_nodes[n].frame);
    std::reverse(path.begin(), path.end());
    return path;
}

uint32_t CallTree::findPath(const FrameTable &frames, std::span<const std::string> names) const
{
    uint32_t node = 0;
    for (const std::string &name : names) {
        uint32_t next = kNoIndex;
        for (uint32_t c : children(node)) {
            if (frames.frame(m_nodes[c].frame).name == name) {
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
    if (m_nodes.empty())
        return out;
    out += "<root> " + std::to_string(m_nodes[0].self) + " " + std::to_string(m_nodes[0].total) + "\n";
    // Iterative pre-order walk: recursion depth of real profiles reaches thousands of frames.
    std::vector<uint32_t> stack;
    const auto rootChildren = children(0);
    for (auto it = rootChildren.rbegin(); it != rootChildren.rend(); ++it)
        stack.push_back(*it);
    while (!stack.empty()) {
        const uint32_t id = stack.back();
        stack.pop_back();
        const Node &n = m_nodes[id];
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
template <typename T>
void assignWithRoom(std::vector<T> &out, const T *first, const T *last)
{
    out.clear(); // nothing of the old contents is copied if it has to grow
    reserveWithRoom(out, static_cast<size_t>(last - first));
    out.assign(first, last);
}

} // namespace

CallTreeUpdater::CallTreeUpdater() : m_tree(std::make_shared<CallTree>(CallTree::withRoot()))
{
    m_tree->m_recycler = m_recycler;
}

uint32_t CallTreeUpdater::child(uint32_t parent, uint32_t frame)
{
    std::vector<CallTree::Node> &nodes = m_tree->m_nodes;
    const auto keyOf = [](uint32_t p, uint32_t f) { return (static_cast<uint64_t>(p) << 32) | f; };
    const uint32_t found = m_childOf.find(keyOf(parent, frame), [&](uint32_t n) {
        return nodes[n].parent == parent && nodes[n].frame == frame;
    });
    if (found != IndexHashTable::kNone)
        return found;
    const auto node = static_cast<uint32_t>(nodes.size());
    const uint32_t depth = nodes[parent].depth + 1;
    reserveWithRoom(nodes, nodes.size() + 1);
    nodes.push_back(CallTree::Node{frame, parent, depth, depth, 0, 0});
    m_childOf.insert(keyOf(parent, frame), node, [&](uint32_t n) { return keyOf(nodes[n].parent, nodes[n].frame); });
    for (uint32_t p = parent; p != kNoIndex && nodes[p].deepest < depth; p = nodes[p].parent)
        nodes[p].deepest = depth;
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
    std::vector<CallTree::Node> &nodes = m_tree->m_nodes;
    nodes[leaf].self += delta;
    if (leaf != 0)
        m_frameSelf[nodes[leaf].frame] += delta;
    if (++m_walks == 0) { // wrapped: forget every mark
        std::fill(m_frameSeen.begin(), m_frameSeen.end(), 0);
        m_walks = 1;
    }
    for (uint32_t n = leaf; n != kNoIndex; n = nodes[n].parent) {
        const bool wasEmpty = nodes[n].total == 0;
        nodes[n].total += delta;
        if (n != 0 && wasEmpty != (nodes[n].total == 0))
            wasEmpty ? --m_emptyNodes : ++m_emptyNodes;
        const uint32_t frame = nodes[n].frame;
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
    // A reader holds the tree the last update returned: the nodes go on in a copy, made in the arrays of a tree
    // that readers have let go of when there is one. The children lists are written afresh by writeChildren.
    std::shared_ptr<const CallTree> previous = std::move(m_tree);
    CallTreeRecycler::Arrays arrays = m_recycler->take();
    auto tree = std::make_shared<CallTree>();
    assignWithRoom(arrays.nodes, previous->m_nodes.data(), previous->m_nodes.data() + previous->m_nodes.size());
    tree->m_nodes = std::move(arrays.nodes);
    tree->m_childOffsets = std::move(arrays.childOffsets);
    tree->m_children = std::move(arrays.children);
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
        m_recycler->give({std::move(m_nodes), std::move(m_childOffsets), std::move(m_children)});
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
    const std::vector<CallTree::Node> &nodes = tree.m_nodes;
    const size_t known = nodes.size();
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
    // The new nodes by parent, and under one parent in frame-name order (names are unique: FrameTable keys frames
    // by name, so the order is strict, as build()'s is).
    const auto nameOf = [&](uint32_t node) -> const std::string & { return frames.frame(nodes[node].frame).name; };
    std::sort(m_newChildren.begin(), m_newChildren.end(), [&](const NewChild &a, const NewChild &b) {
        return a.parent != b.parent ? a.parent < b.parent : nameOf(a.node) < nameOf(b.node);
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
            for (; old != oldEnd && nameOf(*old) < nameOf(added); ++old)
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
    // The tree of the paths that hold a value, parents before children as in build().
    CallTree tree;
    const std::vector<CallTree::Node> &nodes = m_tree->m_nodes;
    const std::vector<uint32_t> &childOffsets = m_tree->m_childOffsets;
    const std::vector<uint32_t> &children = m_tree->m_children;
    const size_t known = nodes.size();
    std::vector<uint32_t> newId(known, kNoIndex);
    tree.m_nodes.reserve(known);
    for (uint32_t n = 0; n < known; ++n) {
        const CallTree::Node &node = nodes[n];
        if (n != 0 && node.total == 0)
            continue;
        newId[n] = static_cast<uint32_t>(tree.m_nodes.size());
        CallTree::Node copy = node;
        copy.deepest = copy.depth; // paths left out may have been the deepest
        if (n != 0)
            copy.parent = newId[node.parent];
        tree.m_maxDepth = std::max(tree.m_maxDepth, copy.depth);
        tree.m_nodes.push_back(copy);
    }
    const size_t kept = tree.m_nodes.size();
    for (size_t i = kept; i-- > 1;) {
        CallTree::Node &parent = tree.m_nodes[tree.m_nodes[i].parent];
        parent.deepest = std::max(parent.deepest, tree.m_nodes[i].deepest);
    }
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
