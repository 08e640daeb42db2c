#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/derived_profile.h"
#include "engine/analysis/sandwich.h"
#include "ui/common/latest_job.h"

#include <QObject>
#include <QString>

#include <memory>

namespace emberline::ui {

// Runs a view's derivations on the thread pool and hands back immutable results, each through a LatestJob: a
// new request cancels the one before it, and a stale result that finishes late is dropped. An analysis through
// a shape (transforms, bottom-up) first derives the shaped profile (deriveProfile), then analyses that; the
// last shaped profile is kept, so that another sample type or thread set does not transform it again.
//
// Thread: lives on the GUI thread and emits there; the work itself runs on pool threads and touches only
// shared immutable inputs.
class AnalysisRunner : public QObject {
    Q_OBJECT
public:
    explicit AnalysisRunner(QObject *parent = nullptr);

    // `request.loaded` is the profile as loaded; the analysis's `loaded` is the shaped one (its `original` is
    // request.loaded) unless the shape changes nothing.
    void requestAnalysis(engine::AnalysisRequest request, const engine::ProfileShape &shape = {});
    // Drops the analysis under way (its result is no longer wanted).
    void cancelAnalysis() { m_analysis.cancel(); }
    void requestCallerCallee(std::shared_ptr<const engine::LoadedProfile> loaded,
                             std::shared_ptr<const engine::Analysis> analysis, uint32_t frame);
    bool isAnalysing() const { return m_analysis.isPending(); }
    // The callers and callees of a frame of the analysis's profile.
    void requestSandwich(const std::shared_ptr<const engine::Analysis> &analysis, uint32_t frame);
    bool isBuildingSandwich() const { return m_sandwich.isPending(); }

Q_SIGNALS:
    void analysisStarted();
    void analysisReady(std::shared_ptr<const engine::Analysis> analysis);
    // The shape could not be applied: a chain that leaves no sample, a pattern that does not compile.
    void analysisFailed(const QString &message);
    void callerCalleeReady(std::shared_ptr<const engine::CallerCallee> result);
    void sandwichReady(std::shared_ptr<const engine::Sandwich> sandwich,
                       std::shared_ptr<const engine::Analysis> analysis);

private:
    struct Outcome {
        std::shared_ptr<const engine::Analysis> analysis;
        QString error;
    };
    struct Shaped {
        std::shared_ptr<const engine::LoadedProfile> source;
        engine::ProfileShape shape;
        std::shared_ptr<const engine::LoadedProfile> shaped;
    };
    LatestJob<Outcome> m_analysis{this};
    LatestJob<std::shared_ptr<const engine::CallerCallee>> m_callerCallee{this};
    LatestJob<std::shared_ptr<const engine::Sandwich>> m_sandwich{this};
    Shaped m_lastShaped;
};

} // namespace emberline::ui
