#include "ui/jobs/heatmap_runner.h"

#include "ui/common/logging.h"

#include <QElapsedTimer>

namespace emberline::ui {

HeatmapRunner::HeatmapRunner(QObject *parent) : QObject(parent) {}

void HeatmapRunner::request(std::shared_ptr<const engine::LoadedProfile> loaded, engine::HeatmapRequest request)
{
    m_job.run(
        [loaded = std::move(loaded), request = std::move(request)](const std::atomic<bool> *cancel) {
            QElapsedTimer timer;
            timer.start();
            auto result = std::make_shared<HeatmapResult>();
            const engine::Profile &profile = *loaded->profile;
            auto heatmap = engine::profileHeatmap(profile, loaded->threads.get(), request, cancel);
            if (!heatmap) {
                result->cancelled = heatmap.error().code == engine::Error::Code::Cancelled;
                result->error = QString::fromStdString(heatmap.error().message);
                return std::shared_ptr<const HeatmapResult>(std::move(result));
            }
            const bool byType =
                request.sampleType >= 0 && static_cast<size_t>(request.sampleType) < profile.sampleTypes().size();
            result->unit = byType ? profile.str(profile.sampleTypes()[request.sampleType].unit) : "count";
            result->heatmap = std::make_shared<const engine::Heatmap>(std::move(heatmap).value());
            qCDebug(lcUiAnalysis) << "heatmap of" << profile.sampleCount() << "samples in" << timer.elapsed()
                                  << "ms:" << result->heatmap->columns() << "seconds,"
                                  << result->heatmap->timedSamples() << "samples placed," << result->heatmap->untimed()
                                  << "without a timestamp";
            return std::shared_ptr<const HeatmapResult>(std::move(result));
        },
        [this](const std::shared_ptr<const HeatmapResult> &result) {
            if (result->cancelled)
                return;
            if (result->heatmap)
                Q_EMIT heatmapReady(result->heatmap, result->unit);
            else
                Q_EMIT failed(result->error);
        });
}

} // namespace emberline::ui
