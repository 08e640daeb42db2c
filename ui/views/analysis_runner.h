#pragma once

#include "ui/views/profile_analysis.h"

#include <QObject>

#include <atomic>
#include <memory>

namespace emberline::ui {

// Runs a view's derivations on the thread pool (QtConcurrent) and hands back immutable results. Every new
// request cancels the one before it (its atomic flag) and bumps a generation number, so a stale result that
// finishes late is dropped instead of overwriting a newer one.
//
// Thread: lives on the GUI thread and emits there; the work itself runs on pool threads and touches only
// shared immutable inputs.
class AnalysisRunner : public QObject {
    Q_OBJECT
public:
    explicit AnalysisRunner(QObject *parent = nullptr);
    ~AnalysisRunner() override;

    void requestAnalysis(AnalysisRequest request);
    void requestCallerCallee(std::shared_ptr<const LoadedProfile> loaded, std::shared_ptr<const Analysis> analysis,
                             uint32_t frame);
    bool isAnalysing() const { return m_analysisPending; }

Q_SIGNALS:
    void analysisStarted();
    void analysisReady(std::shared_ptr<const Analysis> analysis);
    void callerCalleeReady(std::shared_ptr<const engine::CallerCallee> result);

private:
    uint64_t m_analysisGeneration = 0;
    uint64_t m_callerGeneration = 0;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    bool m_analysisPending = false;
};

} // namespace emberline::ui
