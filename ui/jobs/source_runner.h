#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/derived_profile.h"
#include "engine/annotate/source_listing.h"
#include "ui/common/latest_job.h"

#include <QObject>
#include <QString>

#include <memory>
#include <string>
#include <vector>

namespace emberline::ui {

// What the source view asks for: one function's lines in the samples a view shows.
struct SourceRequest {
    // The view's analysis when its stacks run top-down: its profile and values per stack are used as they are.
    std::shared_ptr<const engine::Analysis> analysis;
    // When the view is inverted, its stacks' leaves are roots, so the lines are counted on `source` through the
    // view's transforms alone, with the view's sample type and filter.
    std::shared_ptr<const engine::LoadedProfile> source;
    std::vector<engine::Transform> transforms;
    engine::Frame frame;
    std::vector<std::string> roots; // source roots, from the settings
};

// Builds a function's source listing on the thread pool (the line table, then the file read from disk), one
// request at a time through a LatestJob: a newer request cancels the one under way, a stale result is dropped.
//
// Thread: lives on the GUI thread and emits there; the work runs on a pool thread over immutable inputs.
class SourceRunner : public QObject {
    Q_OBJECT
public:
    explicit SourceRunner(QObject *parent = nullptr);

    void request(SourceRequest request);
    bool isRunning() const { return m_job.isPending(); }

Q_SIGNALS:
    void listingReady(std::shared_ptr<const emberline::engine::SourceListing> listing, const std::string &unit);
    void failed(const QString &message);

private:
    struct Outcome {
        std::shared_ptr<const engine::SourceListing> listing;
        std::string unit;
        QString error;
        bool cancelled = false;
    };
    LatestJob<std::shared_ptr<const Outcome>> m_job{this};
};

} // namespace emberline::ui
