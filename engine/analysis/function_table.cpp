#include "engine/analysis/function_table.h"

#include "engine/analysis/valued_stacks.h"

#include <algorithm>
#include <unordered_map>

namespace emberline::engine {

std::optional<FunctionTable> FunctionTable::build(const Profile &profile, const FrameTable &frames,
                                                  std::span<const int64_t> perStack, const std::atomic<bool> *cancel)
{
    std::vector<int64_t> self(frames.size(), 0);
    std::vector<int64_t> total(frames.size(), 0);
    std::vector<uint32_t> seenIn(frames.size(), kNoIndex); // last stack that counted this frame's total
    std::vector<uint32_t> path;
    FunctionTable table;

    const bool complete = forEachValuedStack(perStack, cancel, [&](uint32_t s, int64_t v) {
        path.clear();
        frames.expandRootFirst(profile.stacks().stack(s), path);
        table.m_grandTotal += v;
        if (path.empty())
            return;
        self[path.back()] += v;
        for (uint32_t f : path) {
            if (seenIn[f] != s) {
                seenIn[f] = s;
                total[f] += v;
            }
        }
    });
    if (!complete)
        return std::nullopt;
    table.setRows(frames, self, total);
    return table;
}

FunctionTable FunctionTable::fromCallTree(const CallTree &tree, const FrameTable &frames)
{
    std::vector<int64_t> self(frames.size(), 0);
    std::vector<int64_t> total(frames.size(), 0);
    std::vector<uint32_t> onPath(frames.size(), 0); // occurrences of each frame on the path being walked
    FunctionTable table;
    table.m_grandTotal = tree.total();
    if (tree.size() == 0)
        return table;
    // Depth first, so that onPath holds exactly the frames between the root and the node: a node whose frame is
    // already on its path is a recursive call, and the outer node's total already holds its samples.
    struct Visit {
        uint32_t node;
        bool leaving;
    };
    std::vector<Visit> stack;
    for (uint32_t c : tree.children(0))
        stack.push_back({c, false});
    while (!stack.empty()) {
        const Visit v = stack.back();
        stack.pop_back();
        const CallTree::Node &node = tree.node(v.node);
        if (v.leaving) {
            --onPath[node.frame];
            continue;
        }
        self[node.frame] += node.self;
        if (onPath[node.frame]++ == 0)
            total[node.frame] += node.total;
        stack.push_back({v.node, true});
        for (uint32_t c : tree.children(v.node))
            stack.push_back({c, false});
    }
    table.setRows(frames, self, total);
    return table;
}

FunctionTable FunctionTable::fromFrameTotals(const FrameTable &frames, std::span<const int64_t> self,
                                             std::span<const int64_t> total, int64_t grandTotal)
{
    FunctionTable table;
    table.m_grandTotal = grandTotal;
    table.setRows(frames, self, total);
    return table;
}

void FunctionTable::setRows(const FrameTable &frames, std::span<const int64_t> self, std::span<const int64_t> total)
{
    for (uint32_t f = 0; f < frames.size() && f < self.size() && f < total.size(); ++f) {
        if (self[f] != 0 || total[f] != 0)
            m_rows.push_back(Row{f, self[f], total[f]});
    }
    std::sort(m_rows.begin(), m_rows.end(), [&](const Row &a, const Row &b) {
        if (a.self != b.self)
            return a.self > b.self;
        if (a.total != b.total)
            return a.total > b.total;
        return frames.frame(a.frame).name < frames.frame(b.frame).name;
    });
}

CallerCallee computeCallerCallee(const Profile &profile, const FrameTable &frames, std::span<const int64_t> perStack,
                                 uint32_t frame)
{
    CallerCallee result;
    result.frame = frame;
    std::unordered_map<uint32_t, int64_t> callers;
    std::unordered_map<uint32_t, int64_t> callees;
    std::vector<uint32_t> path;
    std::vector<uint32_t> countedCallers;
    std::vector<uint32_t> countedCallees;

    forEachValuedStack(perStack, [&](uint32_t s, int64_t v) {
        path.clear();
        frames.expandRootFirst(profile.stacks().stack(s), path);
        if (std::find(path.begin(), path.end(), frame) == path.end())
            return;
        result.total += v;
        if (path.back() == frame)
            result.self += v;
        countedCallers.clear();
        countedCallees.clear();
        // Each neighbour counts once per stack, so recursion does not inflate the edges.
        for (size_t i = 0; i < path.size(); ++i) {
            if (path[i] != frame)
                continue;
            if (i > 0 && path[i - 1] != frame &&
                std::find(countedCallers.begin(), countedCallers.end(), path[i - 1]) == countedCallers.end()) {
                countedCallers.push_back(path[i - 1]);
                callers[path[i - 1]] += v;
            }
            if (i + 1 < path.size() && path[i + 1] != frame &&
                std::find(countedCallees.begin(), countedCallees.end(), path[i + 1]) == countedCallees.end()) {
                countedCallees.push_back(path[i + 1]);
                callees[path[i + 1]] += v;
            }
        }
    });
    auto toSorted = [&](const std::unordered_map<uint32_t, int64_t> &m) {
        std::vector<CallerCallee::Edge> edges;
        edges.reserve(m.size());
        for (const auto &[f, v] : m)
            edges.push_back({f, v});
        std::sort(edges.begin(), edges.end(), [&](const auto &a, const auto &b) {
            return a.value != b.value ? a.value > b.value : frames.frame(a.frame).name < frames.frame(b.frame).name;
        });
        return edges;
    };
    result.callers = toSorted(callers);
    result.callees = toSorted(callees);
    return result;
}

} // namespace emberline::engine
