#include "engine/model/frame_table.h"

#include "engine/common/strings.h"
#include "engine/model/python_frame.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace emberline::engine {

bool frameOrderLess(const Frame &a, const Frame &b)
{
    if (a.name != b.name)
        return a.name < b.name;
    return !isPythonFrame(a) && isPythonFrame(b);
}

FrameTable::FrameTable(const Profile &profile)
{
    // Keyed by name alone: `go tool pprof` at function granularity clears file names before it aggregates, so
    // two functions of the same name in different files are one row there, and must be one frame here for
    // `emberline report` and the views to show the same numbers. The first function seen gives file and line.
    // Python functions are named apart from native code (byName[1]): `python3 script.py` has the interpreter's C
    // `main` at the root of every stack and, as often as not, the script's own `def main()` above it; as one frame,
    // one of them would be coloured, described and disassembled as the other.
    std::unordered_map<std::string, uint32_t> byName[2];
    auto intern = [&](Frame f) {
        auto [it, inserted] =
            byName[isPythonFrame(f) ? 1 : 0].try_emplace(f.name, static_cast<uint32_t>(m_frames.size()));
        if (inserted)
            m_frames.push_back(std::move(f));
        return it->second;
    };

    // Function index -> frame id, computed once per function rather than per line.
    std::vector<uint32_t> functionFrame(profile.functions().size(), kNoIndex);
    // Per function index: whether its lines may lower its frame's line (a Python function that gave its frame).
    std::vector<bool> lowersLine(profile.functions().size(), false);
    const auto &locations = profile.locations();
    m_locOffsets.reserve(locations.size() + 1);
    m_locOffsets.push_back(0);
    for (const Location &loc : locations) {
        std::string module;
        const Mapping *mapping = loc.mappingIndex != kNoIndex ? &profile.mappings()[loc.mappingIndex] : nullptr;
        if (mapping)
            module = baseName(profile.str(mapping->filename));
        bool any = false;
        for (const Line &line : loc.lines) {
            if (line.functionIndex == kNoIndex)
                continue;
            uint32_t &fid = functionFrame[line.functionIndex];
            if (fid == kNoIndex) {
                const Function &fn = profile.functions()[line.functionIndex];
                Frame f;
                f.name = profile.str(fn.name);
                if (f.name.empty())
                    f.name = profile.str(fn.systemName);
                if (f.name.empty())
                    f.name = module.empty() ? hexAddress(loc.address) : module + "+" + hexAddress(loc.address);
                f.file = profile.str(fn.filename);
                f.line = fn.startLine;
                f.module = module;
                const bool python = isPythonFrame(f);
                const std::string file = f.file;
                fid = intern(std::move(f));
                lowersLine[line.functionIndex] = python && m_frames[fid].file == file && m_frames[fid].module.empty();
            }
            // A Python function's start line is not always recorded (Emberline's recordings give the first line
            // sampled): its frame takes the lowest line known of it, the def's or the nearest line below it.
            if (lowersLine[line.functionIndex] && line.line > 0 &&
                (m_frames[fid].line <= 0 || line.line < m_frames[fid].line))
                m_frames[fid].line = line.line;
            m_locFrames.push_back(fid);
            any = true;
        }
        if (!any) {
            Frame f;
            const uint64_t offset = mapping ? loc.address - mapping->start + mapping->offset : loc.address;
            f.name = module.empty() ? hexAddress(loc.address) : module + "+" + hexAddress(offset);
            f.module = module;
            f.symbolized = false;
            m_locFrames.push_back(intern(std::move(f)));
        }
        m_locOffsets.push_back(static_cast<uint32_t>(m_locFrames.size()));
    }
}

FrameTable FrameTable::unionOf(const FrameTable &first, const FrameTable &second, std::vector<uint32_t> &secondToUnion)
{
    FrameTable table;
    table.m_locOffsets.push_back(0);
    table.m_frames = first.m_frames;
    // By name, Python functions apart from native code, as each table was made.
    std::unordered_map<std::string_view, uint32_t> byName[2];
    byName[0].reserve(first.size() + second.size());
    for (uint32_t f = 0; f < first.size(); ++f)
        byName[isPythonFrame(first.m_frames[f]) ? 1 : 0].emplace(first.m_frames[f].name, f);
    secondToUnion.assign(second.size(), kNoIndex);
    table.m_frames.reserve(first.size() + second.size());
    for (uint32_t f = 0; f < second.size(); ++f) {
        const Frame &frame = second.m_frames[f];
        const auto &named = byName[isPythonFrame(frame) ? 1 : 0];
        if (auto it = named.find(frame.name); it != named.end()) {
            secondToUnion[f] = it->second;
            continue;
        }
        secondToUnion[f] = static_cast<uint32_t>(table.m_frames.size());
        table.m_frames.push_back(frame);
    }
    // byName's keys point into `first`'s and `second`'s frames, never into this table's (which may move).
    return table;
}

void FrameTable::expandRootFirst(std::span<const uint32_t> stack, std::vector<uint32_t> &out) const
{
    for (size_t i = stack.size(); i-- > 0;) {
        const auto frames = locationFrames(stack[i]);
        for (size_t j = frames.size(); j-- > 0;)
            out.push_back(frames[j]);
    }
}

std::vector<uint32_t> FrameTable::findByName(std::string_view name) const
{
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < m_frames.size(); ++i) {
        if (m_frames[i].name == name)
            ids.push_back(i);
    }
    return ids;
}

const std::vector<uint32_t> &FrameTable::nameRank() const
{
    std::call_once(m_nameRank->once, [this] {
        std::vector<uint32_t> order(m_frames.size());
        std::iota(order.begin(), order.end(), 0U);
        std::sort(order.begin(), order.end(),
                  [&](uint32_t a, uint32_t b) { return frameOrderLess(m_frames[a], m_frames[b]); });
        std::vector<uint32_t> &rank = m_nameRank->rank;
        rank.resize(order.size());
        for (uint32_t i = 0; i < order.size(); ++i)
            rank[order[i]] = i;
    });
    return m_nameRank->rank;
}

std::shared_ptr<const std::vector<QString>> frameDisplayNames(const FrameTable &frames)
{
    auto names = std::make_shared<std::vector<QString>>();
    names->reserve(frames.size());
    for (uint32_t f = 0; f < frames.size(); ++f)
        names->push_back(QString::fromStdString(frames.frame(f).name));
    return names;
}

} // namespace emberline::engine
