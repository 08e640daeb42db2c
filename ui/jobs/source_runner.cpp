#include "ui/jobs/source_runner.h"

#include "ui/common/logging.h"

#include <QElapsedTimer>

namespace emberline::ui {

SourceRunner::SourceRunner(QObject *parent) : QObject(parent) {}

void SourceRunner::request(SourceRequest request)
{
    m_job.run(
        [request = std::move(request)](const std::atomic<bool> *cancel) {
            QElapsedTimer timer;
            timer.start();
            auto outcome = std::make_shared<Outcome>();
            const auto fail = [&](const engine::Error &error) {
                outcome->cancelled = error.code == engine::Error::Code::Cancelled;
                outcome->error = QString::fromStdString(error.message);
                return std::shared_ptr<const Outcome>(std::move(outcome));
            };
            const engine::Analysis &analysis = *request.analysis;
            std::shared_ptr<const engine::LoadedProfile> loaded = analysis.loaded;
            std::shared_ptr<const std::vector<int64_t>> perStack = analysis.perStack;
            if (request.source) {
                auto topDown = engine::deriveProfile(request.source, {request.transforms, false}, cancel);
                if (!topDown)
                    return fail(topDown.error());
                loaded = topDown.value();
                const auto mask = engine::selectSamples(*loaded->profile, loaded->threads.get(), analysis.filter);
                perStack = std::make_shared<const std::vector<int64_t>>(
                    engine::valuesPerStack(*loaded->profile, analysis.sampleType, mask, cancel));
            }
            const engine::SourceLocator locator(request.roots);
            auto listing = engine::buildSourceListing(*loaded->profile, *perStack, request.frame, locator, cancel);
            if (!listing)
                return fail(listing.error());
            outcome->unit = analysis.unit;
            outcome->listing = std::make_shared<const engine::SourceListing>(std::move(listing).value());
            qCDebug(lcUiAnalysis) << "source listing of" << request.frame.name.c_str() << "in" << timer.elapsed()
                                  << "ms";
            return std::shared_ptr<const Outcome>(std::move(outcome));
        },
        [this](const std::shared_ptr<const Outcome> &outcome) {
            if (outcome->cancelled)
                return;
            if (outcome->listing)
                Q_EMIT listingReady(outcome->listing, outcome->unit);
            else
                Q_EMIT failed(outcome->error);
        });
}

} // namespace emberline::ui
