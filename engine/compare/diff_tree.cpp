#include "engine/compare/diff_tree.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace emberline::engine {
namespace {

// A node of the differential tree with the nodes it merges from each side (kNoIndex where the path is absent).
struct Pending {
    uint32_t node;
    uint32_t newNode;
    uint32_t baseNode;
};

} // namespace

std::optional<DiffTree> DiffTree::build(const CallTree &newTree, const CallTree &baseTree,
                                        std::shared_ptr<const FrameTable> frames, std::span<const uint32_t> baseToUnion,
                                        const std::atomic<bool> *cancel, Widths shown)
{
    DiffTree diff;
    diff.m_frames = std::move(frames);
    const FrameTable &table = *diff.m_frames;
    // The merged nodes as the new widths' tree holds them (frame, parent, depth and the new values), and the base
    // values beside them: every node of either side at most (growing the vectors instead cost a copy of every
    // node per doubling; reserved address space is touched only as nodes are added).
    std::vector<CallTree::Node> nodes;
    std::vector<BaseValues> &base = diff.m_base;
    nodes.reserve(newTree.size() + baseTree.size());
    base.reserve(nodes.capacity());
    // Per node, where its children begin and how many there are: the merge below adds a node's children one
    // after the other in name order, so the width trees need no sort.
    std::vector<uint32_t> firstChild;
    std::vector<uint32_t> childCount;
    firstChild.reserve(nodes.capacity());
    childCount.reserve(nodes.capacity());
    CallTree::Node root{};
    root.frame = kNoIndex;
    root.parent = kNoIndex;
    BaseValues rootBase;
    if (newTree.size() > 0) {
        root.self = newTree.node(0).self;
        root.total = newTree.total();
    }
    if (baseTree.size() > 0) {
        rootBase.self = baseTree.node(0).self;
        rootBase.total = baseTree.total();
    }
    nodes.push_back(root);
    base.push_back(rootBase);
    firstChild.push_back(0);
    childCount.push_back(0);
    const auto baseFrame = [&](uint32_t baseNode) { return baseToUnion[baseTree.node(baseNode).frame]; };
    // Children come in frame order (frameOrderLess) on both sides, and a name is one frame of each kind (Python or
    // native) in each table and in `frames` (the union matches frames so): the order of `frames`' name ranks is that
    // order, without comparing strings.
    const std::vector<uint32_t> &rank = table.nameRank();
    const auto add = [&](uint32_t parent, uint32_t frame, uint32_t newNode, uint32_t baseNode,
                         std::vector<Pending> &stack) {
        const uint32_t depth = nodes[parent].depth + 1;
        CallTree::Node node{frame, parent, depth, depth, 0, 0};
        if (newNode != kNoIndex) {
            node.self = newTree.node(newNode).self;
            node.total = newTree.node(newNode).total;
        }
        BaseValues values;
        if (baseNode != kNoIndex) {
            values.self = baseTree.node(baseNode).self;
            values.total = baseTree.node(baseNode).total;
        }
        stack.push_back({static_cast<uint32_t>(nodes.size()), newNode, baseNode});
        nodes.push_back(node);
        base.push_back(values);
        firstChild.push_back(0);
        childCount.push_back(0);
    };

    std::vector<Pending> stack{{0, newTree.size() > 0 ? 0u : kNoIndex, baseTree.size() > 0 ? 0u : kNoIndex}};
    size_t visited = 0;
    while (!stack.empty()) {
        const Pending p = stack.back();
        stack.pop_back();
        if ((++visited & 0x3FFF) == 0 && cancel && cancel->load(std::memory_order_relaxed))
            return std::nullopt;
        // Both trees order children by frame name: a merge of the two sorted lists.
        const auto newKids = p.newNode != kNoIndex ? newTree.children(p.newNode) : std::span<const uint32_t>{};
        const auto baseKids = p.baseNode != kNoIndex ? baseTree.children(p.baseNode) : std::span<const uint32_t>{};
        size_t i = 0;
        size_t j = 0;
        const auto first = static_cast<uint32_t>(nodes.size());
        while (i < newKids.size() || j < baseKids.size()) {
            const uint32_t nf = i < newKids.size() ? newTree.node(newKids[i]).frame : kNoIndex;
            const uint32_t bf = j < baseKids.size() ? baseFrame(baseKids[j]) : kNoIndex;
            if (nf == bf) {
                add(p.node, nf, newKids[i++], baseKids[j++], stack);
            } else if (bf == kNoIndex || (nf != kNoIndex && rank[nf] < rank[bf])) {
                add(p.node, nf, newKids[i++], kNoIndex, stack);
            } else {
                add(p.node, bf, kNoIndex, baseKids[j++], stack);
            }
        }
        firstChild[p.node] = first;
        childCount[p.node] = static_cast<uint32_t>(nodes.size()) - first;
    }
    const size_t n = nodes.size();
    diff.m_unchanged = true;
    for (size_t k = 0; k < n && diff.m_unchanged; ++k)
        diff.m_unchanged = base[k].self == nodes[k].self && base[k].total == nodes[k].total;
    std::vector<uint32_t> childOffsets(n + 1, 0);
    for (size_t k = 0; k < n; ++k)
        childOffsets[k + 1] = childOffsets[k] + childCount[k];
    std::vector<uint32_t> children(n - 1);
    for (size_t k = 0; k < n; ++k)
        std::iota(children.begin() + childOffsets[k], children.begin() + childOffsets[k + 1], firstChild[k]);
    // The new widths own the shape (the children lists the merge made); the other choices copy it when made.
    auto fresh =
        std::make_shared<const CallTree>(CallTree::withChildren(nodes, std::move(childOffsets), std::move(children)));
    diff.m_new = fresh.get();
    diff.m_widths->trees[static_cast<size_t>(Widths::New)] = std::move(fresh);
    if (shown != Widths::New)
        diff.m_widths->trees[static_cast<size_t>(shown)] = diff.makeWidths(shown);
    return diff;
}

DiffTree::Node DiffTree::node(uint32_t id) const
{
    const CallTree::Node &n = m_new->node(id);
    return Node{n.frame, n.parent, n.depth, m_base[id].self, m_base[id].total, n.self, n.total};
}

std::shared_ptr<const CallTree> DiffTree::widths(Widths widths) const
{
    std::lock_guard lock(m_widths->mutex);
    auto &tree = m_widths->trees[static_cast<size_t>(widths)];
    if (!tree)
        tree = makeWidths(widths);
    return tree;
}

bool DiffTree::hasWidths(Widths widths) const
{
    std::lock_guard lock(m_widths->mutex);
    return m_widths->trees[static_cast<size_t>(widths)] != nullptr;
}

std::shared_ptr<const CallTree> DiffTree::makeWidths(Widths widths) const
{
    const size_t n = size();
    std::vector<CallTree::Node> nodes(n);
    if (widths == Widths::Base) {
        for (size_t i = 0; i < n; ++i) {
            const CallTree::Node &d = m_new->node(static_cast<uint32_t>(i));
            nodes[i] = CallTree::Node{d.frame, d.parent, d.depth, d.depth, m_base[i].self, m_base[i].total};
        }
    } else {
        // The base-only paths at their base width, added to every ancestor's width: children come after their
        // parents, so one backward pass carries each node's added width up.
        std::vector<int64_t> added(widths == Widths::NewWithBaseOnly ? n : 0, 0);
        for (size_t i = added.size(); i-- > 1;) {
            const uint32_t parent = m_new->node(static_cast<uint32_t>(i)).parent;
            if (isBaseOnly(static_cast<uint32_t>(i)) && !isBaseOnly(parent))
                added[i] = m_base[i].total;
            added[parent] += isBaseOnly(parent) ? 0 : added[i];
        }
        for (size_t i = 0; i < n; ++i) {
            const CallTree::Node &d = m_new->node(static_cast<uint32_t>(i));
            const bool baseOnly = !added.empty() && isBaseOnly(static_cast<uint32_t>(i));
            nodes[i] = CallTree::Node{d.frame,
                                      d.parent,
                                      d.depth,
                                      d.depth,
                                      baseOnly ? m_base[i].self : d.self,
                                      baseOnly ? m_base[i].total : d.total + (added.empty() ? 0 : added[i])};
        }
    }
    // The shape is the new widths' (made with the tree, never dropped).
    return std::make_shared<const CallTree>(CallTree::withValues(nodes, *m_new));
}

std::string DiffTree::dump() const
{
    std::string out;
    const std::shared_ptr<const CallTree> base = widths(Widths::Base);
    const CallTree &order = *base;
    std::vector<uint32_t> stack{0};
    // Pre-order over the union of both sides: children of a node are listed in name order.
    while (!stack.empty()) {
        const uint32_t id = stack.back();
        stack.pop_back();
        const Node n = node(id);
        out.append(2 * static_cast<size_t>(n.depth), ' ');
        out += (id == 0 ? std::string("<root>") : m_frames->frame(n.frame).name) + " " + std::to_string(n.baseTotal) +
               " " + std::to_string(n.newTotal);
        if (id != 0 && isBaseOnly(id))
            out += " (base only)";
        out += "\n";
        const auto kids = order.children(id);
        for (auto it = kids.rbegin(); it != kids.rend(); ++it)
            stack.push_back(*it);
    }
    return out;
}

double relativeChange(int64_t base, int64_t next)
{
    if (base == next)
        return 0.0;
    const double scale = static_cast<double>(std::max(std::llabs(base), std::llabs(next)));
    return std::clamp(static_cast<double>(next - base) / scale, -1.0, 1.0);
}

std::optional<double> changePercent(int64_t base, int64_t next)
{
    if (base == 0)
        return std::nullopt;
    return 100.0 * static_cast<double>(next - base) / static_cast<double>(std::llabs(base));
}

} // namespace emberline::engine
