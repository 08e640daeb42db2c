#include "engine/analysis/view_profile.h"

#include "engine/analysis/derived_profile.h"

#include <cmath>
#include <vector>

namespace emberline::engine {

Result<Profile> viewProfile(const std::shared_ptr<const LoadedProfile> &source, std::span<const Transform> transforms,
                            const SampleFilter &filter, const std::atomic<bool> *cancel)
{
    auto derived = deriveProfile(source, {std::vector<Transform>(transforms.begin(), transforms.end()), false}, cancel);
    if (!derived)
        return derived.error();
    const LoadedProfile &view = *derived.value();
    const Profile &profile = *view.profile;
    const std::vector<uint8_t> mask = selectSamples(profile, view.threads.get(), filter);
    const std::vector<float> *weights = view.sampleWeights.get();
    const SampleOverlay *overlay = view.sampleOverlay.get();
    Profile out = profile.withoutSamples();
    std::vector<uint32_t> stackMap(profile.stacks().size(), kNoIndex);
    std::vector<int64_t> values;
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        if ((i & 0xFFFF) == 0 && cancel && cancel->load(std::memory_order_relaxed))
            return makeError(Error::Code::Cancelled, "cancelled");
        if (!mask.empty() && !mask[i])
            continue;
        const float weight = weights && i < weights->size() ? (*weights)[i] : 1.0f;
        const std::span<const int64_t> overlaid =
            overlay ? overlay->find(static_cast<uint32_t>(i)) : std::span<const int64_t>{};
        if (weight <= 0 && overlaid.empty())
            continue;
        values.assign(profile.sampleValues(i).begin(), profile.sampleValues(i).end());
        if (weight != 1.0f) {
            for (int64_t &v : values)
                v = std::llround(static_cast<double>(v) * weight);
        }
        for (size_t c = 0; overlay && c < overlay->types.size(); ++c) // the overlay's types: its values or 0
            values[static_cast<size_t>(overlay->types[c])] = overlaid.empty() ? 0 : overlaid[c];
        uint32_t &stack = stackMap[profile.sampleStackId(i)];
        if (stack == kNoIndex)
            stack = out.internStack(profile.stacks().stack(profile.sampleStackId(i)));
        out.addSampleWithStack(stack, values, profile.sampleLabels(i));
    }
    if (out.sampleCount() == 0)
        return makeError(Error::Code::Invalid, "the view shows no sample to save");
    return out;
}

} // namespace emberline::engine
