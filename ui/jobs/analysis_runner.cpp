#include "ui/jobs/analysis_runner.h"

namespace emberline::ui {

AnalysisRunner::AnalysisRunner(QObject *parent) : QObject(parent) {}

void AnalysisRunner::requestAnalysis(engine::AnalysisRequest request)
{
    m_analysis.run(
        [request = std::move(request)](const std::atomic<bool> *cancel) { return engine::analyze(request, cancel); },
        [this](std::shared_ptr<const engine::Analysis> result) {
            if (result) // null when cancelled
                Q_EMIT analysisReady(std::move(result));
        });
    Q_EMIT analysisStarted();
}

void AnalysisRunner::requestCallerCallee(std::shared_ptr<const engine::LoadedProfile> loaded,
                                         std::shared_ptr<const engine::Analysis> analysis, uint32_t frame)
{
    m_callerCallee.run(
        [loaded = std::move(loaded), analysis = std::move(analysis), frame](const std::atomic<bool> *) {
            return std::make_shared<const engine::CallerCallee>(
                engine::computeCallerCallee(*loaded->profile, *loaded->frames, *analysis->perStack, frame));
        },
        [this](std::shared_ptr<const engine::CallerCallee> result) { Q_EMIT callerCalleeReady(std::move(result)); });
}

} // namespace emberline::ui
