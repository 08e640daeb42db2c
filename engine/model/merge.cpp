#include "engine/model/merge.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace emberline::engine {
namespace {

// Copies one source profile's tables into the destination, de-duplicating by content.
class Merger {
public:
    explicit Merger(Profile &dst) : m_dst(dst) {}

    void add(const Profile &src)
    {
        std::vector<StringId> strings(src.strings().size());
        for (size_t i = 0; i < strings.size(); ++i)
            strings[i] = m_dst.intern(src.strings()[i]);

        std::vector<uint32_t> mappings(src.mappings().size());
        for (size_t i = 0; i < mappings.size(); ++i)
            mappings[i] = mapping(src.mappings()[i], strings);

        std::vector<uint32_t> functions(src.functions().size());
        for (size_t i = 0; i < functions.size(); ++i)
            functions[i] = function(src.functions()[i], strings);

        std::vector<uint32_t> locations(src.locations().size());
        for (size_t i = 0; i < locations.size(); ++i)
            locations[i] = location(src.locations()[i], mappings, functions);

        std::vector<uint32_t> stack;
        std::vector<Label> labels;
        for (size_t i = 0; i < src.sampleCount(); ++i) {
            const SampleView s = src.sample(i);
            stack.clear();
            for (uint32_t l : s.locations)
                stack.push_back(locations[l]);
            labels.assign(s.labels.begin(), s.labels.end());
            for (Label &l : labels) {
                l.key = strings[l.key];
                l.str = strings[l.str];
                l.numUnit = strings[l.numUnit];
            }
            m_dst.addSample(stack, s.values, labels);
        }
        for (StringId c : src.comments())
            m_dst.comments().push_back(strings[c]);
    }

private:
    uint32_t mapping(const Mapping &m, const std::vector<StringId> &strings)
    {
        auto key = std::make_tuple(m.start, m.limit, m.offset, strings[m.filename], strings[m.buildId]);
        auto [it, inserted] = m_mappings.try_emplace(key, static_cast<uint32_t>(m_dst.mappings().size()));
        if (inserted) {
            Mapping copy = m;
            copy.id = m_dst.mappings().size() + 1;
            copy.filename = strings[m.filename];
            copy.buildId = strings[m.buildId];
            m_dst.mappings().push_back(copy);
        }
        return it->second;
    }

    uint32_t function(const Function &f, const std::vector<StringId> &strings)
    {
        auto key = std::make_tuple(strings[f.name], strings[f.systemName], strings[f.filename], f.startLine);
        auto [it, inserted] = m_functions.try_emplace(key, static_cast<uint32_t>(m_dst.functions().size()));
        if (inserted) {
            m_dst.functions().push_back(Function{m_dst.functions().size() + 1, strings[f.name],
                                                 strings[f.systemName], strings[f.filename], f.startLine});
        }
        return it->second;
    }

    uint32_t location(const Location &loc, const std::vector<uint32_t> &mappings,
                      const std::vector<uint32_t> &functions)
    {
        Location copy;
        copy.mappingIndex = loc.mappingIndex == kNoIndex ? kNoIndex : mappings[loc.mappingIndex];
        copy.address = loc.address;
        copy.isFolded = loc.isFolded;
        copy.lines = loc.lines;
        std::vector<int64_t> key{copy.mappingIndex, static_cast<int64_t>(copy.address), copy.isFolded};
        for (Line &l : copy.lines) {
            l.functionIndex = l.functionIndex == kNoIndex ? kNoIndex : functions[l.functionIndex];
            key.insert(key.end(), {l.functionIndex, l.line, l.column});
        }
        auto [it, inserted] = m_locations.try_emplace(std::move(key), static_cast<uint32_t>(m_dst.locations().size()));
        if (inserted) {
            copy.id = m_dst.locations().size() + 1;
            m_dst.locations().push_back(std::move(copy));
        }
        return it->second;
    }

    Profile &m_dst;
    std::map<std::tuple<uint64_t, uint64_t, uint64_t, StringId, StringId>, uint32_t> m_mappings;
    std::map<std::tuple<StringId, StringId, StringId, int64_t>, uint32_t> m_functions;
    std::map<std::vector<int64_t>, uint32_t> m_locations;
};

bool sameTypes(const Profile &a, const Profile &b)
{
    if (a.sampleTypes().size() != b.sampleTypes().size())
        return false;
    for (size_t i = 0; i < a.sampleTypes().size(); ++i) {
        if (a.str(a.sampleTypes()[i].type) != b.str(b.sampleTypes()[i].type) ||
            a.str(a.sampleTypes()[i].unit) != b.str(b.sampleTypes()[i].unit))
            return false;
    }
    return true;
}

} // namespace

Result<Profile> mergeProfiles(std::span<const Profile *const> profiles)
{
    if (profiles.empty())
        return makeError(Error::Code::Invalid, "no profiles to merge");
    const Profile &first = *profiles[0];
    for (const Profile *p : profiles) {
        if (!sameTypes(first, *p))
            return makeError(Error::Code::Invalid, "profiles have different sample types and cannot be merged");
    }

    Profile out;
    for (const ValueType &vt : first.sampleTypes())
        out.sampleTypes().push_back({out.intern(first.str(vt.type)), out.intern(first.str(vt.unit))});
    out.periodType = {out.intern(first.str(first.periodType.type)), out.intern(first.str(first.periodType.unit))};
    out.period = first.period;
    out.defaultSampleType = out.intern(first.str(first.defaultSampleType));

    int64_t start = INT64_MAX;
    int64_t end = INT64_MIN;
    Merger merger(out);
    for (const Profile *p : profiles) {
        merger.add(*p);
        if (p->timeNanos != 0) {
            start = std::min(start, p->timeNanos);
            end = std::max(end, p->timeNanos + p->durationNanos);
        }
    }
    if (start != INT64_MAX) {
        out.timeNanos = start;
        out.durationNanos = end - start;
    }
    return out;
}

} // namespace emberline::engine
