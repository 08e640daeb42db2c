#include "engine/analysis/sandwich.h"

#include "engine/analysis/valued_stacks.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace emberline::engine {
namespace {

// A call tree grown one path at a time: node 0 the root, each path's nodes gaining the path's value.
class PathTrie {
public:
    PathTrie() { m_nodes.push_back(CallTree::Node{}); }

    template <typename It> void add(It first, It last, int64_t value)
    {
        uint32_t node = 0;
        m_nodes[0].total += value;
        for (It it = first; it != last; ++it) {
            const uint64_t key = (static_cast<uint64_t>(node) << 32) | *it;
            auto [slot, inserted] = m_children.try_emplace(key, static_cast<uint32_t>(m_nodes.size()));
            if (inserted) {
                CallTree::Node child;
                child.frame = *it;
                child.parent = node;
                child.depth = m_nodes[node].depth + 1;
                m_nodes.push_back(child);
            }
            node = slot->second;
            m_nodes[node].total += value;
        }
        m_nodes[node].self += value;
    }
    CallTree tree(const FrameTable &frames) { return CallTree::fromNodes(m_nodes, frames); }

private:
    std::vector<CallTree::Node> m_nodes;
    std::unordered_map<uint64_t, uint32_t> m_children;
};

} // namespace

std::optional<Sandwich> buildSandwich(const Profile &profile, const FrameTable &frames,
                                      std::span<const int64_t> perStack, uint32_t frame,
                                      const std::atomic<bool> *cancel)
{
    PathTrie callers;
    PathTrie callees;
    Sandwich sandwich;
    sandwich.frame = frame;
    std::vector<uint32_t> path;
    const size_t stacks = std::min(perStack.size(), profile.stacks().size());
    const bool complete = forEachValuedStack(perStack.first(stacks), cancel, [&](uint32_t s, int64_t value) {
        path.clear();
        frames.expandRootFirst(profile.stacks().stack(s), path);
        const auto outermost = std::find(path.begin(), path.end(), frame);
        if (outermost == path.end())
            return;
        sandwich.total += value;
        if (path.back() == frame)
            sandwich.self += value;
        callees.add(outermost, path.end(), value);
        callers.add(std::make_reverse_iterator(outermost + 1), path.rend(), value);
    });
    if (!complete)
        return std::nullopt;
    sandwich.callers = callers.tree(frames);
    sandwich.callees = callees.tree(frames);
    return sandwich;
}

} // namespace emberline::engine
