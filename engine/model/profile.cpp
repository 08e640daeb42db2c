#include "engine/model/profile.h"

#include <cassert>

namespace emberline::engine {

Profile::Profile()
{
    m_strings.emplace_back();
}

StringId Profile::intern(std::string_view s)
{
    if (!m_stringIndex.built) {
        // string_view keys point into m_strings; rebuilt whenever the vector may have reallocated.
        m_stringIndex.map.clear();
        m_stringIndex.map.reserve(m_strings.size() * 2);
        for (StringId i = 0; i < m_strings.size(); ++i)
            m_stringIndex.map.emplace(m_strings[i], i);
        m_stringIndex.built = true;
    }
    if (auto it = m_stringIndex.map.find(s); it != m_stringIndex.map.end())
        return it->second;
    const bool willReallocate = m_strings.size() == m_strings.capacity();
    const auto id = static_cast<StringId>(m_strings.size());
    m_strings.emplace_back(s);
    if (willReallocate) {
        m_stringIndex.built = false; // views into moved small strings are stale
    } else {
        m_stringIndex.map.emplace(m_strings.back(), id);
    }
    return id;
}

StringId Profile::appendString(std::string s)
{
    m_stringIndex.built = false;
    m_strings.push_back(std::move(s));
    return static_cast<StringId>(m_strings.size() - 1);
}

StringId Profile::findString(std::string_view s) const
{
    for (StringId i = 0; i < m_strings.size(); ++i) {
        if (m_strings[i] == s)
            return i;
    }
    return kNoIndex;
}

void Profile::reserveStacks(size_t stacks)
{
    m_stacks.reserve(stacks);
}

void Profile::reserveSamples(size_t n)
{
    m_sampleStacks.reserveRows(n);
    m_values.reserveRows(n);
    m_sampleLabels.reserveRows(n);
}

size_t Profile::sampleMemoryBytes() const
{
    return m_sampleStacks.memoryBytes() + m_values.memoryBytes() + m_sampleLabels.memoryBytes() +
           m_labelSets.memoryBytes();
}

uint64_t Profile::HashLabels::operator()(std::span<const Label> labels) const
{
    uint64_t h = kRowHashSeed ^ labels.size();
    for (const Label &l : labels) {
        h = mixRowHash(h, uint64_t(l.key) << 32 | l.str);
        h = mixRowHash(h, static_cast<uint64_t>(l.num));
        h = mixRowHash(h, l.numUnit);
    }
    return h;
}

void Profile::addSample(std::span<const uint32_t> locations, std::span<const int64_t> values,
                        std::span<const Label> labels)
{
    addSampleWithStack(m_stacks.intern(locations), values, labels);
}

void Profile::addSampleWithStack(uint32_t stackId, std::span<const int64_t> values, std::span<const Label> labels)
{
    addSampleWithIds(stackId, values, m_labelSets.intern(labels));
}

void Profile::addSampleWithIds(uint32_t stackId, std::span<const int64_t> values, uint32_t labelSetId)
{
    assert(values.size() == m_sampleTypes.size());
    assert(labelSetId < m_labelSets.size());
    if (m_values.empty())
        m_values.setWidth(values.size()); // every sample has a value per sample type
    m_sampleStacks.push_back(stackId);
    m_values.appendRow(values);
    m_sampleLabels.push_back(labelSetId);
}

void Profile::addToSampleValues(size_t i, std::span<const int64_t> values)
{
    const std::span<int64_t> row = m_values.mutableRow(i);
    for (size_t t = 0; t < row.size() && t < values.size(); ++t)
        row[t] += values[t];
}

void Profile::setSampleValue(size_t i, size_t type, int64_t value)
{
    const std::span<int64_t> row = m_values.mutableRow(i);
    if (type < row.size())
        row[type] = value;
}

std::span<const int64_t> Profile::sampleValues(size_t i) const
{
    return m_values.row(i);
}

std::span<const Label> Profile::sampleLabels(size_t i) const
{
    return m_labelSets.row(m_sampleLabels[i]);
}

SampleView Profile::sample(size_t i) const
{
    const uint32_t stackId = m_sampleStacks[i];
    return SampleView{m_stacks.stack(stackId), sampleValues(i), sampleLabels(i), stackId};
}

int Profile::defaultSampleTypeIndex() const
{
    if (m_sampleTypes.empty())
        return -1;
    if (defaultSampleType != 0) {
        for (size_t i = 0; i < m_sampleTypes.size(); ++i) {
            if (m_sampleTypes[i].type == defaultSampleType)
                return static_cast<int>(i);
        }
    }
    return static_cast<int>(m_sampleTypes.size()) - 1;
}

int Profile::sampleTypeIndex(std::string_view type) const
{
    for (size_t i = 0; i < m_sampleTypes.size(); ++i) {
        if (str(m_sampleTypes[i].type) == type)
            return static_cast<int>(i);
    }
    return -1;
}

Profile Profile::withoutSamples() const
{
    Profile out;
    out.m_strings = m_strings; // the index is built again on the first intern()
    out.m_sampleTypes = m_sampleTypes;
    out.m_functions = m_functions;
    out.m_locations = m_locations;
    out.m_mappings = m_mappings;
    out.m_comments = m_comments;
    out.timeNanos = timeNanos;
    out.durationNanos = durationNanos;
    out.periodType = periodType;
    out.period = period;
    out.dropFrames = dropFrames;
    out.keepFrames = keepFrames;
    out.defaultSampleType = defaultSampleType;
    return out;
}

std::vector<int64_t> Profile::totals() const
{
    const size_t n = m_sampleTypes.size();
    std::vector<int64_t> sums(n, 0);
    for (size_t i = 0; i < m_values.rows(); ++i) {
        const std::span<const int64_t> row = m_values.row(i);
        for (size_t t = 0; t < n && t < row.size(); ++t)
            sums[t] += row[t];
    }
    return sums;
}

} // namespace emberline::engine
