#include "engine/analysis/line_table.h"

#include "engine/analysis/valued_stacks.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace emberline::engine {
namespace {

// A matched function (name, file) and one line of it, while the table is being summed.
struct GroupSums {
    FunctionLines lines;
    uint32_t seenIn = kNoIndex; // last stack that counted the group's total
};

struct LineSums {
    uint32_t group = 0;
    LineCost cost;
    uint32_t seenIn = kNoIndex;
};

class Accumulator {
public:
    Accumulator(const Profile &profile, const LineTable::NameMatcher &matches) : m_profile(profile)
    {
        groupFunctions(matches);
        indexLocations();
    }

    void addStack(uint32_t stackId, int64_t value)
    {
        const auto stack = m_profile.stacks().stack(stackId);
        bool leaf = true;
        for (uint32_t loc : stack) {
            for (uint32_t i = m_locOffsets[loc]; i < m_locOffsets[loc + 1]; ++i) {
                const uint32_t entry = m_locLines[i];
                if (entry == kNoIndex)
                    continue;
                LineSums &line = m_lines[entry];
                GroupSums &group = m_groups[line.group];
                if (leaf && i == m_locOffsets[loc]) {
                    line.cost.self += value;
                    group.lines.self += value;
                }
                if (line.seenIn != stackId) {
                    line.seenIn = stackId;
                    line.cost.total += value;
                }
                if (group.seenIn != stackId) {
                    group.seenIn = stackId;
                    group.lines.total += value;
                }
            }
            leaf = false;
        }
    }

    std::vector<FunctionLines> finish()
    {
        for (const LineSums &l : m_lines) {
            if (l.cost.self != 0 || l.cost.total != 0)
                m_groups[l.group].lines.lines.push_back(l.cost);
        }
        std::vector<FunctionLines> out;
        for (GroupSums &g : m_groups) {
            if (g.lines.lines.empty())
                continue;
            std::sort(g.lines.lines.begin(), g.lines.lines.end(),
                      [](const LineCost &a, const LineCost &b) { return a.line < b.line; });
            out.push_back(std::move(g.lines));
        }
        std::sort(out.begin(), out.end(), [](const FunctionLines &a, const FunctionLines &b) {
            return a.name != b.name ? a.name < b.name : a.file < b.file;
        });
        return out;
    }

private:
    // Functions with the same name and file are one group, as pprof merges them into one routine.
    void groupFunctions(const LineTable::NameMatcher &matches)
    {
        std::map<std::pair<std::string, std::string>, uint32_t> byKey;
        m_functionGroup.assign(m_profile.functions().size(), kNoIndex);
        for (size_t f = 0; f < m_profile.functions().size(); ++f) {
            const Function &fn = m_profile.functions()[f];
            std::string name = m_profile.str(fn.name);
            if (name.empty())
                name = m_profile.str(fn.systemName);
            if (name.empty() || !matches(name))
                continue;
            auto [it, inserted] =
                byKey.try_emplace({name, m_profile.str(fn.filename)}, static_cast<uint32_t>(m_groups.size()));
            if (inserted) {
                GroupSums g;
                g.lines.name = name;
                g.lines.file = m_profile.str(fn.filename);
                g.lines.startLine = fn.startLine;
                m_groups.push_back(std::move(g));
            }
            m_functionGroup[f] = it->second;
        }
    }

    // Each location's lines as line entries (kNoIndex for a line of a function that is not listed).
    void indexLocations()
    {
        std::unordered_map<uint64_t, uint32_t> entryOf; // (group << 32 | line) -> entry
        const auto &locations = m_profile.locations();
        m_locOffsets.reserve(locations.size() + 1);
        m_locOffsets.push_back(0);
        for (const Location &loc : locations) {
            for (const Line &line : loc.lines) {
                const uint32_t group =
                    line.functionIndex < m_functionGroup.size() ? m_functionGroup[line.functionIndex] : kNoIndex;
                if (group == kNoIndex) {
                    m_locLines.push_back(kNoIndex);
                    continue;
                }
                const uint64_t key = (uint64_t(group) << 32) | uint32_t(line.line);
                auto [it, inserted] = entryOf.try_emplace(key, static_cast<uint32_t>(m_lines.size()));
                if (inserted)
                    m_lines.push_back(LineSums{group, LineCost{line.line, 0, 0}, kNoIndex});
                m_locLines.push_back(it->second);
            }
            m_locOffsets.push_back(static_cast<uint32_t>(m_locLines.size()));
        }
    }

    const Profile &m_profile;
    std::vector<uint32_t> m_functionGroup;
    std::vector<GroupSums> m_groups;
    std::vector<LineSums> m_lines;
    std::vector<uint32_t> m_locLines;   // per location, its lines' entries, back to back
    std::vector<uint32_t> m_locOffsets; // locations + 1
};

} // namespace

std::optional<std::vector<FunctionLines>> LineTable::build(const Profile &profile, std::span<const int64_t> perStack,
                                                           const NameMatcher &matches, const std::atomic<bool> *cancel)
{
    Accumulator acc(profile, matches);
    if (!forEachValuedStack(perStack, cancel, [&](uint32_t s, int64_t v) { acc.addStack(s, v); }))
        return std::nullopt;
    return acc.finish();
}

} // namespace emberline::engine
