#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/heap_summary.h"
#include "engine/live/live_selection.h"
#include "ui/common/latest_job.h"

#include <QWidget>

#include <memory>

class QLabel;
class QTabWidget;
class QTreeWidget;

namespace emberline::ui {

class FunctionsOverTime;

// The heaptrack-like summary of a memory profile, by function (each stack blamed on its leaf-most frame that is not
// an allocator's): a headline (allocated, in use, the fullest flush), then five lists in tabs: peak contributors (what
// each function held at a live session's fullest flush), largest leaks (in use at the end: a session's newest flush, a
// file's snapshot, a finished session's leaks), most allocations, short-lived allocations (allocated often, little of
// it still in use), and the allocations by size class (a profile whose samples tell their blocks' size: Emberline's
// sessions, Go's heap profiles); a live session's summary adds a chart of what its largest holders held at each
// flush's end (FunctionsOverTime). A row's tooltip is the stack that gives it the most. The summary is computed off the
// GUI thread (LatestJob); the newest request's result is shown.
//
// In a live session it follows the views' scope as the flame graph does: the whole session, the last flush or a
// selected range (allocated over the flushes that end in it, in use at the end of the last of them, the fullest of
// them). A scope that ends with the session's last flush shows its in-use values as the leaks, what the programs
// still held when they ended: they come in the live update like every other sample, the hidden threads' left out.
//
// Thread: GUI thread.
class MemorySummaryView : public QWidget {
    Q_OBJECT
public:
    enum List { Peak, Leaks, Allocations, ShortLived, Sizes };
    static constexpr int kOverTimeTab = Sizes + 1; // the tab after the lists

    explicit MemorySummaryView(QWidget *parent = nullptr);

    // A profile opened from a file or a session folder: no peak (one moment is known).
    void showProfile(const std::shared_ptr<const engine::LoadedProfile> &loaded);
    // A live session's scope: `scope` is a live update's profile (its `live` snapshot, weights and overlay) for
    // `selection`.
    void showLive(const std::shared_ptr<const engine::LoadedProfile> &scope, const engine::LiveSelection &selection);
    // The summary shown (null before the first one).
    const std::shared_ptr<const engine::HeapSummary> &summary() const { return m_summary; }
    QTreeWidget *list(List which) const { return m_lists[which]; }
    FunctionsOverTime *overTime() const { return m_overTime; }
    QString headline() const;
    // A size class (blockSizeClass) as the Sizes list names it, by its largest size ("≤ 32 B"), and in full
    // ("17 to 32 bytes").
    static QString sizeClassText(uint8_t sizeClass);
    static QString sizeClassRange(uint8_t sizeClass);
    bool isComputing() const { return m_job.isPending(); }

Q_SIGNALS:
    void summaryShown();

public:
    // What the summary is of, in words.
    struct Shown {
        std::shared_ptr<const engine::HeapSummary> summary;
        QString range;   // "Between 2.0 s and 5.0 s: ", "" for the whole
        QString inUseAt; // "in use at the end of flush 4", "still in use when the program ended"...
        // The half-width of the in-use bytes' 95% sampling range and the flush's whole in-use bytes it is the
        // margin of (shown only when the summary holds all of them: a part has a smaller margin); 0 when not known.
        double inUseMargin = 0;
        int64_t inUseWhole = 0;
        // A live scope's largest holders at its end, what each held at the end of each of its flushes.
        std::vector<engine::FunctionOverTime> overTime;
        int64_t sessionStartNs = 0;
    };

private:
    void setupUi();
    void apply(const Shown &shown);
    void fill(List which, const std::vector<engine::HeapSummaryRow> &rows);
    void fillSizes(const engine::HeapSummary &summary);

    QLabel *m_headline = nullptr;
    QTabWidget *m_tabs = nullptr;
    QTreeWidget *m_lists[5] = {};
    FunctionsOverTime *m_overTime = nullptr;
    std::shared_ptr<const engine::HeapSummary> m_summary;
    LatestJob<Shown> m_job{this};
};

} // namespace emberline::ui
