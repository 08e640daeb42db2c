#pragma once

#include "engine/compare/comparison.h"
#include "ui/common/latest_job.h"

#include <QObject>
#include <QString>

#include <memory>

namespace emberline::ui {

// Runs a compare view's work on the thread pool and hands back immutable results, each through a LatestJob (a
// new request cancels the one before it; a stale result is dropped): loading the two profiles (in parallel, the
// new one skipped when the tab already holds it), the comparison for the chosen sample type, threads and
// normalization, and the callers and callees of the selected function on both sides.
//
// Thread: lives on the GUI thread and emits there; the work runs on pool threads and reads only what it owns.
class ComparisonRunner : public QObject {
    Q_OBJECT
public:
    struct Loaded {
        std::shared_ptr<const engine::LoadedProfile> next;
        std::shared_ptr<const engine::LoadedProfile> base;
        QString error; // names the file that failed
        bool cancelled = false;
    };
    struct Outcome {
        std::shared_ptr<const engine::Comparison> comparison;
        QString error;
        bool cancelled = false;
    };

    explicit ComparisonRunner(QObject *parent = nullptr);

    // `loadedNew`, when given, is the new profile already loaded (a tab's "Compare with…").
    void load(const QString &newPath, const QString &basePath,
              std::shared_ptr<const engine::LoadedProfile> loadedNew = nullptr);
    void cancelLoad() { m_load.cancel(); }
    bool isLoading() const { return m_load.isPending(); }
    void requestComparison(engine::ComparisonRequest request);
    bool isComparing() const { return m_comparison.isPending(); }
    void requestCallerCallee(std::shared_ptr<const engine::Comparison> comparison, uint32_t frame);

Q_SIGNALS:
    void loaded(std::shared_ptr<const engine::LoadedProfile> next, std::shared_ptr<const engine::LoadedProfile> base);
    void loadFailed(const QString &message);
    void loadCancelled();
    void comparisonReady(std::shared_ptr<const engine::Comparison> comparison);
    void comparisonFailed(const QString &message);
    void callerCalleeReady(std::shared_ptr<const engine::DiffCallerCallee> result);

private:
    LatestJob<Loaded> m_load{this};
    LatestJob<Outcome> m_comparison{this};
    LatestJob<std::shared_ptr<const engine::DiffCallerCallee>> m_callerCallee{this};
};

} // namespace emberline::ui
