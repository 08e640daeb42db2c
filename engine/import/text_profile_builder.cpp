#include "engine/import/text_profile_builder.h"

namespace emberline::engine {

TextProfileBuilder::TextProfileBuilder(const std::vector<SampleType> &types)
{
    for (const SampleType &t : types)
        m_profile.sampleTypes().push_back({m_profile.intern(t.type), m_profile.intern(t.unit)});
    m_tidKey = m_profile.intern("thread id");
    m_threadNameKey = m_profile.intern("thread name");
}

uint32_t TextProfileBuilder::mapping(std::string_view module)
{
    auto [it, inserted] = m_mappings.try_emplace(std::string(module), 0);
    if (inserted) {
        Mapping m;
        m.id = m_profile.mappings().size() + 1;
        m.filename = m_profile.intern(module);
        m.hasFunctions = true;
        it->second = static_cast<uint32_t>(m_profile.mappings().size());
        m_profile.mappings().push_back(m);
    }
    return it->second;
}

uint32_t TextProfileBuilder::location(std::string_view name, std::string_view module, uint64_t address)
{
    std::string key(name);
    key += '\0';
    key += module;
    key += '\0';
    key += std::to_string(address);
    auto [it, inserted] = m_locations.try_emplace(std::move(key), 0);
    if (!inserted)
        return it->second;
    auto [fn, newFunction] = m_functions.try_emplace(std::string(name), 0);
    if (newFunction) {
        Function f;
        f.id = m_profile.functions().size() + 1;
        f.name = m_profile.intern(name);
        f.systemName = f.name;
        fn->second = static_cast<uint32_t>(m_profile.functions().size());
        m_profile.functions().push_back(f);
    }
    Location loc;
    loc.id = m_profile.locations().size() + 1;
    loc.address = address;
    loc.mappingIndex = module.empty() ? kNoIndex : mapping(module);
    loc.lines.push_back(Line{fn->second, 0, 0});
    it->second = static_cast<uint32_t>(m_profile.locations().size());
    m_profile.locations().push_back(std::move(loc));
    return it->second;
}

void TextProfileBuilder::addSample(const std::vector<uint32_t> &stack, const std::vector<int64_t> &values, int64_t tid,
                                   std::string_view threadName)
{
    ++m_samplesAdded;
    aggregate(stack, values, tid, threadName);
}

void TextProfileBuilder::aggregate(const std::vector<uint32_t> &stack, std::span<const int64_t> values, int64_t tid,
                                   std::string_view threadName)
{
    const uint32_t stackId = m_profile.internStack(stack);
    std::string key = std::to_string(stackId) + '/' + std::to_string(tid) + '/';
    key += threadName;
    auto [it, inserted] = m_samples.try_emplace(std::move(key), m_profile.sampleCount());
    if (!inserted) {
        m_profile.addToSampleValues(it->second, values);
        return;
    }
    std::vector<Label> labels;
    if (tid != 0)
        labels.push_back(Label{m_tidKey, 0, tid, 0});
    if (!threadName.empty())
        labels.push_back(Label{m_threadNameKey, m_profile.intern(threadName), 0, 0});
    m_profile.addSampleWithStack(stackId, values, labels);
    m_locationsAtSample.push_back(static_cast<uint32_t>(m_profile.locations().size()));
}

void TextProfileBuilder::append(const TextProfileBuilder &later)
{
    // The later builder's locations are made here in its order, each just before the first of its samples that
    // needed it, and its samples (already added up) in theirs: strings, functions, mappings, locations, stacks and
    // samples then come in the order one builder fed everything would have made them. Values are sums either way.
    const Profile &p = later.m_profile;
    std::vector<uint32_t> locationHere(p.locations().size());
    size_t made = 0;
    const auto makeLocations = [&](size_t upTo) {
        for (; made < upTo; ++made) {
            const Location &loc = p.locations()[made];
            const std::string_view name = p.str(p.functions()[loc.lines.front().functionIndex].name);
            const std::string_view module =
                loc.mappingIndex == kNoIndex ? std::string_view() : p.str(p.mappings()[loc.mappingIndex].filename);
            locationHere[made] = location(name, module, loc.address);
        }
    };
    std::vector<uint32_t> stack;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        makeLocations(later.m_locationsAtSample[i]);
        const SampleView sample = p.sample(i);
        stack.clear();
        for (const uint32_t l : sample.locations)
            stack.push_back(locationHere[l]);
        int64_t tid = 0;
        std::string_view threadName;
        for (const Label &label : sample.labels) {
            if (label.key == later.m_tidKey)
                tid = label.num;
            else if (label.key == later.m_threadNameKey)
                threadName = p.str(label.str);
        }
        aggregate(stack, sample.values, tid, threadName);
    }
    makeLocations(p.locations().size());
    m_samplesAdded += later.m_samplesAdded;
}

} // namespace emberline::engine
