#include "engine/model/derived_profile.h"

#include "engine/model/inverted_profile.h"

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
    ChunkedColumn<uint32_t> column;
    column.reserveRows(derived.sampleCount());
    for (size_t i = 0; i < derived.sampleCount(); ++i) {
        const uint32_t t = own.threadOf(i);
        const auto it = t == kNoIndex ? ordinal.end() : ordinal.find({own.threads()[t].tid, own.threads()[t].name});
        column.push_back(it == ordinal.end() ? kNoIndex : it->second);
    }
    return std::make_shared<const ThreadIndex>(source.threads(), std::move(column));
}

} // namespace

Result<std::shared_ptr<const LoadedProfile>> deriveProfile(const std::shared_ptr<const LoadedProfile> &source,
                                                           const ProfileShape &shape, const std::atomic<bool> *cancel)
{
    if (shape.isIdentity())
        return source;
    if (source->sampleWeights && !shape.transforms.empty())
        return makeError(Error::Code::Invalid, "transforms apply once the session has ended");
    Result<Profile> profile = shape.transforms.empty() ? invertStacks(*source->profile, cancel)
                                                       : applyTransforms(*source->profile, shape.transforms, cancel);
    if (profile && shape.inverted && !shape.transforms.empty())
        profile = invertStacks(profile.value(), cancel);
    if (!profile)
        return profile.error();
    auto shared = std::make_shared<const Profile>(std::move(profile).value());
    auto derived = std::make_shared<LoadedProfile>();
    derived->path = source->path;
    derived->notice = source->notice;
    derived->aggregated = source->aggregated;
    derived->sampleWeights = source->sampleWeights; // only inversion keeps them, and it keeps every sample in order
    derived->frames = std::make_shared<const FrameTable>(*shared);
    derived->frameNames = frameDisplayNames(*derived->frames);
    derived->threads = sourceOrdinals(*source->threads, *shared);
    derived->totals = source->sampleWeights ? source->totals : shared->totals();
    derived->profile = std::move(shared);
    derived->original = source;
    return std::shared_ptr<const LoadedProfile>(std::move(derived));
}

} // namespace emberline::engine
