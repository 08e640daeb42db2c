#include "engine/compare/comparison.h"

#include "engine/common/logging.h"
#include "engine/model/units.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace emberline::engine {
namespace {

// "type/unit, ..." of every sample type, or "none".
std::string typeList(const Profile &p)
{
    std::string out;
    for (const ValueType &vt : p.sampleTypes())
        out += (out.empty() ? "" : ", ") + p.str(vt.type) + "/" + p.str(vt.unit);
    return out.empty() ? std::string("none") : out;
}

std::string threadKey(const ThreadInfo &info)
{
    return info.name.empty() ? "#" + std::to_string(info.tid) : info.name;
}

// The base's threads that carry the names of the new profile's chosen threads (thread ids differ between runs).
std::vector<uint32_t> matchingThreads(const LoadedProfile &next, const LoadedProfile &base,
                                      const std::vector<uint32_t> &chosen)
{
    std::unordered_set<std::string> keys;
    for (uint32_t t : chosen) {
        if (t < next.threads->threads().size())
            keys.insert(threadKey(next.threads->threads()[t]));
    }
    std::vector<uint32_t> out;
    for (uint32_t t = 0; t < base.threads->threads().size(); ++t) {
        if (keys.count(threadKey(base.threads->threads()[t])) != 0)
            out.push_back(t);
    }
    return out;
}

// The samples one side keeps: of `threads` when filtered, in `range` when given; empty keeps every sample.
std::vector<uint8_t> maskFor(const LoadedProfile &loaded, const std::vector<uint32_t> &threads, bool filtered,
                             const std::optional<TimeRange> &range)
{
    if (!filtered && !range)
        return {};
    if (filtered && threads.empty()) // no thread matched: nothing is kept (an empty filter would keep everything)
        return std::vector<uint8_t>(loaded.profile->sampleCount(), 0);
    SampleFilter filter;
    if (filtered)
        filter.threads = threads;
    if (range) { // the filter's range includes its end
        filter.startNs = range->startNs;
        filter.endNs = range->endNs - 1;
    }
    return selectSamples(*loaded.profile, loaded.threads.get(), filter);
}

// Values per stack, each sample's value multiplied by `scale` and truncated toward zero (pprof's ScaleN).
std::vector<int64_t> sideValues(const LoadedProfile &loaded, int type, const std::vector<uint8_t> &mask, double scale,
                                const std::atomic<bool> *cancel)
{
    const Profile &p = *loaded.profile;
    const bool overlaid = loaded.sampleOverlay && loaded.sampleOverlay->covers(type);
    if (loaded.sampleWeights || overlaid || scale == 1.0) {
        std::vector<int64_t> perStack = shownValuesPerStack(loaded, type, mask, cancel);
        if (overlaid && scale != 1.0) {
            for (int64_t &v : perStack)
                v = static_cast<int64_t>(static_cast<double>(v) * scale);
        }
        return perStack;
    }
    std::vector<int64_t> perStack(p.stacks().size(), 0);
    const auto t = static_cast<size_t>(type);
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        if ((i & 0xffff) == 0 && cancel && cancel->load(std::memory_order_relaxed))
            return perStack;
        if (!mask.empty() && !mask[i])
            continue;
        perStack[p.sampleStackId(i)] += static_cast<int64_t>(static_cast<double>(p.sampleValues(i)[t]) * scale);
    }
    return perStack;
}

// One side's values per stack (scaled) and, when asked for, its call tree; a side without a tree when cancelled.
ComparisonSide buildSide(const LoadedProfile &loaded, int type, const std::vector<uint8_t> &mask, double scale,
                         bool withTree, const std::atomic<bool> *cancel)
{
    ComparisonSide side;
    side.perStack = std::make_shared<const std::vector<int64_t>>(sideValues(loaded, type, mask, scale, cancel));
    for (int64_t v : *side.perStack)
        side.total += v;
    if (!withTree)
        return side;
    if (auto tree = CallTree::build(*loaded.profile, *loaded.frames, *side.perStack, cancel))
        side.tree = std::make_shared<const CallTree>(std::move(*tree));
    return side;
}

int64_t sumOf(const std::vector<int64_t> &values)
{
    int64_t total = 0;
    for (int64_t v : values)
        total += v;
    return total;
}

// One side's function table, by its own frame ids: read off its call tree when it has one, else summed from its
// values per stack (nullopt when cancelled).
std::optional<FunctionTable> sideFunctionTable(const LoadedProfile &loaded, const ComparisonSide &side,
                                               const std::atomic<bool> *cancel)
{
    if (side.tree)
        return FunctionTable::fromCallTree(*side.tree, *loaded.frames);
    return FunctionTable::build(*loaded.profile, *loaded.frames, *side.perStack, cancel);
}

// Both sides' function tables joined by frame in the union table (`next`'s frame ids are the union's), in the
// order of Comparison::functions; nullopt when cancelled.
std::optional<std::vector<DiffFunction>> functionRows(const FrameTable &frames,
                                                      const std::vector<uint32_t> &baseToUnion,
                                                      const LoadedProfile &next, const ComparisonSide &nextSide,
                                                      const LoadedProfile &base, const ComparisonSide &baseSide,
                                                      const std::atomic<bool> *cancel)
{
    const std::optional<FunctionTable> newTable = sideFunctionTable(next, nextSide, cancel);
    const std::optional<FunctionTable> baseTable = sideFunctionTable(base, baseSide, cancel);
    if (!newTable || !baseTable)
        return std::nullopt;
    std::vector<DiffFunction> rows;
    std::vector<uint32_t> rowOf(frames.size(), kNoIndex);
    const auto rowFor = [&](uint32_t frame) -> DiffFunction & {
        if (rowOf[frame] == kNoIndex) {
            rowOf[frame] = static_cast<uint32_t>(rows.size());
            rows.push_back(DiffFunction{frame});
        }
        return rows[rowOf[frame]];
    };
    for (const FunctionTable::Row &r : newTable->rows()) {
        DiffFunction &row = rowFor(r.frame);
        row.newSelf = r.self;
        row.newTotal = r.total;
    }
    for (const FunctionTable::Row &r : baseTable->rows()) {
        DiffFunction &row = rowFor(baseToUnion[r.frame]);
        row.baseSelf = r.self;
        row.baseTotal = r.total;
    }
    std::sort(rows.begin(), rows.end(), [&](const DiffFunction &a, const DiffFunction &b) {
        const int64_t as = std::llabs(a.newSelf - a.baseSelf), bs = std::llabs(b.newSelf - b.baseSelf);
        if (as != bs)
            return as > bs;
        const int64_t at = std::llabs(a.newTotal - a.baseTotal), bt = std::llabs(b.newTotal - b.baseTotal);
        if (at != bt)
            return at > bt;
        return frames.frame(a.frame).name < frames.frame(b.frame).name;
    });
    return rows;
}

void addNotices(Comparison &c)
{
    const auto value = [&](int64_t v) { return formatValue(v, c.unit); };
    if (c.sameFile) {
        c.notices.push_back("Base and new are the same file: every frame is unchanged, so the whole graph is "
                            "neutral.");
    } else if (c.tree && c.tree->isUnchanged() && c.newTotal != 0) {
        c.notices.push_back("The two profiles hold exactly the same " + c.sampleType +
                            " values: every frame is unchanged.");
    }
    if (c.baseRawTotal == 0) {
        c.notices.push_back("The base has no " + c.sampleType + " samples" +
                            (c.request.normalize ? " and cannot be normalized" : std::string()) +
                            ": every frame shows as new.");
    }
    if (c.newTotal == 0) {
        c.notices.push_back("The new profile has no " + c.sampleType +
                            " samples: every frame shows as removed. Choose widths from the base to see them.");
    }
    if (c.newTotal > 0 && !c.request.normalize &&
        static_cast<double>(c.baseRawTotal) >= kBaseFarLargerRatio * static_cast<double>(c.newTotal)) {
        const double ratio = static_cast<double>(c.baseRawTotal) / static_cast<double>(c.newTotal);
        c.notices.push_back("The base's total (" + value(c.baseRawTotal) + ") is " + formatRatio(ratio) +
                            " the new one's (" + value(c.newTotal) +
                            "): nearly every frame shows as shrunk because the base covers more work. Normalize "
                            "to compare shares instead.");
    }
    if (c.request.normalize && c.baseScale != 1.0) {
        c.notices.push_back("Normalized: base values are scaled by " + formatRatio(c.baseScale) +
                            " so that both totals are " + value(c.newTotal) + ".");
    }
}

// The frames of both sides in one table (the new profile's ids kept) and the base's ids in it; with their display
// names when a view will draw them.
void joinFrames(Comparison &c, const LoadedProfile &next, const LoadedProfile &base, bool withNames)
{
    if (next.frames == base.frames) {
        // Two weighings of one profile (a live session's flushes or ranges): its frames are already shared.
        c.frames = next.frames;
        c.baseToUnion.resize(next.frames->size());
        std::iota(c.baseToUnion.begin(), c.baseToUnion.end(), 0U);
        if (withNames)
            c.frameNames = next.frameNames ? next.frameNames : frameDisplayNames(*c.frames);
    } else {
        c.frames = std::make_shared<const FrameTable>(FrameTable::unionOf(*next.frames, *base.frames, c.baseToUnion));
        if (withNames)
            c.frameNames = frameDisplayNames(*c.frames);
    }
}

} // namespace

Result<std::pair<int, int>> sharedSampleType(const Profile &next, const Profile &base, const std::string &name)
{
    const auto matchIn = [](const Profile &p, const std::string &type, const std::string &unit) {
        for (size_t i = 0; i < p.sampleTypes().size(); ++i)
            if (p.str(p.sampleTypes()[i].type) == type && (unit.empty() || p.str(p.sampleTypes()[i].unit) == unit))
                return static_cast<int>(i);
        return -1;
    };
    const auto noShared = [&](const std::string &why) {
        return makeError(Error::Code::Invalid, why + " (new: " + typeList(next) + "; base: " + typeList(base) + ")");
    };
    if (!name.empty()) {
        const int n = matchIn(next, name, {});
        if (n < 0)
            return noShared("the new profile has no sample type '" + name + "'");
        const int b = matchIn(base, name, next.str(next.sampleTypes()[static_cast<size_t>(n)].unit));
        if (b < 0)
            return noShared("the base profile has no sample type '" + name + "' in the same unit");
        return std::pair(n, b);
    }
    // The new profile's default when the base has it, else the first type both have.
    std::vector<int> order;
    if (const int d = next.defaultSampleTypeIndex(); d >= 0)
        order.push_back(d);
    for (int i = 0; i < static_cast<int>(next.sampleTypes().size()); ++i)
        order.push_back(i);
    for (int n : order) {
        const ValueType &vt = next.sampleTypes()[static_cast<size_t>(n)];
        if (const int b = matchIn(base, next.str(vt.type), next.str(vt.unit)); b >= 0)
            return std::pair(n, b);
    }
    return noShared("the two profiles share no sample type");
}

std::vector<int> sharedSampleTypes(const Profile &next, const Profile &base)
{
    std::vector<int> out;
    for (size_t i = 0; i < next.sampleTypes().size(); ++i) {
        const ValueType &vt = next.sampleTypes()[i];
        for (const ValueType &other : base.sampleTypes()) {
            if (next.str(vt.type) == base.str(other.type) && next.str(vt.unit) == base.str(other.unit)) {
                out.push_back(static_cast<int>(i));
                break;
            }
        }
    }
    return out;
}

Result<std::shared_ptr<const Comparison>> compareProfiles(const ComparisonRequest &request,
                                                          const std::atomic<bool> *cancel)
{
    QElapsedTimer timer;
    timer.start();
    const LoadedProfile &next = *request.next;
    const LoadedProfile &base = *request.base;
    auto types = sharedSampleType(*next.profile, *base.profile, request.sampleType);
    if (!types)
        return types.error();
    auto c = std::make_shared<Comparison>();
    c->request = request;
    c->newTypeIndex = types->first;
    c->baseTypeIndex = types->second;
    const ValueType &vt = next.profile->sampleTypes()[static_cast<size_t>(c->newTypeIndex)];
    c->sampleType = next.profile->str(vt.type);
    c->unit = next.profile->str(vt.unit);
    const QString newPath = QFileInfo(next.path).canonicalFilePath();
    c->sameFile = !newPath.isEmpty() && newPath == QFileInfo(base.path).canonicalFilePath() &&
                  request.newRange == request.baseRange;

    const bool filtered = !request.newThreads.empty();
    const std::vector<uint8_t> newMask = maskFor(next, request.newThreads, filtered, request.newRange);
    const std::vector<uint8_t> baseMask = maskFor(base, matchingThreads(next, base, request.newThreads),
                                                  filtered && !base.threads->empty(), request.baseRange);
    if (request.normalize) {
        // The scale needs both totals first; the scaled pass over the base follows.
        auto newValues = std::async(std::launch::async, [&] {
            return request.nextSide ? request.nextSide->total
                                    : sumOf(sideValues(next, c->newTypeIndex, newMask, 1.0, cancel));
        });
        c->baseRawTotal = request.baseSide ? request.baseSide->total
                                           : sumOf(sideValues(base, c->baseTypeIndex, baseMask, 1.0, cancel));
        const int64_t newTotal = newValues.get();
        if (c->baseRawTotal != 0)
            c->baseScale = static_cast<double>(newTotal) / static_cast<double>(c->baseRawTotal);
    }
    // Sides the caller derived already are taken as they are; the others are derived here, side by side.
    const bool trees = !request.functionsOnly;
    std::future<ComparisonSide> newSide;
    if (!request.nextSide)
        newSide = std::async(std::launch::async,
                             [&] { return buildSide(next, c->newTypeIndex, newMask, 1.0, trees, cancel); });
    const bool baseGiven = request.baseSide && c->baseScale == 1.0;
    ComparisonSide baseSide =
        baseGiven ? *request.baseSide : buildSide(base, c->baseTypeIndex, baseMask, c->baseScale, trees, cancel);
    ComparisonSide nextSide = request.nextSide ? *request.nextSide : newSide.get();
    if ((trees && (!nextSide.tree || !baseSide.tree)) || (cancel && cancel->load()))
        return makeError(Error::Code::Cancelled, "cancelled");
    const qint64 sidesMs = timer.elapsed();
    c->newTotal = nextSide.total;
    c->baseTotal = baseSide.total;
    if (!request.normalize)
        c->baseRawTotal = baseSide.total;
    c->newPerStack = nextSide.perStack;
    c->basePerStack = baseSide.perStack;
    joinFrames(*c, next, base, trees);
    const auto rows = [&, frames = c->frames] {
        return functionRows(*frames, c->baseToUnion, next, nextSide, base, baseSide, cancel);
    };
    std::optional<DiffTree> tree;
    std::optional<std::vector<DiffFunction>> functions;
    if (trees) {
        // The function table needs the frames and both sides, not the differential tree: built beside it.
        auto beside = std::async(std::launch::async, rows);
        tree = DiffTree::build(*nextSide.tree, *baseSide.tree, c->frames, c->baseToUnion, cancel, request.widths);
        functions = beside.get();
    } else {
        functions = rows();
    }
    const qint64 treeMs = timer.elapsed();
    if (!functions || (trees && !tree))
        return makeError(Error::Code::Cancelled, "cancelled");
    c->functions = std::move(*functions);
    if (tree)
        c->tree = std::make_shared<const DiffTree>(std::move(*tree));
    addNotices(*c);
    qCDebug(lcModel) << "comparison of" << next.path << "with" << base.path << "in" << timer.elapsed()
                     << "ms (both sides" << sidesMs << "ms, frames and differential tree" << treeMs - sidesMs
                     << "ms, then the functions beside it" << timer.elapsed() - treeMs << "ms more),"
                     << (c->tree ? c->tree->size() : 0) << "nodes";
    return std::shared_ptr<const Comparison>(std::move(c));
}

DiffCallerCallee diffCallerCallee(const Comparison &c, uint32_t frame)
{
    DiffCallerCallee out;
    out.frame = frame;
    const LoadedProfile &next = *c.request.next;
    const LoadedProfile &base = *c.request.base;
    std::unordered_map<uint32_t, size_t> callerRow;
    std::unordered_map<uint32_t, size_t> calleeRow;
    const auto edge = [](std::vector<DiffCallerCallee::Edge> &edges, std::unordered_map<uint32_t, size_t> &rows,
                         uint32_t f) -> DiffCallerCallee::Edge & {
        auto [it, inserted] = rows.try_emplace(f, edges.size());
        if (inserted)
            edges.push_back({f, 0, 0});
        return edges[it->second];
    };
    if (frame < next.frames->size()) {
        const CallerCallee cc = computeCallerCallee(*next.profile, *next.frames, *c.newPerStack, frame);
        out.newSelf = cc.self;
        out.newTotal = cc.total;
        for (const auto &e : cc.callers)
            edge(out.callers, callerRow, e.frame).next = e.value;
        for (const auto &e : cc.callees)
            edge(out.callees, calleeRow, e.frame).next = e.value;
    }
    const auto it = std::find(c.baseToUnion.begin(), c.baseToUnion.end(), frame);
    if (it != c.baseToUnion.end()) {
        const auto baseFrame = static_cast<uint32_t>(it - c.baseToUnion.begin());
        const CallerCallee cc = computeCallerCallee(*base.profile, *base.frames, *c.basePerStack, baseFrame);
        out.baseSelf = cc.self;
        out.baseTotal = cc.total;
        for (const auto &e : cc.callers)
            edge(out.callers, callerRow, c.baseToUnion[e.frame]).base = e.value;
        for (const auto &e : cc.callees)
            edge(out.callees, calleeRow, c.baseToUnion[e.frame]).base = e.value;
    }
    const auto byChange = [&](const DiffCallerCallee::Edge &a, const DiffCallerCallee::Edge &b) {
        const int64_t ca = std::llabs(a.next - a.base), cb = std::llabs(b.next - b.base);
        return ca != cb ? ca > cb : c.frames->frame(a.frame).name < c.frames->frame(b.frame).name;
    };
    std::sort(out.callers.begin(), out.callers.end(), byChange);
    std::sort(out.callees.begin(), out.callees.end(), byChange);
    return out;
}

} // namespace emberline::engine
