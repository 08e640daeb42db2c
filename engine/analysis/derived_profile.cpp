#include "engine/analysis/derived_profile.h"

#include "engine/analysis/inverted_profile.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace emberline::engine {
namespace {

// The derived profile's sample threads as ordinals of the source's thread list (a transform that drops every
// sample of a thread would otherwise renumber the threads after it).
std::shared_ptr<const ThreadIndex> sourceOrdinals(const ThreadIndex &source, const Profile &derived)
{
    if (source.empty())
        return std::make_shared<const ThreadIndex>(derived);
    std::map<std::pair<int64_t, std::string>, uint32_t> ordinal;
    for (size_t i = 0; i < source.threads().size(); ++i)
        ordinal.try_emplace({source.threads()[i].tid, source.threads()[i].name}, static_cast<uint32_t>(i));
    const ThreadIndex own(derived);
    // Each of the derived profile's threads looked up once, not once per sample.
    std::vector<uint32_t> toSource(own.threads().size(), kNoIndex);
    for (size_t t = 0; t < own.threads().size(); ++t) {
        const auto it = ordinal.find({own.threads()[t].tid, own.threads()[t].name});
        if (it != ordinal.end())
            toSource[t] = it->second;
    }
    ChunkedColumn<uint32_t> column;
    column.reserveRows(derived.sampleCount());
    for (size_t i = 0; i < derived.sampleCount(); ++i) {
        const uint32_t t = own.threadOf(i);
        column.push_back(t < toSource.size() ? toSource[t] : kNoIndex);
    }
    return std::make_shared<const ThreadIndex>(source.threads(), std::move(column));
}

} // namespace

Result<std::shared_ptr<const LoadedProfile>> deriveProfile(const std::shared_ptr<const LoadedProfile> &source,
                                                           const ProfileShape &shape, const std::atomic<bool> *cancel)
{
    if (shape.isIdentity())
        return source;
    // A live session's time range weighs its samples: the weights follow the samples a transform keeps (inversion
    // keeps every sample in order).
    std::vector<uint32_t> kept;
    Result<Profile> profile = shape.transforms.empty()
                                  ? invertStacks(*source->profile, cancel)
                                  : applyTransforms(*source->profile, shape.transforms, cancel,
                                                    source->sampleWeights || source->sampleOverlay ? &kept : nullptr);
    if (profile && shape.inverted && !shape.transforms.empty())
        profile = invertStacks(profile.value(), cancel);
    if (!profile)
        return profile.error();
    auto shared = std::make_shared<const Profile>(std::move(profile).value());
    auto derived = std::make_shared<LoadedProfile>();
    derived->path = source->path;
    derived->notice = source->notice;
    derived->aggregated = source->aggregated;
    if (source->sampleOverlay && !shape.transforms.empty())
        derived->sampleOverlay = std::make_shared<const SampleOverlay>(source->sampleOverlay->remapped(kept));
    else
        derived->sampleOverlay = source->sampleOverlay; // inversion keeps every sample in order
    if (source->sampleWeights && !shape.transforms.empty()) {
        auto weights = std::make_shared<std::vector<float>>();
        weights->reserve(kept.size());
        for (const uint32_t i : kept)
            weights->push_back((*source->sampleWeights)[i]);
        derived->totals = weightedTotals(*shared, *weights);
        if (derived->sampleOverlay)
            derived->sampleOverlay->replaceTotals(derived->totals);
        const bool anyShown =
            std::any_of(derived->totals.begin(), derived->totals.end(), [](int64_t v) { return v != 0; });
        const bool anyBefore =
            std::any_of(source->totals.begin(), source->totals.end(), [](int64_t v) { return v != 0; });
        if (anyBefore && !anyShown) {
            std::string chain;
            for (const Transform &t : shape.transforms)
                chain += (chain.empty() ? "" : ", then ") + t.describe();
            return makeError(Error::Code::Invalid, "no sample of the selected time range is left after " + chain);
        }
        derived->sampleWeights = std::move(weights);
    } else {
        derived->sampleWeights = source->sampleWeights;
        derived->totals = source->sampleWeights ? source->totals : shared->totals();
    }
    derived->frames = std::make_shared<const FrameTable>(*shared);
    derived->frameNames = frameDisplayNames(*derived->frames);
    derived->threads = sourceOrdinals(*source->threads, *shared);
    derived->profile = std::move(shared);
    derived->original = source;
    if (!shape.inverted)
        derived->transformedBy = shape.transforms;
    return std::shared_ptr<const LoadedProfile>(std::move(derived));
}

} // namespace emberline::engine
