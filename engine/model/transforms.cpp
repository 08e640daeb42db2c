#include "engine/model/transforms.h"

#include <QRegularExpression>

#include <map>
#include <optional>
#include <unordered_map>

namespace emberline::engine {
namespace {

constexpr uint32_t kNoLine = UINT32_MAX;

// One frame of a stack being transformed: a line of the location at a position of the original stack (a
// location's lines are frames of their own, inlined callee first); kNoLine for a location without lines.
struct FrameRef {
    uint32_t position;
    uint32_t location;
    uint32_t line;
};

std::string functionName(const Profile &p, const Function &fn)
{
    const std::string &name = p.str(fn.name);
    return name.empty() ? p.str(fn.systemName) : name;
}

// Which functions and mappings a step matches, computed once per step instead of once per frame.
struct StepMatcher {
    Transform::Kind kind;
    std::vector<uint8_t> function; // per function index
    std::vector<uint8_t> mapping;  // per mapping index

    bool matches(const Profile &p, const FrameRef &f) const
    {
        const Location &loc = p.locations()[f.location];
        if (loc.mappingIndex != kNoIndex && loc.mappingIndex < mapping.size() && mapping[loc.mappingIndex])
            return true;
        if (f.line == kNoLine)
            return false;
        const uint32_t fn = loc.lines[f.line].functionIndex;
        return fn < function.size() && function[fn];
    }
};

Result<StepMatcher> compile(const Profile &p, const Transform &t)
{
    StepMatcher m{t.kind, std::vector<uint8_t>(p.functions().size(), 0), std::vector<uint8_t>(p.mappings().size(), 0)};
    const bool byRegex = t.kind == Transform::Kind::Focus || t.kind == Transform::Kind::Ignore ||
                         t.kind == Transform::Kind::Hide;
    if (!byRegex) {
        for (size_t f = 0; f < p.functions().size(); ++f)
            m.function[f] = functionName(p, p.functions()[f]) == t.pattern;
        return m;
    }
    const QRegularExpression re(QString::fromStdString(t.pattern));
    if (!re.isValid())
        return makeError(Error::Code::Invalid, t.describe() + ": not a valid regular expression: " +
                                                   re.errorString().toStdString());
    auto matches = [&](StringId s) { return s != 0 && re.match(QString::fromStdString(p.str(s))).hasMatch(); };
    for (size_t f = 0; f < p.functions().size(); ++f) {
        const Function &fn = p.functions()[f];
        m.function[f] = matches(fn.name) || matches(fn.filename);
    }
    for (size_t i = 0; i < p.mappings().size(); ++i)
        m.mapping[i] = matches(p.mappings()[i].filename);
    return m;
}

bool anyMatch(const Profile &p, const StepMatcher &m, const std::vector<FrameRef> &frames)
{
    for (const FrameRef &f : frames) {
        if (m.matches(p, f))
            return true;
    }
    return false;
}

// Frames are leaf first: the outermost call of the function is the last match, the innermost the first.
void collapseRecursion(const Profile &p, const StepMatcher &m, std::vector<FrameRef> &frames)
{
    size_t innermost = frames.size();
    size_t outermost = frames.size();
    for (size_t i = 0; i < frames.size(); ++i) {
        if (m.matches(p, frames[i])) {
            if (innermost == frames.size())
                innermost = i;
            outermost = i;
        }
    }
    if (innermost < outermost)
        frames.erase(frames.begin() + static_cast<std::ptrdiff_t>(innermost) + 1,
                     frames.begin() + static_cast<std::ptrdiff_t>(outermost) + 1);
}

// Applies the steps to one stack; false when the sample is dropped.
bool transformFrames(const Profile &p, const std::vector<StepMatcher> &steps, std::vector<FrameRef> &frames)
{
    for (const StepMatcher &m : steps) {
        switch (m.kind) {
        case Transform::Kind::Focus:
            if (!anyMatch(p, m, frames))
                return false;
            break;
        case Transform::Kind::Ignore:
            if (anyMatch(p, m, frames))
                return false;
            break;
        case Transform::Kind::Hide:
        case Transform::Kind::MergeIntoCaller:
            std::erase_if(frames, [&](const FrameRef &f) { return m.matches(p, f); });
            if (frames.empty())
                return false;
            break;
        case Transform::Kind::CollapseRecursion:
            collapseRecursion(p, m, frames);
            break;
        }
    }
    return true;
}

// Builds the transformed profile: the source's tables, then locations for partial lines, then the samples.
class ChainRunner {
public:
    ChainRunner(const Profile &source, std::vector<StepMatcher> steps)
        : m_source(source), m_steps(std::move(steps))
    {
        copyTables();
    }

    // The transformed stack id of a source stack, or kNoIndex when its samples are dropped.
    uint32_t mapStack(uint32_t stackId)
    {
        if (stackId >= m_stackMap.size())
            m_stackMap.resize(m_source.stacks().size(), kUnmapped);
        uint32_t &mapped = m_stackMap[stackId];
        if (mapped != kUnmapped)
            return mapped;
        m_frames.clear();
        const auto stack = m_source.stacks().stack(stackId);
        for (uint32_t pos = 0; pos < stack.size(); ++pos) {
            const Location &loc = m_source.locations()[stack[pos]];
            if (loc.lines.empty())
                m_frames.push_back({pos, stack[pos], kNoLine});
            for (uint32_t l = 0; l < loc.lines.size(); ++l)
                m_frames.push_back({pos, stack[pos], l});
        }
        mapped = transformFrames(m_source, m_steps, m_frames) ? m_out.internStack(regroup()) : kNoIndex;
        return mapped;
    }

    Profile &out() { return m_out; }

private:
    static constexpr uint32_t kUnmapped = kNoIndex - 1;

    void copyTables()
    {
        const Profile &s = m_source;
        m_out = s.withoutSamples();
        for (const Location &loc : s.locations())
            m_nextLocationId = std::max(m_nextLocationId, loc.id + 1);
    }

    // The kept frames as locations: one per original stack position, a new location when some of its lines went.
    std::vector<uint32_t> regroup()
    {
        std::vector<uint32_t> locations;
        for (size_t i = 0; i < m_frames.size();) {
            size_t j = i;
            std::vector<uint32_t> lines;
            while (j < m_frames.size() && m_frames[j].position == m_frames[i].position) {
                if (m_frames[j].line != kNoLine)
                    lines.push_back(m_frames[j].line);
                ++j;
            }
            locations.push_back(locationWithLines(m_frames[i].location, lines));
            i = j;
        }
        return locations;
    }

    uint32_t locationWithLines(uint32_t source, const std::vector<uint32_t> &lines)
    {
        const Location &loc = m_source.locations()[source];
        if (lines.size() == loc.lines.size())
            return source;
        auto [it, inserted] = m_partial.try_emplace({source, lines}, 0);
        if (inserted) {
            Location partial = loc;
            partial.id = m_nextLocationId++;
            partial.lines.clear();
            for (uint32_t l : lines)
                partial.lines.push_back(loc.lines[l]);
            it->second = static_cast<uint32_t>(m_out.locations().size());
            m_out.locations().push_back(std::move(partial));
        }
        return it->second;
    }

    const Profile &m_source;
    std::vector<StepMatcher> m_steps;
    Profile m_out;
    std::vector<uint32_t> m_stackMap;
    std::vector<FrameRef> m_frames;
    std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint32_t> m_partial;
    uint64_t m_nextLocationId = 1;
};

std::string chainText(std::span<const Transform> chain)
{
    std::string text;
    for (const Transform &t : chain)
        text += (text.empty() ? "" : ", then ") + t.describe();
    return text;
}

} // namespace

std::string Transform::describe() const
{
    switch (kind) {
    case Kind::Focus:
        return "focus '" + pattern + "'";
    case Kind::Ignore:
        return "ignore '" + pattern + "'";
    case Kind::Hide:
        return "hide '" + pattern + "'";
    case Kind::CollapseRecursion:
        return "collapse recursion of '" + pattern + "'";
    case Kind::MergeIntoCaller:
        return "merge '" + pattern + "' into caller";
    }
    return {};
}

Result<Profile> applyTransforms(const Profile &profile, std::span<const Transform> chain,
                                const std::atomic<bool> *cancel, std::vector<uint32_t> *sourceSamples)
{
    if (sourceSamples)
        sourceSamples->clear();
    std::vector<StepMatcher> steps;
    for (const Transform &t : chain) {
        auto step = compile(profile, t);
        if (!step)
            return step.error();
        steps.push_back(std::move(step).value());
    }
    ChainRunner runner(profile, std::move(steps));
    runner.out().reserveSamples(profile.sampleCount());
    runner.out().reserveStacks(profile.stacks().size(), profile.stacks().frameCount());
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        if ((i & 0xFFFF) == 0 && cancel && cancel->load(std::memory_order_relaxed))
            return makeError(Error::Code::Cancelled, "cancelled");
        const uint32_t stack = runner.mapStack(profile.sampleStackId(i));
        if (stack == kNoIndex)
            continue;
        runner.out().addSampleWithStack(stack, profile.sampleValues(i), profile.sampleLabels(i));
        if (sourceSamples)
            sourceSamples->push_back(static_cast<uint32_t>(i));
    }
    if (profile.sampleCount() > 0 && runner.out().sampleCount() == 0)
        return makeError(Error::Code::Invalid, "no sample is left after " + chainText(chain) + " (of " +
                                                   std::to_string(profile.sampleCount()) + " samples)");
    return std::move(runner.out());
}

} // namespace emberline::engine
