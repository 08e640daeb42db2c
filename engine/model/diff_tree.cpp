#include "engine/model/diff_tree.h"

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
                                        std::shared_ptr<const FrameTable> frames,
                                        std::span<const uint32_t> baseToUnion, const std::atomic<bool> *cancel,
                                        Widths shown)
{
    DiffTree diff;
    diff.m_frames = std::move(frames);
    const FrameTable &table = *diff.m_frames;
    // Every node of either side at most: growing the vector instead cost a copy of every node per doubling.
    diff.m_nodes.reserve(newTree.size() + baseTree.size());
    // Per node, where its children begin and how many there are: the merge below adds a node's children one
    // after the other in name order, so the width trees need no sort.
    std::vector<uint32_t> firstChild;
    std::vector<uint32_t> childCount;
    firstChild.reserve(diff.m_nodes.capacity());
    childCount.reserve(diff.m_nodes.capacity());
    Node root;
    if (newTree.size() > 0) {
        root.newSelf = newTree.node(0).self;
        root.newTotal = newTree.total();
    }
    if (baseTree.size() > 0) {
        root.baseSelf = baseTree.node(0).self;
        root.baseTotal = baseTree.total();
    }
    diff.m_nodes.push_back(root);
    firstChild.push_back(0);
    childCount.push_back(0);
    const auto baseFrame = [&](uint32_t baseNode) { return baseToUnion[baseTree.node(baseNode).frame]; };
    // Children come in name order on both sides, and a name is one frame in each table and in `frames` (the
    // union matches frames by name): the order of `frames`' name ranks is that order, without comparing strings.
    const std::vector<uint32_t> &rank = table.nameRank();
    const auto add = [&](uint32_t parent, uint32_t frame, uint32_t newNode, uint32_t baseNode,
                         std::vector<Pending> &stack) {
        Node node;
        node.frame = frame;
        node.parent = parent;
        node.depth = diff.m_nodes[parent].depth + 1;
        if (newNode != kNoIndex) {
            node.newSelf = newTree.node(newNode).self;
            node.newTotal = newTree.node(newNode).total;
        }
        if (baseNode != kNoIndex) {
            node.baseSelf = baseTree.node(baseNode).self;
            node.baseTotal = baseTree.node(baseNode).total;
        }
        stack.push_back({static_cast<uint32_t>(diff.m_nodes.size()), newNode, baseNode});
        diff.m_nodes.push_back(node);
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
        const auto first = static_cast<uint32_t>(diff.m_nodes.size());
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
        childCount[p.node] = static_cast<uint32_t>(diff.m_nodes.size()) - first;
    }
    diff.m_unchanged = std::all_of(diff.m_nodes.begin(), diff.m_nodes.end(), [](const Node &n) {
        return n.baseSelf == n.newSelf && n.baseTotal == n.newTotal;
    });
    const size_t n = diff.m_nodes.size();
    std::vector<uint32_t> childOffsets(n + 1, 0);
    for (size_t k = 0; k < n; ++k)
        childOffsets[k + 1] = childOffsets[k] + childCount[k];
    std::vector<uint32_t> children(n - 1);
    for (size_t k = 0; k < n; ++k)
        std::iota(children.begin() + childOffsets[k], children.begin() + childOffsets[k + 1], firstChild[k]);
    // The new widths own the shape (the children lists the merge made); the other choices copy it when made.
    std::vector<CallTree::Node> nodes(n);
    for (size_t i = 0; i < n; ++i) {
        const Node &d = diff.m_nodes[i];
        nodes[i] = CallTree::Node{d.frame, d.parent, d.depth, d.depth, d.newSelf, d.newTotal};
    }
    diff.m_widths->trees[static_cast<size_t>(Widths::New)] = std::make_shared<const CallTree>(
        CallTree::withChildren(std::move(nodes), std::move(childOffsets), std::move(children)));
    if (shown != Widths::New)
        diff.m_widths->trees[static_cast<size_t>(shown)] = diff.makeWidths(shown);
    return diff;
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
    const size_t n = m_nodes.size();
    std::vector<CallTree::Node> nodes(n);
    if (widths == Widths::Base) {
        for (size_t i = 0; i < n; ++i) {
            const Node &d = m_nodes[i];
            nodes[i] = CallTree::Node{d.frame, d.parent, d.depth, d.depth, d.baseSelf, d.baseTotal};
        }
    } else {
        // The base-only paths at their base width, added to every ancestor's width: children come after their
        // parents, so one backward pass carries each node's added width up.
        std::vector<int64_t> added(widths == Widths::NewWithBaseOnly ? n : 0, 0);
        for (size_t i = added.size(); i-- > 1;) {
            if (isBaseOnly(static_cast<uint32_t>(i)) && !isBaseOnly(m_nodes[i].parent))
                added[i] = m_nodes[i].baseTotal;
            added[m_nodes[i].parent] += isBaseOnly(m_nodes[i].parent) ? 0 : added[i];
        }
        for (size_t i = 0; i < n; ++i) {
            const Node &d = m_nodes[i];
            const bool baseOnly = !added.empty() && isBaseOnly(static_cast<uint32_t>(i));
            nodes[i] = CallTree::Node{d.frame,
                                      d.parent,
                                      d.depth,
                                      d.depth,
                                      baseOnly ? d.baseSelf : d.newSelf,
                                      baseOnly ? d.baseTotal : d.newTotal + (added.empty() ? 0 : added[i])};
        }
    }
    // The shape is the new widths' (made with the tree, never dropped).
    return std::make_shared<const CallTree>(
        CallTree::withValues(std::move(nodes), *m_widths->trees[static_cast<size_t>(Widths::New)]));
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
        const Node &n = m_nodes[id];
        out.append(2 * static_cast<size_t>(n.depth), ' ');
        out += (id == 0 ? std::string("<root>") : m_frames->frame(n.frame).name) + " " +
               std::to_string(n.baseTotal) + " " + std::to_string(n.newTotal);
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
