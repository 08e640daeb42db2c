#pragma once

#include "engine/model/analysis.h"
#include "ui/jobs/latest_job.h"

#include <QObject>

#include <memory>

namespace emberline::ui {

// Runs a view's derivations on the thread pool and hands back immutable results, each through a LatestJob: a
// new request cancels the one before it, and a stale result that finishes late is dropped.
//
// Thread: lives on the GUI thread and emits there; the work itself runs on pool threads and touches only
// shared immutable inputs.
class AnalysisRunner : public QObject {
    Q_OBJECT
public:
    explicit AnalysisRunner(QObject *parent = nullptr);

    void requestAnalysis(engine::AnalysisRequest request);
    // Drops the analysis under way (its result is no longer wanted).
    void cancelAnalysis() { m_analysis.cancel(); }
    void requestCallerCallee(std::shared_ptr<const engine::LoadedProfile> loaded,
                             std::shared_ptr<const engine::Analysis> analysis, uint32_t frame);
    bool isAnalysing() const { return m_analysis.isPending(); }

Q_SIGNALS:
    void analysisStarted();
    void analysisReady(std::shared_ptr<const engine::Analysis> analysis);
    void callerCalleeReady(std::shared_ptr<const engine::CallerCallee> result);

private:
    LatestJob<std::shared_ptr<const engine::Analysis>> m_analysis{this};
    LatestJob<std::shared_ptr<const engine::CallerCallee>> m_callerCallee{this};
};

} // namespace emberline::ui
