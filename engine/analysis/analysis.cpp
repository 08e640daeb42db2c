#include "engine/analysis/analysis.h"

#include "engine/common/clock.h"
#include "engine/common/logging.h"
#include "engine/model/python_frame.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>

namespace emberline::engine {

std::shared_ptr<const LoadedProfile> makeLoadedProfile(Profile profile, QString path)
{
    auto loaded = std::make_shared<LoadedProfile>();
    loaded->path = std::move(path);
    loaded->profile = std::make_shared<const Profile>(std::move(profile));
    loaded->frames = std::make_shared<const FrameTable>(*loaded->profile);
    loaded->threads = std::make_shared<const ThreadIndex>(*loaded->profile);
    loaded->totals = loaded->profile->totals();
    loaded->interpreterFrames = hasInterpreterFunctions(*loaded->profile);
    return loaded;
}

std::vector<int64_t> weightedValuesPerStack(const Profile &profile, int sampleType, const std::vector<uint8_t> &mask,
                                            const std::vector<float> &weights, const std::atomic<bool> *cancel)
{
    std::vector<int64_t> perStack(profile.stacks().size(), 0);
    if (sampleType < 0 || static_cast<size_t>(sampleType) >= profile.sampleTypes().size())
        return perStack;
    const auto type = static_cast<size_t>(sampleType);
    for (size_t i = 0; i < profile.sampleCount() && i < weights.size(); ++i) {
        if ((i & 0xffff) == 0 && cancel && cancel->load())
            return perStack;
        if (weights[i] <= 0.0f || (!mask.empty() && !mask[i]))
            continue;
        const auto value = static_cast<double>(profile.sampleValues(i)[type]);
        perStack[profile.sampleStackId(i)] += std::llround(value * weights[i]);
    }
    return perStack;
}

std::vector<int64_t> weightedTotals(const Profile &profile, const std::vector<float> &weights)
{
    std::vector<int64_t> totals(profile.sampleTypes().size(), 0);
    for (size_t i = 0; i < profile.sampleCount() && i < weights.size(); ++i) {
        if (weights[i] <= 0.0f)
            continue;
        const auto values = profile.sampleValues(i);
        for (size_t t = 0; t < totals.size(); ++t)
            totals[t] += std::llround(static_cast<double>(values[t]) * weights[i]);
    }
    return totals;
}

std::vector<int64_t> shownValuesPerStack(const LoadedProfile &loaded, int sampleType, const std::vector<uint8_t> &mask,
                                         const std::atomic<bool> *cancel)
{
    if (loaded.sampleOverlay && loaded.sampleOverlay->covers(sampleType))
        return loaded.sampleOverlay->valuesPerStack(*loaded.profile, sampleType, mask);
    if (loaded.sampleWeights)
        return weightedValuesPerStack(*loaded.profile, sampleType, mask, *loaded.sampleWeights, cancel);
    return valuesPerStack(*loaded.profile, sampleType, mask, cancel);
}

void forEachShownValue(const LoadedProfile &loaded, int sampleType,
                       const std::function<void(uint32_t sample, int64_t value)> &visit,
                       const std::atomic<bool> *cancel)
{
    const Profile &profile = *loaded.profile;
    if (sampleType < 0 || static_cast<size_t>(sampleType) >= profile.sampleTypes().size())
        return;
    const auto type = static_cast<size_t>(sampleType);
    if (const SampleOverlay *overlay = loaded.sampleOverlay.get(); overlay && overlay->covers(sampleType)) {
        const auto c = static_cast<size_t>(overlay->column(sampleType));
        for (size_t k = 0; k < overlay->samples.size(); ++k) {
            const int64_t value = overlay->row(k)[c];
            if (value != 0 && overlay->samples[k] < profile.sampleCount())
                visit(overlay->samples[k], value);
        }
        return;
    }
    const std::vector<float> *weights = loaded.sampleWeights.get();
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        if ((i & 0xffff) == 0 && cancel && cancel->load())
            return;
        int64_t value = profile.sampleValues(i)[type];
        if (weights)
            value = i < weights->size() && (*weights)[i] > 0.0f
                        ? std::llround(static_cast<double>(value) * (*weights)[i])
                        : 0;
        if (value != 0)
            visit(static_cast<uint32_t>(i), value);
    }
}

namespace {

bool sameFrameNames(const FrameTable &a, const FrameTable &b)
{
    if (a.size() != b.size())
        return false;
    for (uint32_t f = 0; f < a.size(); ++f) {
        if (a.frame(f).name != b.frame(f).name)
            return false;
    }
    return true;
}

// The call tree of a transformed profile made from its untransformed analysis's tree, when that analysis fits the
// request: the same sample type and filter, no time-range weights, frame ids that mean the same in both profiles.
std::optional<CallTree> treeFromUntransformed(const AnalysisRequest &request, const std::atomic<bool> *cancel)
{
    const LoadedProfile &loaded = *request.loaded;
    const Analysis *base = request.untransformed.get();
    if (!base || !base->tree || !loaded.original || loaded.transformedBy.empty() || base->loaded != loaded.original ||
        base->sampleType != request.sampleType || loaded.sampleWeights || loaded.original->sampleWeights ||
        loaded.sampleOverlay || loaded.original->liveTrees)
        return std::nullopt;
    const SampleFilter &a = base->filter;
    const SampleFilter &b = request.filter;
    if (a.threads != b.threads || a.startNs != b.startNs || a.endNs != b.endNs)
        return std::nullopt;
    const LoadedProfile &source = *loaded.original;
    if (!sameFrameNames(*source.frames, *loaded.frames))
        return std::nullopt;
    return transformCallTree(*source.profile, *source.frames, *base->tree, loaded.transformedBy, cancel);
}

} // namespace

std::shared_ptr<const Analysis> analyze(const AnalysisRequest &request, const std::atomic<bool> *cancel)
{
    QElapsedTimer timer;
    timer.start();
    const int64_t cpuStartNs = clockNs(CLOCK_THREAD_CPUTIME_ID);
    const LoadedProfile &loaded = *request.loaded;
    const Profile &profile = *loaded.profile;
    auto analysis = std::make_shared<Analysis>();
    analysis->loaded = request.loaded;
    analysis->sampleType = request.sampleType;
    analysis->filter = request.filter;
    if (request.sampleType >= 0 && static_cast<size_t>(request.sampleType) < profile.sampleTypes().size())
        analysis->unit = profile.str(profile.sampleTypes()[static_cast<size_t>(request.sampleType)].unit);

    const std::vector<uint8_t> mask = selectSamples(profile, loaded.threads.get(), request.filter);
    analysis->keptSamples =
        mask.empty() ? profile.sampleCount() : static_cast<size_t>(std::count(mask.begin(), mask.end(), uint8_t(1)));
    // A live session's whole, unfiltered profile: its values per stack are kept by the session as it goes.
    const LiveSnapshot *live = loaded.live.get();
    const std::span<const int64_t> liveValues = live && !loaded.sampleWeights && !loaded.sampleOverlay && mask.empty()
                                                    ? live->stackValues(request.sampleType)
                                                    : std::span<const int64_t>{};
    const bool wholeSession = loaded.liveTrees && live && liveValues.size() == profile.stacks().size();
    if (wholeSession) {
        analysis->perStack = live->sharedStackValues(request.sampleType);
    } else {
        analysis->perStack =
            std::make_shared<const std::vector<int64_t>>(shownValuesPerStack(loaded, request.sampleType, mask, cancel));
    }
    if (cancel && cancel->load())
        return nullptr;
    const std::span<const int64_t> perStack = *analysis->perStack;
    const qint64 valuesMs = timer.elapsed();

    std::shared_ptr<const CallTree> tree;
    std::optional<FunctionTable> functions;
    size_t walked = perStack.size();
    if (loaded.liveTrees) {
        std::lock_guard lock(loaded.liveTrees->mutex);
        LiveTrees::Tree &entry = loaded.liveTrees->bySampleType[request.sampleType];
        std::optional<std::vector<uint32_t>> changed;
        if (wholeSession && entry.wholeSessionAt != kNoIndex && entry.wholeSessionAt <= live->flushes) {
            changed = live->stacksChangedSince(entry.wholeSessionAt);
            walked = changed->size();
        }
        tree = entry.updater.update(profile, *loaded.frames, perStack, changed ? &*changed : nullptr);
        entry.wholeSessionAt = wholeSession ? live->flushes : kNoIndex;
        functions = FunctionTable::fromFrameTotals(*loaded.frames, entry.updater.frameSelf(),
                                                   entry.updater.frameTotal(), tree->total());
    } else if (auto mapped = treeFromUntransformed(request, cancel)) {
        tree = std::make_shared<const CallTree>(std::move(*mapped));
        walked = 0;
    } else if (auto built = CallTree::build(profile, *loaded.frames, perStack, cancel)) {
        tree = std::make_shared<const CallTree>(std::move(*built));
    }
    if (!tree || (cancel && cancel->load()))
        return nullptr;
    const qint64 treeMs = timer.elapsed();

    if (!functions)
        functions = FunctionTable::fromCallTree(*tree, *loaded.frames);
    const qint64 functionsMs = timer.elapsed();
    analysis->tree = std::move(tree);
    analysis->functions = std::make_shared<const FunctionTable>(std::move(*functions));
    qCDebug(lcModel) << "analysis of" << loaded.path << "type" << request.sampleType << "in" << timer.elapsed() << "ms,"
                     << analysis->tree->size() << "nodes," << walked << "stacks read (values" << valuesMs << "ms, tree"
                     << treeMs - valuesMs << "ms, functions" << functionsMs - treeMs << "ms;"
                     << (clockNs(CLOCK_THREAD_CPUTIME_ID) - cpuStartNs) / 1'000'000 << "ms on CPU)";
    return analysis;
}

} // namespace emberline::engine
