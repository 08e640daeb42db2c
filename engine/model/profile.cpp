#include "engine/model/profile.h"

#include <cassert>

namespace emberline::engine {

Profile::Profile()
{
    m_strings.emplace_back();
    m_labelOffsets.push_back(0);
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

void Profile::reserveSamples(size_t n)
{
    m_sampleStacks.reserve(n);
    m_values.reserve(n * m_sampleTypes.size());
    m_labelOffsets.reserve(n + 1);
}

void Profile::addSample(std::span<const uint32_t> locations, std::span<const int64_t> values,
                        std::span<const Label> labels)
{
    addSampleWithStack(m_stacks.intern(locations), values, labels);
}

void Profile::addSampleWithStack(uint32_t stackId, std::span<const int64_t> values, std::span<const Label> labels)
{
    assert(values.size() == m_sampleTypes.size());
    m_sampleStacks.push_back(stackId);
    m_values.insert(m_values.end(), values.begin(), values.end());
    m_labels.insert(m_labels.end(), labels.begin(), labels.end());
    m_labelOffsets.push_back(static_cast<uint32_t>(m_labels.size()));
}

void Profile::addToSampleValues(size_t i, std::span<const int64_t> values)
{
    const size_t n = m_sampleTypes.size();
    for (size_t t = 0; t < n && t < values.size(); ++t)
        m_values[i * n + t] += values[t];
}

std::span<const int64_t> Profile::sampleValues(size_t i) const
{
    const size_t n = m_sampleTypes.size();
    return {m_values.data() + i * n, n};
}

std::span<const Label> Profile::sampleLabels(size_t i) const
{
    return {m_labels.data() + m_labelOffsets[i], m_labelOffsets[i + 1] - m_labelOffsets[i]};
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

std::vector<int64_t> Profile::totals() const
{
    const size_t n = m_sampleTypes.size();
    std::vector<int64_t> sums(n, 0);
    for (size_t i = 0; i < m_sampleStacks.size(); ++i) {
        for (size_t t = 0; t < n; ++t)
            sums[t] += m_values[i * n + t];
    }
    return sums;
}

} // namespace emberline::engine
