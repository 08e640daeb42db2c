#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/heatmap.h"
#include "ui/common/latest_job.h"

#include <QObject>
#include <QString>

#include <memory>
#include <string>
#include <vector>

namespace emberline::ui {

// What a heatmap job gives back: the heatmap with the unit of its values, or why there is none.
struct HeatmapResult {
    std::shared_ptr<const engine::Heatmap> heatmap;
    std::string unit;
    QString error;
    bool cancelled = false;
};

// Buckets a loaded profile's samples into its sub-second heatmap on the thread pool (engine::profileHeatmap, a
// walk over every sample), one request at a time through a LatestJob: a new request (another sample type or
// thread set) cancels the one under way and a late stale result is dropped.
//
// Thread: lives on the GUI thread and emits there; the work runs on a pool thread over the immutable profile.
class HeatmapRunner : public QObject {
    Q_OBJECT
public:
    explicit HeatmapRunner(QObject *parent = nullptr);

    void request(std::shared_ptr<const engine::LoadedProfile> loaded, engine::HeatmapRequest request);
    bool isRunning() const { return m_job.isPending(); }

Q_SIGNALS:
    void heatmapReady(std::shared_ptr<const emberline::engine::Heatmap> heatmap, const std::string &unit);
    void failed(const QString &message);

private:
    LatestJob<std::shared_ptr<const HeatmapResult>> m_job{this};
};

} // namespace emberline::ui
