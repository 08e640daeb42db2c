#include "ui/views/profile_analysis.h"

#include "engine/common/clock.h"
#include "engine/pprof/session_folder.h"
#include "ui/logging.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <algorithm>
#include <cmath>

namespace emberline::ui {

namespace {

// A session folder: its profile.pprof, or its flushes merged when that is missing or broken; `notice` says so.
engine::Result<engine::Profile> readFolder(const QString &path, const engine::PprofReadOptions &options,
                                           QString &notice)
{
    auto folder = engine::readSessionFolder(path.toStdString(), options);
    if (!folder)
        return folder.error();
    QStringList notes;
    if (folder->fromFlushes)
        notes << QObject::tr("Merged from %1 flush file(s): %2")
                     .arg(folder->flushesMerged)
                     .arg(QString::fromStdString(folder->sessionProfileProblem));
    for (const std::string &skipped : folder->skipped)
        notes << QObject::tr("Skipped %1").arg(QString::fromStdString(skipped));
    notice = notes.join(QStringLiteral("; "));
    return std::move(folder->profile);
}

} // namespace

LoadOutcome loadProfile(const QString &path, const engine::PprofReadOptions &options)
{
    LoadOutcome outcome;
    QElapsedTimer timer;
    timer.start();
    QString notice;
    auto result = QFileInfo(path).isDir() ? readFolder(path, options, notice)
                                          : engine::readPprofFile(path.toStdString(), options);
    if (!result) {
        if (result.error().code == engine::Error::Code::Cancelled)
            outcome.cancelled = true;
        else
            outcome.error = QString::fromStdString(result.error().message);
        return outcome;
    }
    auto profile = std::make_shared<const engine::Profile>(std::move(result).value());
    auto loaded = std::make_shared<LoadedProfile>();
    loaded->path = path;
    loaded->notice = notice;
    loaded->frames = std::make_shared<const engine::FrameTable>(*profile);
    loaded->threads = std::make_shared<const engine::ThreadIndex>(*profile);
    loaded->frameNames = FlameGraphLayout::frameNames(*loaded->frames);
    loaded->totals = profile->totals();
    loaded->profile = std::move(profile);
    qCDebug(lcUiLoad) << "loaded" << path << "in" << timer.elapsed() << "ms";
    outcome.loaded = std::move(loaded);
    return outcome;
}

std::vector<int64_t> weightedValuesPerStack(const engine::Profile &profile, int sampleType,
                                            const std::vector<uint8_t> &mask, const std::vector<float> &weights,
                                            const std::atomic<bool> *cancel)
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

std::vector<int64_t> weightedTotals(const engine::Profile &profile, const std::vector<float> &weights)
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

std::shared_ptr<const Analysis> analyze(const AnalysisRequest &request, const std::atomic<bool> *cancel)
{
    QElapsedTimer timer;
    timer.start();
    const int64_t cpuStartNs = engine::clockNs(CLOCK_THREAD_CPUTIME_ID);
    const LoadedProfile &loaded = *request.loaded;
    const engine::Profile &profile = *loaded.profile;
    auto analysis = std::make_shared<Analysis>();
    analysis->loaded = request.loaded;
    analysis->sampleType = request.sampleType;
    analysis->filter = request.filter;
    if (request.sampleType >= 0 && static_cast<size_t>(request.sampleType) < profile.sampleTypes().size())
        analysis->unit = profile.str(profile.sampleTypes()[static_cast<size_t>(request.sampleType)].unit);

    const std::vector<uint8_t> mask = engine::selectSamples(profile, loaded.threads.get(), request.filter);
    analysis->keptSamples = mask.empty() ? profile.sampleCount()
                                         : static_cast<size_t>(std::count(mask.begin(), mask.end(), uint8_t(1)));
    // A live session's whole, unfiltered profile: its values per stack are kept by the session as it goes.
    const engine::LiveSnapshot *live = loaded.live.get();
    const std::span<const int64_t> liveValues =
        live && !loaded.sampleWeights && mask.empty() ? live->stackValues(request.sampleType)
                                                      : std::span<const int64_t>{};
    const bool wholeSession = loaded.liveTrees && live && liveValues.size() == profile.stacks().size();
    if (wholeSession) {
        analysis->perStack = std::shared_ptr<const std::vector<int64_t>>(
            live->columns, &live->columns->stackValues[static_cast<size_t>(request.sampleType)]);
    } else {
        analysis->perStack = std::make_shared<const std::vector<int64_t>>(
            loaded.sampleWeights
                ? weightedValuesPerStack(profile, request.sampleType, mask, *loaded.sampleWeights, cancel)
                : engine::valuesPerStack(profile, request.sampleType, mask, cancel));
    }
    if (cancel && cancel->load())
        return nullptr;
    const std::span<const int64_t> perStack = *analysis->perStack;
    const qint64 valuesMs = timer.elapsed();

    std::optional<engine::CallTree> tree;
    std::optional<engine::FunctionTable> functions;
    size_t walked = perStack.size();
    if (loaded.liveTrees) {
        std::lock_guard lock(loaded.liveTrees->mutex);
        LiveTrees::Tree &entry = loaded.liveTrees->bySampleType[request.sampleType];
        std::optional<std::vector<uint32_t>> changed;
        if (wholeSession && entry.wholeSessionAt != engine::kNoIndex && entry.wholeSessionAt <= live->flushes) {
            changed = live->stacksChangedSince(entry.wholeSessionAt);
            walked = changed->size();
        }
        tree = entry.updater.update(profile, *loaded.frames, perStack, changed ? &*changed : nullptr);
        entry.wholeSessionAt = wholeSession ? live->flushes : engine::kNoIndex;
        functions = engine::FunctionTable::fromFrameTotals(*loaded.frames, entry.updater.frameSelf(),
                                                           entry.updater.frameTotal(), tree->total());
    } else {
        tree = engine::CallTree::build(profile, *loaded.frames, perStack, cancel);
    }
    if (!tree || (cancel && cancel->load()))
        return nullptr;
    const qint64 treeMs = timer.elapsed();

    if (!functions)
        functions = engine::FunctionTable::fromCallTree(*tree, *loaded.frames);
    const qint64 functionsMs = timer.elapsed();
    analysis->tree = std::make_shared<const engine::CallTree>(std::move(*tree));
    analysis->functions = std::make_shared<const engine::FunctionTable>(std::move(*functions));
    qCDebug(lcUiAnalysis) << "analysis of" << loaded.path << "type" << request.sampleType << "in"
                          << timer.elapsed() << "ms," << analysis->tree->size() << "nodes," << walked
                          << "stacks read (values" << valuesMs << "ms, tree" << treeMs - valuesMs << "ms, functions"
                          << functionsMs - treeMs << "ms;"
                          << (engine::clockNs(CLOCK_THREAD_CPUTIME_ID) - cpuStartNs) / 1'000'000 << "ms on CPU)";
    return analysis;
}

} // namespace emberline::ui
