#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/heap_summary.h"
#include "ui/common/latest_job.h"

#include <QWidget>

#include <memory>

class QLabel;
class QTabWidget;
class QTreeWidget;

namespace emberline::ui {

// The heaptrack-like summary of a memory profile, by function (each stack blamed on its leaf-most frame that is not
// an allocator's): a headline (allocated, in use, the peak), then four lists in tabs: peak contributors (what each
// function held at a live session's peak flush), largest leaks (in use at the end: a session's newest flush, a file's
// snapshot, a finished session's leaks), most allocations, and short-lived allocations (allocated often, little of it
// still in use). A row's tooltip is the stack that gives it the most. The summary is computed off the GUI thread
// (LatestJob); the newest request's result is shown.
//
// Thread: GUI thread.
class MemorySummaryView : public QWidget {
    Q_OBJECT
public:
    enum List { Peak, Leaks, Allocations, ShortLived };

    explicit MemorySummaryView(QWidget *parent = nullptr);

    // A profile opened from a file or a session folder: no peak (one moment is known).
    void showProfile(const std::shared_ptr<const engine::LoadedProfile> &loaded);
    // A live session: allocations so far, in use at its newest flush, and its peak flush.
    void showLive(const std::shared_ptr<const engine::LiveSnapshot> &snapshot,
                  const std::shared_ptr<const engine::FrameTable> &frames);
    // The summary shown (null before the first one).
    const std::shared_ptr<const engine::HeapSummary> &summary() const { return m_summary; }
    QTreeWidget *list(List which) const { return m_lists[which]; }
    QString headline() const;
    bool isComputing() const { return m_job.isPending(); }

Q_SIGNALS:
    void summaryShown();

private:
    void setupUi();
    void apply(std::shared_ptr<const engine::HeapSummary> summary);
    void fill(List which, const std::vector<engine::HeapSummaryRow> &rows);

    QLabel *m_headline = nullptr;
    QTabWidget *m_tabs = nullptr;
    QTreeWidget *m_lists[4] = {};
    std::shared_ptr<const engine::HeapSummary> m_summary;
    LatestJob<std::shared_ptr<const engine::HeapSummary>> m_job{this};
};

} // namespace emberline::ui
