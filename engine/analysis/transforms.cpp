#include "engine/analysis/transforms.h"

#include "engine/common/flat_hash.h"
#include "engine/model/python_frame.h"

#include <QRegularExpression>

#include <algorithm>
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

// Whether a step takes matching frames out of the stacks (their cost to their caller) rather than keeping or dropping
// samples.
bool removesFrames(Transform::Kind kind)
{
    return kind == Transform::Kind::Hide || kind == Transform::Kind::MergeIntoCaller ||
           kind == Transform::Kind::HideInterpreter;
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
    if (t.kind == Transform::Kind::HideInterpreter) {
        for (size_t f = 0; f < p.functions().size(); ++f)
            m.function[f] = isInterpreterFunction(p, p.functions()[f]);
        return m;
    }
    const bool byRegex =
        t.kind == Transform::Kind::Focus || t.kind == Transform::Kind::Ignore || t.kind == Transform::Kind::Hide;
    if (!byRegex) {
        for (size_t f = 0; f < p.functions().size(); ++f)
            m.function[f] = functionName(p, p.functions()[f]) == t.pattern;
        return m;
    }
    const QRegularExpression re(QString::fromStdString(t.pattern));
    if (!re.isValid())
        return makeError(Error::Code::Invalid,
                         t.describe() + ": not a valid regular expression: " + re.errorString().toStdString());
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
        case Transform::Kind::HideInterpreter:
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
    ChainRunner(const Profile &source, std::vector<StepMatcher> steps) : m_source(source), m_steps(std::move(steps))
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
        const auto stack = m_source.stacks().stack(stackId);
        if (!m_locationMatches.empty()) { // every step answers each location as a whole
            m_locations.assign(stack.begin(), stack.end());
            for (size_t i = 0; i < m_steps.size(); ++i) {
                const std::vector<uint8_t> &matches = m_locationMatches[i];
                const auto matching = [&](uint32_t l) { return matches[l] != 0; };
                switch (m_steps[i].kind) {
                case Transform::Kind::Focus:
                case Transform::Kind::Ignore:
                    if (std::any_of(m_locations.begin(), m_locations.end(), matching) !=
                        (m_steps[i].kind == Transform::Kind::Focus)) {
                        mapped = kNoIndex;
                        return mapped;
                    }
                    break;
                default: // Hide, MergeIntoCaller
                    std::erase_if(m_locations, matching);
                    if (m_locations.empty()) {
                        mapped = kNoIndex;
                        return mapped;
                    }
                    break;
                }
            }
            mapped = m_out.internStack(m_locations);
            return mapped;
        }
        m_frames.clear();
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
        // Where every step matches all of a location's lines or none (no location loses only some of its inlined
        // frames, and no recursion is collapsed), stacks are transformed location by location: each location's
        // match is known once.
        if (std::any_of(m_steps.begin(), m_steps.end(),
                        [](const StepMatcher &m) { return m.kind == Transform::Kind::CollapseRecursion; }))
            return;
        std::vector<std::vector<uint8_t>> perStep;
        for (const StepMatcher &m : m_steps) {
            std::vector<uint8_t> matches(s.locations().size(), 0);
            for (uint32_t l = 0; l < s.locations().size(); ++l) {
                const Location &loc = s.locations()[l];
                if (loc.lines.empty()) {
                    matches[l] = m.matches(s, {0, l, kNoLine});
                    continue;
                }
                size_t matched = 0;
                for (uint32_t line = 0; line < loc.lines.size(); ++line)
                    matched += m.matches(s, {0, l, line}) ? 1 : 0;
                const bool removesLines = removesFrames(m.kind);
                if (removesLines && matched != 0 && matched != loc.lines.size())
                    return; // a location split: frame by frame
                matches[l] = matched != 0;
            }
            perStep.push_back(std::move(matches));
        }
        m_locationMatches = std::move(perStep);
    }

    // The kept frames as locations: one per original stack position, a new location when some of its lines went.
    const std::vector<uint32_t> &regroup()
    {
        m_locations.clear();
        for (size_t i = 0; i < m_frames.size();) {
            size_t j = i;
            m_lines.clear();
            while (j < m_frames.size() && m_frames[j].position == m_frames[i].position) {
                if (m_frames[j].line != kNoLine)
                    m_lines.push_back(m_frames[j].line);
                ++j;
            }
            m_locations.push_back(locationWithLines(m_frames[i].location, m_lines));
            i = j;
        }
        return m_locations;
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
    std::vector<uint32_t> m_locations; // regroup's result, reused from stack to stack
    std::vector<uint32_t> m_lines;
    std::vector<std::vector<uint8_t>> m_locationMatches; // per step, per location, when no step splits a location
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

// Per frame of `frames`, whether a step matches it (1) or not (0); nullopt when the instances of some frame (the
// lines of locations it stands for) disagree, so that a tree of frames cannot tell what the step does.
std::optional<std::vector<uint8_t>> frameMatches(const Profile &p, const FrameTable &frames, const StepMatcher &m)
{
    constexpr uint8_t kUnseen = 2;
    std::vector<uint8_t> status(frames.size(), kUnseen);
    for (uint32_t l = 0; l < p.locations().size(); ++l) {
        const Location &loc = p.locations()[l];
        const auto locFrames = frames.locationFrames(l);
        if (locFrames.size() != std::max<size_t>(loc.lines.size(), 1))
            return std::nullopt;
        for (uint32_t i = 0; i < locFrames.size(); ++i) {
            const auto matched = static_cast<uint8_t>(m.matches(p, {0, l, loc.lines.empty() ? kNoLine : i}));
            uint8_t &s = status[locFrames[i]];
            if (s == kUnseen)
                s = matched;
            else if (s != matched)
                return std::nullopt;
        }
    }
    for (uint8_t &s : status)
        s = s == 1 ? 1 : 0;
    return status;
}

// The nodes of a tree being transformed: parents before children, node 0 the root; totals are set at the end.
using TreeNodes = std::vector<CallTree::Node>;

// The nodes a step reads: the untransformed tree's for the first step, the previous step's after that.
struct TreeInput {
    const CallTree *tree = nullptr;
    const TreeNodes *nodes = nullptr;
    size_t size() const { return tree ? tree->size() : nodes->size(); }
    CallTree::Node operator[](size_t i) const { return tree ? tree->node(static_cast<uint32_t>(i)) : (*nodes)[i]; }
};

bool treeCancelled(size_t i, const std::atomic<bool> *cancel)
{
    return (i & 0xFFFF) == 0 && cancel && cancel->load(std::memory_order_relaxed);
}

// The nodes of `in` that keep a value given each node's new self value: a node without a self value in its subtree
// goes, as CallTree::build never makes one.
void keepValuedNodes(const TreeInput &in, const std::vector<int64_t> &self, TreeNodes &out)
{
    const size_t n = in.size();
    std::vector<uint8_t> valued(n, 0);
    for (size_t i = n; i-- > 0;) {
        if (self[i] != 0)
            valued[i] = 1;
        if (i > 0 && valued[i])
            valued[in[i].parent] = 1;
    }
    std::vector<uint32_t> newId(n, kNoIndex);
    out.clear();
    out.reserve(static_cast<size_t>(std::count(valued.begin(), valued.end(), uint8_t(1))) + 1);
    for (size_t i = 0; i < n; ++i) {
        if (i > 0 && !valued[i])
            continue;
        CallTree::Node node = in[i];
        if (i > 0)
            node.parent = newId[node.parent];
        node.self = self[i];
        node.total = 0;
        newId[i] = static_cast<uint32_t>(out.size());
        out.push_back(node);
    }
}

// Focus (keep = a matching frame on the path) or Ignore (keep = none): the self values of the nodes whose path
// fails go, and the nodes left without a value.
bool filterTreeNodes(const TreeInput &in, const std::vector<uint8_t> &matched, bool focus, TreeNodes &out,
                     const std::atomic<bool> *cancel)
{
    const size_t n = in.size();
    std::vector<uint8_t> onPath(n, 0);
    std::vector<int64_t> self(n, 0);
    for (size_t i = 0; i < n; ++i) {
        if (treeCancelled(i, cancel))
            return false;
        const CallTree::Node &node = in[i];
        if (i > 0)
            onPath[i] = onPath[node.parent] | matched[node.frame];
        if ((onPath[i] != 0) == focus)
            self[i] = node.self;
    }
    keepValuedNodes(in, self, out);
    return true;
}

// Hide or MergeIntoCaller: a matching node goes, its self value and children to its parent's image; children that
// meet a node of the same frame there merge with it. A self value that reaches the root goes (its sample lost
// every frame, and pprof drops such a sample). Merges can happen only under an image that a hidden node's
// children reach, or that a lookup made (and so may share): children of any other node are copied as they are,
// without a lookup.
bool hideTreeNodes(const TreeInput &in, const std::vector<uint8_t> &matched, TreeNodes &out,
                   const std::atomic<bool> *cancel)
{
    const size_t n = in.size();
    // receives: a kept node (or the root) into whose image a hidden node's children and self value go.
    std::vector<uint8_t> receives(n, 0);
    std::vector<uint8_t> clean(n, 1);   // no matching frame from the root down to the node
    std::vector<uint32_t> anchor(n, 0); // nearest kept node at or above
    for (size_t i = 1; i < n; ++i) {
        const CallTree::Node &node = in[i];
        const bool hidden = matched[node.frame] != 0;
        clean[i] = clean[node.parent] && !hidden;
        anchor[i] = hidden ? anchor[node.parent] : static_cast<uint32_t>(i);
        if (hidden)
            receives[anchor[i]] = 1;
    }
    size_t lookups = 0; // an estimate, for the map's size
    for (size_t i = 1; i < n; ++i)
        lookups += !clean[i] || receives[in[i].parent] ? 1 : 0;
    clean = {};
    anchor = {};

    std::vector<uint32_t> image(n, 0);
    std::vector<uint8_t> shared(n, 0); // per image made: other nodes may map to it or to its children
    shared[0] = receives[0];
    U64ToU32Map childOf(lookups);
    out.clear();
    out.reserve(n);
    out.push_back(CallTree::Node{});
    for (size_t i = 1; i < n; ++i) {
        if (treeCancelled(i, cancel))
            return false;
        const CallTree::Node &source = in[i];
        const uint32_t parent = image[source.parent];
        uint32_t to = parent;
        if (!matched[source.frame]) {
            bool inserted = true;
            const auto candidate = static_cast<uint32_t>(out.size());
            if (shared[parent])
                to = childOf.findOrInsert((static_cast<uint64_t>(parent) << 32) | source.frame, candidate, inserted);
            if (inserted) {
                const uint32_t depth = out[parent].depth + 1;
                shared[candidate] = shared[parent] | receives[i];
                out.push_back(CallTree::Node{source.frame, parent, depth, depth, 0, 0});
                to = candidate;
            }
        }
        image[i] = to;
        if (to != 0)
            out[to].self += source.self;
    }
    return true;
}

// The totals from the self values, children before parents.
void sumTreeTotals(TreeNodes &nodes)
{
    for (CallTree::Node &node : nodes)
        node.total = node.self;
    for (size_t i = nodes.size(); i-- > 1;)
        nodes[nodes[i].parent].total += nodes[i].total;
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
    case Kind::HideInterpreter:
        return "hide the Python interpreter's frames";
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
    runner.out().reserveStacks(profile.stacks().size());
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

namespace emberline::engine {

std::optional<CallTree> transformCallTree(const Profile &profile, const FrameTable &frames, const CallTree &tree,
                                          std::span<const Transform> chain, const std::atomic<bool> *cancel)
{
    if (cancel && cancel->load(std::memory_order_relaxed))
        return std::nullopt;
    std::vector<std::pair<Transform::Kind, std::vector<uint8_t>>> steps;
    for (const Transform &t : chain) {
        if (t.kind == Transform::Kind::CollapseRecursion)
            return std::nullopt;
        auto matcher = compile(profile, t);
        if (!matcher)
            return std::nullopt;
        auto matched = frameMatches(profile, frames, matcher.value());
        if (!matched)
            return std::nullopt;
        steps.emplace_back(t.kind, std::move(*matched));
    }
    for (uint32_t i = 1; i < tree.size(); ++i) {
        if (tree.node(i).parent >= i)
            return std::nullopt; // not parents first (a live session's updated tree)
    }
    if (tree.size() == 0)
        return std::nullopt;
    TreeNodes nodes;
    TreeNodes next;
    bool lastHid = false; // the last step was Hide or MergeIntoCaller
    for (size_t k = 0; k < steps.size(); ++k) {
        const auto &[kind, matched] = steps[k];
        const TreeInput in = k == 0 ? TreeInput{&tree, nullptr} : TreeInput{nullptr, &nodes};
        lastHid = removesFrames(kind);
        const bool done = lastHid ? hideTreeNodes(in, matched, next, cancel)
                                  : filterTreeNodes(in, matched, kind == Transform::Kind::Focus, next, cancel);
        if (!done)
            return std::nullopt;
        std::swap(nodes, next);
    }
    sumTreeTotals(nodes);
    // Hiding leaves a node without a value only where values cancel out: such nodes go, as build never makes them.
    const bool emptyNodes = lastHid && std::any_of(nodes.begin() + 1, nodes.end(),
                                                   [](const CallTree::Node &n) { return n.total == 0 && n.self == 0; });
    if (emptyNodes) {
        std::vector<int64_t> self(nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i)
            self[i] = nodes[i].self;
        keepValuedNodes(TreeInput{nullptr, &nodes}, self, next);
        std::swap(nodes, next);
        sumTreeTotals(nodes);
    }
    return CallTree::fromNodes(nodes, frames);
}

} // namespace emberline::engine
