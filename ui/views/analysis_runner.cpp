#include "ui/views/analysis_runner.h"

#include "ui/logging.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

namespace emberline::ui {

AnalysisRunner::AnalysisRunner(QObject *parent) : QObject(parent) {}

AnalysisRunner::~AnalysisRunner()
{
    // Running work owns its inputs (shared pointers), so it may finish after this object is gone; it only
    // needs telling that nobody waits for it.
    if (m_cancel)
        m_cancel->store(true);
}

void AnalysisRunner::requestAnalysis(AnalysisRequest request)
{
    if (m_cancel)
        m_cancel->store(true);
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const uint64_t generation = ++m_analysisGeneration;
    m_analysisPending = true;
    Q_EMIT analysisStarted();

    auto *watcher = new QFutureWatcher<std::shared_ptr<const Analysis>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_analysisGeneration) {
            qCDebug(lcUiAnalysis) << "dropping stale analysis" << generation;
            return;
        }
        m_analysisPending = false;
        auto result = watcher->result();
        if (result)
            Q_EMIT analysisReady(std::move(result));
    });
    watcher->setFuture(QtConcurrent::run(
        [request = std::move(request), cancel = m_cancel] { return analyze(request, cancel.get()); }));
}

void AnalysisRunner::requestCallerCallee(std::shared_ptr<const LoadedProfile> loaded,
                                         std::shared_ptr<const Analysis> analysis, uint32_t frame)
{
    const uint64_t generation = ++m_callerGeneration;
    auto *watcher = new QFutureWatcher<std::shared_ptr<const engine::CallerCallee>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation == m_callerGeneration)
            Q_EMIT callerCalleeReady(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([loaded = std::move(loaded), analysis = std::move(analysis), frame] {
        return std::make_shared<const engine::CallerCallee>(
            engine::computeCallerCallee(*loaded->profile, *loaded->frames, *analysis->perStack, frame));
    }));
}

} // namespace emberline::ui
