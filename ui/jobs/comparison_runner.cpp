#include "ui/jobs/comparison_runner.h"

#include "engine/import/load_profile.h"
#include "ui/common/logging.h"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

namespace emberline::ui {
namespace {

engine::LoadOutcome loadOne(const QString &path, const std::atomic<bool> *cancel)
{
    engine::PprofReadOptions options;
    options.cancel = cancel;
    // A comparison of files or session folders reads no sample's time: a folder's profile.pprof will do.
    return engine::loadProfile(path, options, engine::SessionTimes::NotNeeded);
}

// The error of one side, with the side named (a message from the reader names the file).
QString sideError(const QString &side, const engine::LoadOutcome &outcome)
{
    return QObject::tr("%1: %2").arg(side, outcome.error);
}

} // namespace

ComparisonRunner::ComparisonRunner(QObject *parent) : QObject(parent) {}

void ComparisonRunner::load(const QString &newPath, const QString &basePath,
                            std::shared_ptr<const engine::LoadedProfile> loadedNew)
{
    m_load.run(
        [newPath, basePath, loadedNew = std::move(loadedNew)](const std::atomic<bool> *cancel) {
            Loaded out;
            // Both files at once: the base on another pool thread, the new one here unless it is already loaded.
            QFuture<engine::LoadOutcome> base =
                QtConcurrent::run([basePath, cancel] { return loadOne(basePath, cancel); });
            engine::LoadOutcome next;
            if (loadedNew)
                next.loaded = loadedNew;
            else
                next = loadOne(newPath, cancel);
            const engine::LoadOutcome baseOutcome = base.result();
            out.cancelled = next.cancelled || baseOutcome.cancelled;
            if (!next.loaded && !next.cancelled)
                out.error = sideError(QObject::tr("New profile"), next);
            else if (!baseOutcome.loaded && !baseOutcome.cancelled)
                out.error = sideError(QObject::tr("Base profile"), baseOutcome);
            out.next = next.loaded;
            out.base = baseOutcome.loaded;
            return out;
        },
        [this](const Loaded &result) {
            if (!result.error.isEmpty()) {
                qCWarning(lcUiLoad).noquote() << result.error;
                Q_EMIT loadFailed(result.error);
            } else if (result.cancelled || !result.next || !result.base) {
                Q_EMIT loadCancelled();
            } else {
                Q_EMIT loaded(result.next, result.base);
            }
        });
}

void ComparisonRunner::requestComparison(engine::ComparisonRequest request)
{
    m_comparison.run(
        [request = std::move(request)](const std::atomic<bool> *cancel) {
            Outcome out;
            auto result = engine::compareProfiles(request, cancel);
            if (result)
                out.comparison = result.value();
            else if (result.error().code == engine::Error::Code::Cancelled)
                out.cancelled = true;
            else
                out.error = QString::fromStdString(result.error().message);
            return out;
        },
        [this](Outcome result) {
            if (result.comparison)
                Q_EMIT comparisonReady(std::move(result.comparison));
            else if (!result.cancelled)
                Q_EMIT comparisonFailed(result.error);
        });
}

void ComparisonRunner::requestCallerCallee(std::shared_ptr<const engine::Comparison> comparison, uint32_t frame)
{
    m_callerCallee.run(
        [comparison = std::move(comparison), frame](const std::atomic<bool> *) {
            return std::make_shared<const engine::DiffCallerCallee>(engine::diffCallerCallee(*comparison, frame));
        },
        [this](std::shared_ptr<const engine::DiffCallerCallee> result) {
            Q_EMIT callerCalleeReady(std::move(result));
        });
}

} // namespace emberline::ui
