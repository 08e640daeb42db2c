#include "engine/compare/diff.h"

#include "engine/model/frame_table.h"
#include "engine/analysis/function_table.h"
#include "engine/model/sample_filter.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

namespace emberline::engine {
namespace {

std::string typeList(const Profile &p)
{
    std::string out;
    for (const ValueType &vt : p.sampleTypes())
        out += (out.empty() ? "" : ", ") + p.str(vt.type) + "/" + p.str(vt.unit);
    return out.empty() ? std::string("none") : out;
}

// The profile's values per stack for one sample type, each sample's value multiplied by `scale` and truncated
// toward zero (pprof's Profile.ScaleN).
std::vector<int64_t> scaledValuesPerStack(const Profile &p, int type, double scale)
{
    if (scale == 1.0)
        return valuesPerStack(p, type, {});
    std::vector<int64_t> perStack(p.stacks().size(), 0);
    const auto t = static_cast<size_t>(type);
    for (size_t i = 0; i < p.sampleCount(); ++i)
        perStack[p.sampleStackId(i)] += static_cast<int64_t>(static_cast<double>(p.sampleValues(i)[t]) * scale);
    return perStack;
}

// Adds one profile's function table into the deltas, by function name.
void addSide(const Profile &p, const std::vector<int64_t> &perStack, bool isBase,
             std::unordered_map<std::string, size_t> &index, std::vector<FunctionDelta> &out)
{
    const FrameTable frames(p);
    const std::optional<FunctionTable> table = FunctionTable::build(p, frames, perStack);
    if (!table)
        return;
    for (const FunctionTable::Row &row : table->rows()) {
        const Frame &frame = frames.frame(row.frame);
        auto [it, inserted] = index.try_emplace(frame.name, out.size());
        if (inserted)
            out.push_back(FunctionDelta{frame.name, frame.file});
        FunctionDelta &d = out[it->second];
        if (d.file.empty())
            d.file = frame.file;
        (isBase ? d.baseSelf : d.newSelf) += row.self;
        (isBase ? d.baseTotal : d.newTotal) += row.total;
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

Result<FunctionDiff> diffFunctions(const Profile &next, const Profile &base, const DiffOptions &options)
{
    auto types = sharedSampleType(next, base, options.sampleType);
    if (!types)
        return types.error();
    FunctionDiff diff;
    diff.newTypeIndex = types->first;
    diff.baseTypeIndex = types->second;
    const ValueType &vt = next.sampleTypes()[static_cast<size_t>(diff.newTypeIndex)];
    diff.sampleType = next.str(vt.type);
    diff.unit = next.str(vt.unit);
    diff.newTotal = next.totals()[static_cast<size_t>(diff.newTypeIndex)];
    diff.baseRawTotal = base.totals()[static_cast<size_t>(diff.baseTypeIndex)];
    if (options.normalize) {
        if (diff.baseRawTotal == 0)
            return makeError(Error::Code::Invalid, "the base profile's " + diff.sampleType +
                                                       " total is 0: it cannot be normalized to the new profile");
        diff.baseScale = static_cast<double>(diff.newTotal) / static_cast<double>(diff.baseRawTotal);
    }
    const std::vector<int64_t> basePerStack = scaledValuesPerStack(base, diff.baseTypeIndex, diff.baseScale);
    for (int64_t v : basePerStack)
        diff.baseTotal += v;

    std::unordered_map<std::string, size_t> index;
    addSide(next, valuesPerStack(next, diff.newTypeIndex, {}), false, index, diff.functions);
    addSide(base, basePerStack, true, index, diff.functions);
    std::erase_if(diff.functions, [](const FunctionDelta &d) { return d.selfChange() == 0 && d.totalChange() == 0; });
    std::sort(diff.functions.begin(), diff.functions.end(), [](const FunctionDelta &a, const FunctionDelta &b) {
        const int64_t as = std::llabs(a.selfChange()), bs = std::llabs(b.selfChange());
        if (as != bs)
            return as > bs;
        const int64_t at = std::llabs(a.totalChange()), bt = std::llabs(b.totalChange());
        if (at != bt)
            return at > bt;
        return a.name < b.name;
    });
    return diff;
}

} // namespace emberline::engine
