#include "engine/model/sample_overlay.h"

#include <algorithm>
#include <numeric>

namespace emberline::engine {

int SampleOverlay::column(int sampleType) const
{
    const auto it = std::find(types.begin(), types.end(), sampleType);
    return it == types.end() ? -1 : static_cast<int>(it - types.begin());
}

std::span<const int64_t> SampleOverlay::find(uint32_t sample) const
{
    const auto it = std::lower_bound(samples.begin(), samples.end(), sample);
    if (it == samples.end() || *it != sample)
        return {};
    return row(static_cast<size_t>(it - samples.begin()));
}

std::vector<int64_t> SampleOverlay::valuesPerStack(const Profile &profile, int sampleType,
                                                   const std::vector<uint8_t> &mask) const
{
    std::vector<int64_t> perStack(profile.stacks().size(), 0);
    const int c = column(sampleType);
    if (c < 0)
        return perStack;
    for (size_t k = 0; k < samples.size(); ++k) {
        const uint32_t i = samples[k];
        if (i >= profile.sampleCount() || (!mask.empty() && (i >= mask.size() || !mask[i])))
            continue;
        perStack[profile.sampleStackId(i)] += row(k)[static_cast<size_t>(c)];
    }
    return perStack;
}

void SampleOverlay::replaceTotals(std::vector<int64_t> &totals) const
{
    for (size_t c = 0; c < types.size(); ++c) {
        const auto t = static_cast<size_t>(types[c]);
        if (t >= totals.size())
            continue;
        totals[t] = 0;
        for (size_t k = 0; k < samples.size(); ++k)
            totals[t] += row(k)[c];
    }
}

SampleOverlay SampleOverlay::remapped(std::span<const uint32_t> kept) const
{
    SampleOverlay out;
    out.types = types;
    for (size_t j = 0; j < kept.size(); ++j) {
        const std::span<const int64_t> values = find(kept[j]);
        if (values.empty())
            continue;
        out.samples.push_back(static_cast<uint32_t>(j));
        out.values.insert(out.values.end(), values.begin(), values.end());
    }
    return out;
}

SampleOverlayBuilder::SampleOverlayBuilder(std::vector<int> types) : m_types(std::move(types)) {}

void SampleOverlayBuilder::add(uint32_t sample, std::span<const int64_t> values)
{
    m_samples.push_back(sample);
    for (size_t c = 0; c < m_types.size(); ++c)
        m_values.push_back(c < values.size() ? values[c] : 0);
}

SampleOverlay SampleOverlayBuilder::finish()
{
    const size_t width = m_types.size();
    std::vector<size_t> order(m_samples.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m_samples[a] < m_samples[b]; });
    SampleOverlay out;
    out.types = std::move(m_types);
    for (const size_t k : order) {
        const std::span<const int64_t> values(m_values.data() + k * width, width);
        if (out.samples.empty() || out.samples.back() != m_samples[k]) {
            out.samples.push_back(m_samples[k]);
            out.values.insert(out.values.end(), values.begin(), values.end());
            continue;
        }
        int64_t *sum = out.values.data() + out.values.size() - width;
        for (size_t c = 0; c < width; ++c)
            sum[c] += values[c];
    }
    m_samples.clear();
    m_values.clear();
    return out;
}

} // namespace emberline::engine
