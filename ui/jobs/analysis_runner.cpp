#include "ui/jobs/analysis_runner.h"

#include "ui/common/logging.h"

#include <QElapsedTimer>

#include <algorithm>

namespace emberline::ui {
namespace {

bool sameShape(const engine::ProfileShape &a, const engine::ProfileShape &b)
{
    return a.inverted == b.inverted &&
           std::equal(a.transforms.begin(), a.transforms.end(), b.transforms.begin(), b.transforms.end(),
                      [](const engine::Transform &x, const engine::Transform &y) {
                          return x.kind == y.kind && x.pattern == y.pattern;
                      });
}

} // namespace

AnalysisRunner::AnalysisRunner(QObject *parent) : QObject(parent) {}

void AnalysisRunner::requestAnalysis(engine::AnalysisRequest request, const engine::ProfileShape &shape)
{
    std::shared_ptr<const engine::LoadedProfile> cached;
    if (!shape.isIdentity() && m_lastShaped.source == request.loaded && sameShape(m_lastShaped.shape, shape))
        cached = m_lastShaped.shaped;
    const auto source = request.loaded;
    m_analysis.run(
        [request = std::move(request), shape, cached](const std::atomic<bool> *cancel) mutable {
            Outcome outcome;
            if (!shape.isIdentity()) {
                QElapsedTimer timer;
                timer.start();
                if (!cached) {
                    auto shaped = engine::deriveProfile(request.loaded, shape, cancel);
                    if (!shaped) {
                        if (shaped.error().code != engine::Error::Code::Cancelled)
                            outcome.error = QString::fromStdString(shaped.error().message);
                        return outcome;
                    }
                    cached = std::move(shaped).value();
                    qCDebug(lcUiAnalysis) << "profile shaped in" << timer.elapsed() << "ms";
                }
                request.loaded = cached;
            }
            outcome.analysis = engine::analyze(request, cancel);
            return outcome;
        },
        [this, source, shape](Outcome outcome) {
            if (!outcome.error.isEmpty()) {
                Q_EMIT analysisFailed(outcome.error);
                return;
            }
            if (!outcome.analysis) // cancelled
                return;
            if (outcome.analysis->loaded->original)
                m_lastShaped = {source, shape, outcome.analysis->loaded};
            Q_EMIT analysisReady(std::move(outcome.analysis));
        });
    Q_EMIT analysisStarted();
}

void AnalysisRunner::requestSandwich(const std::shared_ptr<const engine::Analysis> &analysis, uint32_t frame)
{
    m_sandwich.run(
        [analysis, frame](const std::atomic<bool> *cancel) -> std::shared_ptr<const engine::Sandwich> {
            const engine::LoadedProfile &loaded = *analysis->loaded;
            auto sandwich = engine::buildSandwich(*loaded.profile, *loaded.frames, *analysis->perStack, frame, cancel);
            return sandwich ? std::make_shared<const engine::Sandwich>(std::move(*sandwich)) : nullptr;
        },
        [this, analysis](std::shared_ptr<const engine::Sandwich> sandwich) {
            if (sandwich)
                Q_EMIT sandwichReady(std::move(sandwich), analysis);
        });
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
