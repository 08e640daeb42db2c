#include "engine/model/merge.h"

#include "engine/common/flat_hash.h"
#include "engine/model/sample_kinds.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace emberline::engine {
namespace {

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

// Copies each source profile's tables into the destination, de-duplicating by content.
class ProfileMerger::Impl {
public:
    explicit Impl(Options options) : m_options(std::move(options)) {}

    Status addTables(const Profile &src, Remap &remap)
    {
        if (auto st = addHeader(src); !st)
            return st;
        remap.strings.resize(src.strings().size());
        for (size_t i = 0; i < remap.strings.size(); ++i)
            remap.strings[i] = m_dst.intern(src.strings()[i]);
        const auto str = [&remap](StringId s) { return remap.strings[s]; };
        std::vector<uint32_t> mappings(src.mappings().size());
        for (size_t i = 0; i < mappings.size(); ++i)
            mappings[i] = mapping(src.mappings()[i], str);
        std::vector<uint32_t> functions(src.functions().size());
        for (size_t i = 0; i < functions.size(); ++i)
            functions[i] = function(src.functions()[i], str);
        remap.locations.resize(src.locations().size());
        for (size_t i = 0; i < remap.locations.size(); ++i) {
            remap.locations[i] = location(
                src.locations()[i], [&mappings](uint32_t m) { return mappings[m]; },
                [&functions](uint32_t f) { return functions[f]; });
        }
        addComments(src, str);
        return Ok{};
    }

    Status add(const Profile &src, std::vector<uint32_t> *destinationSamples)
    {
        Remap remap;
        if (auto st = addTables(src, remap); !st)
            return st;
        std::vector<uint32_t> stack;
        addSamples(
            src, [&remap](StringId id) { return remap.strings[id]; },
            [&](const SampleView &s) {
                stack.clear();
                for (uint32_t l : s.locations)
                    stack.push_back(remap.locations[l]);
                return m_dst.internStack(stack);
            },
            destinationSamples);
        return Ok{};
    }

    Status add(const Profile &src, const SessionIds &ids, std::vector<uint32_t> *destinationSamples)
    {
        if (auto st = startById(src, ids); !st)
            return st;
        ByIdRemap remap(*this, src, ids);
        addComments(src, remap.stringOf());
        // Every location of a recorder's flush is used by its samples: all of them are looked up first (by id
        // where met before), so that a stack met for the first time is built from a plain array.
        std::vector<uint32_t> locations(src.locations().size());
        for (size_t l = 0; l < locations.size(); ++l)
            locations[l] = remap.location(static_cast<uint32_t>(l));
        std::vector<uint32_t> stack;
        size_t sample = 0;
        addSamples(
            src, remap.stringOf(),
            [&](const SampleView &s) {
                const uint32_t id = ids.sampleStacks[sample++];
                uint32_t stackId = id < m_stackById.size() ? m_stackById[id] : kNoIndex;
                if (stackId != kNoIndex)
                    return stackId;
                stack.clear();
                bool named = true; // every location has its final name: the stack may be found by id from now on
                for (uint32_t l : s.locations) {
                    stack.push_back(locations[l]);
                    named = named && ids.locations[l] != kNoIndex;
                }
                stackId = m_dst.internStack(stack);
                if (named && id != kNoIndex) {
                    if (id >= m_stackById.size())
                        m_stackById.resize(std::max<size_t>(size_t(id) + 1, m_stackById.size() * 2), kNoIndex);
                    m_stackById[id] = stackId;
                }
                return stackId;
            },
            destinationSamples);
        return Ok{};
    }

    Status addTables(const Profile &src, const SessionIds &ids, Remap &out)
    {
        if (auto st = startById(src, ids); !st)
            return st;
        ByIdRemap remap(*this, src, ids);
        out.locations.resize(src.locations().size());
        for (size_t l = 0; l < out.locations.size(); ++l)
            out.locations[l] = remap.location(static_cast<uint32_t>(l));
        const auto str = remap.stringOf();
        for (size_t i = 0; i < src.sampleCount(); ++i) {
            for (const Label &l : src.sampleLabels(i)) {
                str(l.key);
                str(l.str);
                str(l.numUnit);
            }
        }
        addComments(src, str);
        out.strings = remap.takeStrings();
        return Ok{};
    }

    const Profile &result() const { return m_dst; }
    Profile take() { return std::move(m_dst); }
    size_t added() const { return m_added; }

private:
    // A profile's strings, mappings, functions and locations in the destination, taken on first use, and its
    // locations found by their session ids where they were met before: a flush whose locations were all met
    // takes only the strings its labels use.
    class ByIdRemap {
    public:
        ByIdRemap(Impl &impl, const Profile &src, const SessionIds &ids)
            : m_impl(impl), m_src(src), m_ids(ids), m_strings(src.strings().size(), kNoIndex),
              m_mappings(src.mappings().size(), kNoIndex), m_functions(src.functions().size(), kNoIndex),
              m_locations(src.locations().size(), kNoIndex)
        {
        }
        StringId string(StringId s)
        {
            StringId &mine = m_strings[s];
            if (mine == kNoIndex)
                mine = m_impl.m_dst.intern(m_src.strings()[s]);
            return mine;
        }
        struct StringOf {
            ByIdRemap *remap;
            StringId operator()(StringId s) const { return remap->string(s); }
        };
        StringOf stringOf() { return {this}; }
        uint32_t location(uint32_t l)
        {
            uint32_t &mine = m_locations[l];
            if (mine != kNoIndex)
                return mine;
            const uint32_t id = m_ids.locations[l];
            std::vector<uint32_t> &byId = m_impl.m_locationById;
            if (id != kNoIndex && id < byId.size() && byId[id] != kNoIndex)
                return mine = byId[id];
            mine = m_impl.location(
                m_src.locations()[l], [this](uint32_t m) { return mapping(m); },
                [this](uint32_t f) { return function(f); });
            if (id != kNoIndex) {
                if (id >= byId.size())
                    byId.resize(size_t(id) + 1, kNoIndex);
                byId[id] = mine;
            }
            return mine;
        }
        // Every string taken so far; kNoIndex for the others.
        std::vector<StringId> takeStrings() { return std::move(m_strings); }

    private:
        uint32_t mapping(uint32_t m)
        {
            if (m_mappings[m] == kNoIndex)
                m_mappings[m] = m_impl.mapping(m_src.mappings()[m], stringOf());
            return m_mappings[m];
        }
        uint32_t function(uint32_t f)
        {
            if (m_functions[f] == kNoIndex)
                m_functions[f] = m_impl.function(m_src.functions()[f], stringOf());
            return m_functions[f];
        }

        Impl &m_impl;
        const Profile &m_src;
        const SessionIds &m_ids;
        std::vector<StringId> m_strings;
        std::vector<uint32_t> m_mappings;
        std::vector<uint32_t> m_functions;
        std::vector<uint32_t> m_locations;
    };

    // The checks and the header of a profile given with session ids; a new naming epoch forgets what was learnt
    // by id.
    Status startById(const Profile &src, const SessionIds &ids)
    {
        if (ids.locations.size() != src.locations().size() || ids.sampleStacks.size() != src.sampleCount())
            return makeError(Error::Code::Invalid, "session ids that do not describe the profile");
        if (auto st = addHeader(src); !st)
            return st;
        if (ids.namingEpoch != m_namingEpoch) {
            m_locationById.clear();
            m_stackById = {};
            m_namingEpoch = ids.namingEpoch;
        }
        if (ids.stackGeneration != m_stackGeneration) {
            m_stackById = {};
            m_stackGeneration = ids.stackGeneration;
        }
        return Ok{};
    }

    // The sample types (the first profile's, or a check that they are the same) and the time span.
    Status addHeader(const Profile &src)
    {
        if (m_added == 0) {
            start(src);
        } else if (!sameTypes(m_dst, src)) {
            return makeError(Error::Code::Invalid, "profiles have different sample types and cannot be merged");
        }
        ++m_added;
        if (src.timeNanos != 0) {
            m_start = std::min(m_start, src.timeNanos);
            m_end = std::max(m_end, src.timeNanos + src.durationNanos);
            m_dst.timeNanos = m_start;
            m_dst.durationNanos = m_end - m_start;
        }
        return Ok{};
    }

    template <typename StringOf> void addComments(const Profile &src, StringOf &&str)
    {
        for (StringId c : src.comments()) {
            const StringId mine = str(c);
            if (std::find(m_dst.comments().begin(), m_dst.comments().end(), mine) == m_dst.comments().end())
                m_dst.comments().push_back(mine);
        }
    }

    // Each sample of `src` with its stack in the destination (`stackOf`, called once per sample in order) and
    // its kept labels, aggregated or appended.
    template <typename StringOf, typename StackOf>
    void addSamples(const Profile &src, StringOf &&str, StackOf &&stackOf, std::vector<uint32_t> *destinationSamples)
    {
        const std::vector<StringId> dropped = droppedKeys();
        std::vector<Label> labels;
        if (destinationSamples)
            destinationSamples->resize(src.sampleCount());
        clearSnapshots();
        for (size_t i = 0; i < src.sampleCount(); ++i) {
            const SampleView s = src.sample(i);
            const uint32_t stackId = stackOf(s);
            remapLabels(s.labels, str, dropped, labels);
            const uint32_t destination = addSample(stackId, s.values, labels);
            if (destinationSamples)
                (*destinationSamples)[i] = destination;
            if (holdsSnapshot(s.values))
                m_snapshotSamples.push_back(destination);
        }
    }

    // Options::latestSnapshots: the previous profile's snapshot values go, so that the next one's replace them.
    // Costs a pass over the samples the previous profile gave snapshot values to, not over the whole result.
    void clearSnapshots()
    {
        for (const uint32_t sample : m_snapshotSamples) {
            for (const size_t column : m_snapshotColumns)
                m_dst.setSampleValue(sample, column, 0);
        }
        m_snapshotSamples.clear();
    }

    bool holdsSnapshot(std::span<const int64_t> values) const
    {
        for (const size_t column : m_snapshotColumns) {
            if (column < values.size() && values[column] != 0)
                return true;
        }
        return false;
    }

    std::vector<StringId> droppedKeys()
    {
        std::vector<StringId> dropped;
        for (const std::string &key : m_options.dropLabels)
            dropped.push_back(m_dst.intern(key));
        return dropped;
    }

    template <typename StringOf>
    static void remapLabels(std::span<const Label> source, StringOf &&str, const std::vector<StringId> &dropped,
                            std::vector<Label> &out)
    {
        out.clear();
        for (Label l : source) {
            l.key = str(l.key);
            if (std::find(dropped.begin(), dropped.end(), l.key) != dropped.end())
                continue;
            l.str = str(l.str);
            l.numUnit = str(l.numUnit);
            out.push_back(l);
        }
    }

    void start(const Profile &first)
    {
        for (const ValueType &vt : first.sampleTypes())
            m_dst.sampleTypes().push_back({m_dst.intern(first.str(vt.type)), m_dst.intern(first.str(vt.unit))});
        m_dst.periodType = {m_dst.intern(first.str(first.periodType.type)),
                            m_dst.intern(first.str(first.periodType.unit))};
        m_dst.period = first.period;
        m_dst.defaultSampleType = m_dst.intern(first.str(first.defaultSampleType));
        for (size_t t = 0; m_options.latestSnapshots && t < first.sampleTypes().size(); ++t) {
            if (isSnapshotSampleType(first.str(first.sampleTypes()[t].type)))
                m_snapshotColumns.push_back(t);
        }
    }

    // Returns the index of the destination sample that received the values.
    uint32_t addSample(uint32_t stackId, std::span<const int64_t> values, const std::vector<Label> &labels)
    {
        if (!m_options.aggregate) {
            m_dst.addSampleWithStack(stackId, values, labels);
            return static_cast<uint32_t>(m_dst.sampleCount() - 1);
        }
        // Identical samples have the same stack and the same label set: the pair of ids is the key.
        const uint32_t labelSet = m_dst.internLabelSet(labels);
        const auto keyOf = [](uint32_t stack, uint32_t set) { return (static_cast<uint64_t>(stack) << 32) | set; };
        const uint32_t found = m_sampleByKey.find(keyOf(stackId, labelSet), [&](uint32_t sample) {
            return m_dst.sampleStackId(sample) == stackId && m_dst.sampleLabelSetId(sample) == labelSet;
        });
        if (found != IndexHashTable::kNone) {
            m_dst.addToSampleValues(found, values);
            return found;
        }
        const auto index = static_cast<uint32_t>(m_dst.sampleCount());
        m_dst.addSampleWithIds(stackId, values, labelSet);
        m_sampleByKey.insert(keyOf(stackId, labelSet), index, [&](uint32_t sample) {
            return keyOf(m_dst.sampleStackId(sample), m_dst.sampleLabelSetId(sample));
        });
        return index;
    }

    template <typename StringOf> uint32_t mapping(const Mapping &m, StringOf &&str)
    {
        const StringId filename = str(m.filename), buildId = str(m.buildId);
        auto key = std::make_tuple(m.start, m.limit, m.offset, filename, buildId);
        auto [it, inserted] = m_mappings.try_emplace(key, static_cast<uint32_t>(m_dst.mappings().size()));
        if (inserted) {
            Mapping copy = m;
            copy.id = m_dst.mappings().size() + 1;
            copy.filename = filename;
            copy.buildId = buildId;
            m_dst.mappings().push_back(copy);
        }
        return it->second;
    }

    template <typename StringOf> uint32_t function(const Function &f, StringOf &&str)
    {
        const StringId name = str(f.name), systemName = str(f.systemName), filename = str(f.filename);
        auto key = std::make_tuple(name, systemName, filename, f.startLine);
        auto [it, inserted] = m_functions.try_emplace(key, static_cast<uint32_t>(m_dst.functions().size()));
        if (inserted)
            m_dst.functions().push_back(
                Function{m_dst.functions().size() + 1, name, systemName, filename, f.startLine});
        return it->second;
    }

    template <typename MappingOf, typename FunctionOf>
    uint32_t location(const Location &loc, MappingOf &&mappingOf, FunctionOf &&functionOf)
    {
        Location copy;
        copy.mappingIndex = loc.mappingIndex == kNoIndex ? kNoIndex : mappingOf(loc.mappingIndex);
        copy.address = loc.address;
        copy.isFolded = loc.isFolded;
        copy.lines = loc.lines;
        // Without lines there is no function to go by: the address tells the location.
        const bool byFunction = m_options.locationsByFunction && !copy.lines.empty();
        if (byFunction)
            copy.address = 0;
        std::vector<int64_t> key{copy.mappingIndex, static_cast<int64_t>(copy.address), copy.isFolded};
        for (Line &l : copy.lines) {
            l.functionIndex = l.functionIndex == kNoIndex ? kNoIndex : functionOf(l.functionIndex);
            if (byFunction)
                l.line = l.column = 0;
            key.insert(key.end(), {l.functionIndex, l.line, l.column});
        }
        auto [it, inserted] = m_locations.try_emplace(std::move(key), static_cast<uint32_t>(m_dst.locations().size()));
        if (inserted) {
            copy.id = m_dst.locations().size() + 1;
            m_dst.locations().push_back(std::move(copy));
        }
        return it->second;
    }

    Options m_options;
    Profile m_dst;
    size_t m_added = 0;
    int64_t m_start = INT64_MAX;
    int64_t m_end = INT64_MIN;
    std::map<std::tuple<uint64_t, uint64_t, uint64_t, StringId, StringId>, uint32_t> m_mappings;
    std::map<std::tuple<StringId, StringId, StringId, int64_t>, uint32_t> m_functions;
    std::map<std::vector<int64_t>, uint32_t> m_locations;
    IndexHashTable m_sampleByKey; // aggregated samples by (stack id, label set id), which their columns hold
    // Options::latestSnapshots: the snapshot sample types, and the samples the latest profile gave values of them.
    std::vector<size_t> m_snapshotColumns;
    std::vector<uint32_t> m_snapshotSamples;
    // Given session ids: what the recorder's location and stack ids became here (kNoIndex: not met yet), as
    // of naming epoch m_namingEpoch and the recorder's stack generation m_stackGeneration.
    std::vector<uint32_t> m_locationById;
    std::vector<uint32_t> m_stackById;
    uint64_t m_namingEpoch = 0;
    uint64_t m_stackGeneration = 0;
};

ProfileMerger::ProfileMerger() : ProfileMerger(Options{}) {}
ProfileMerger::ProfileMerger(Options options) : m_impl(std::make_unique<Impl>(std::move(options))) {}
ProfileMerger::~ProfileMerger() = default;
ProfileMerger::ProfileMerger(const ProfileMerger &other) : m_impl(std::make_unique<Impl>(*other.m_impl)) {}
Status ProfileMerger::add(const Profile &profile, std::vector<uint32_t> *destinationSamples)
{
    return m_impl->add(profile, destinationSamples);
}
Status ProfileMerger::add(const Profile &profile, const SessionIds &ids, std::vector<uint32_t> *destinationSamples)
{
    return m_impl->add(profile, ids, destinationSamples);
}
const Profile &ProfileMerger::result() const
{
    return m_impl->result();
}
Profile ProfileMerger::takeResult()
{
    return m_impl->take();
}
size_t ProfileMerger::added() const
{
    return m_impl->added();
}
Status ProfileMerger::addTables(const Profile &profile, Remap &remap)
{
    return m_impl->addTables(profile, remap);
}
Status ProfileMerger::addTables(const Profile &profile, const SessionIds &ids, Remap &remap)
{
    return m_impl->addTables(profile, ids, remap);
}

Result<Profile> mergeProfiles(std::span<const Profile *const> profiles)
{
    if (profiles.empty())
        return makeError(Error::Code::Invalid, "no profiles to merge");
    ProfileMerger merger;
    for (const Profile *p : profiles) {
        if (auto st = merger.add(*p); !st)
            return st.error();
    }
    return merger.takeResult();
}

} // namespace emberline::engine
