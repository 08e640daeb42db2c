#pragma once

#include "engine/live/live_selection.h"
#include "engine/session/profiling_session.h"

#include <QElapsedTimer>
#include <QWidget>

#include <map>
#include <memory>
#include <optional>
#include <utility>

class QComboBox;
class QLabel;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTabWidget;

namespace emberline::ui {

using engine::LiveScope;

class HealthView;
class HeatmapPanel;
class CompareExplorer;
class MemoryChart;
class MemorySummaryView;
class ProfileExplorer;
class ProfileLoader;
class SessionStatusBar;
class SessionUpload;
class TimelineView;

// One live session in a tab: Stop, Pause and Resume, a switch between the whole session so far, the last flush
// and a selected time range, the live numbers, the timelines and, once the first flush is in, the same
// explorer (flame graph, top functions, caller/callee) that files open in, refreshed after every flush without
// losing the user's zoom, selection or search. Beside the timelines, a tab holds the sub-second heatmap, which
// grows with each flush; a range dragged on it selects that range as the timelines do, and a second one (Shift)
// compares the two (rangesCompared). When the session ends (stopped, target exited or crashed, or
// failed) the views keep everything and a message says what happened; the session's folder can then be saved
// elsewhere or its merged profile opened in the viewer. A session started with upload on also has an Upload
// tab beside the explorer: every flush's upload and the uploader's counts (live_session_upload.cpp). A session
// that profiles memory has a Memory tab beside the timelines (live_session_memory.cpp): the live heap and the
// program's resident memory over time, where a dragged range selects as on the timelines, and beside it the
// summary of the session's memory (peak, leaks, most and short-lived allocations).
//
// Everything a flush changes arrives in one LiveUpdate from the session's live stage (engine/stage/live_stage.h),
// derived and analysed off this thread; the view only applies it. Scope, range, hidden threads and the explorer's
// sample type go back to the stage as one request, and an update that answers an older request than the latest
// is not shown (a newer one follows).
//
// Compare (live_session_compare.cpp): off, with the previous flush, or with a pinned baseline (a flush, a time
// range or a file, loaded off this thread). In a compare mode the stage publishes a comparison with every flush
// and a CompareExplorer takes the explorer's place. Shift+drag on the timeline compares the dragged range with the
// range selected before (compareRanges).
//
// Thread: GUI thread. It owns the ProfilingSession (the engine threads, the live stage's among them).
class LiveSessionView : public QWidget {
    Q_OBJECT
public:
    explicit LiveSessionView(engine::ProfilingSession *session, QWidget *parent = nullptr);
    ~LiveSessionView() override;

    engine::ProfilingSession *session() const { return m_session; }
    ProfileExplorer *explorer() const { return m_explorer; }
    TimelineView *timeline() const { return m_timeline; }
    HeatmapPanel *heatmap() const { return m_heatmap; }
    HealthView *health() const { return m_health; }
    // The Memory tab's chart; null unless the session profiles memory.
    MemoryChart *memoryChart() const { return m_memoryChart; }
    MemorySummaryView *memorySummary() const { return m_memorySummary; }
    // The newest update shown (null before the first flush).
    const std::shared_ptr<const engine::LiveUpdate> &lastUpdate() const { return m_lastUpdate; }
    QString title() const;
    QString sessionDirectory() const { return m_session->outputDirectory(); }
    QString message() const;
    bool isActive() const { return m_session->isActive(); }
    LiveScope scope() const { return m_request.scope; }
    // What the views last asked of the live stage.
    const engine::LiveViewRequest &request() const { return m_request; }
    // A request (scope, range, threads, sample type) is still being answered by the live stage.
    bool isUpdating() const { return (m_lastUpdate ? m_lastUpdate->generation : 0) < m_requestGeneration; }

    void stop();
    // The timelines (with the heatmap, health and memory tabs) shrink to their tab bar, a strip, and the flame
    // graph takes the room; a click on a tab or this again brings them back. Remembered with the splitter.
    void setTimelinesCollapsed(bool collapsed);
    bool timelinesCollapsed() const { return m_timelinesCollapsed; }
    QSplitter *splitter() const { return m_splitter; }
    void setScope(LiveScope scope);
    void selectRange(int64_t startNs, int64_t endNs);

    // Compare modes (live_session_compare.cpp).
    CompareExplorer *compareExplorer() const { return m_compareExplorer; }
    engine::LiveCompareMode compareMode() const { return m_request.compare.mode; }
    void compareOff();
    void compareWithPreviousFlush();
    // Pins the flush of this sequence, a time range of the session, or a pprof file (loaded on the pool first)
    // as the baseline the view's scope is compared with.
    void pinBaselineFlush(uint32_t sequence);
    void pinBaselineRange(int64_t startNs, int64_t endNs);
    void pinBaselineFile(const QString &path);
    // Range B against range A: the scope becomes B, the baseline A. What a second selection on a timeline (Shift+
    // drag, or the heatmap's rangesCompared) calls.
    void compareRanges(int64_t startA, int64_t endA, int64_t startB, int64_t endB);
    // Takes ownership of the session's uploader and shows its Upload tab.
    void attachUpload(SessionUpload *upload);
    SessionUpload *upload() const { return m_upload; }
    // Copies the session's folder (every flush and the merged profile) into `directory`; an error message or "".
    QString saveSessionTo(const QString &directory) const;

Q_SIGNALS:
    // The flame graph, the tables and the timelines show the state after flush `sequence`, latencyMs after the
    // exporter handed it to the live stage.
    void viewsUpdated(uint32_t sequence, double latencyMs);
    void sessionEnded();
    void openProfileRequested(const QString &path);
    void titleChanged();
    // Two time ranges chosen on the heatmap to compare, [startNs, endNs) each: the hook of a differential view.
    void rangesCompared(emberline::engine::TimeRange a, emberline::engine::TimeRange b);

protected:
    void showEvent(QShowEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void setupUi();
    QWidget *createToolbar();
    void connectSignals();
    void onLiveUpdate(const std::shared_ptr<const engine::LiveUpdate> &update);
    void onFlush(const engine::Flush &flush);
    void applyUpdate(const std::shared_ptr<const engine::LiveUpdate> &update);
    void sendRequest();
    void warmUpExplorer();
    void onAnalysisApplied();
    void reportShownIfComplete();
    void onFinished(const engine::SessionSummary &summary);
    void onFailed(const QString &message);
    void showMessage(const QString &text, bool problem);
    void showHealth(std::shared_ptr<const engine::UnwindHealth> health);
    void updateHealthTab();
    void updateButtons();
    void createTimelineCorner();
    void collapseTimelines(bool collapsed);
    // The height of the timelines' tab row (the tabs and the corner button): what a collapsed pane keeps.
    int timelineStripHeight() const;
    void restoreSplitter();
    void saveSplitter();
    void chooseSaveDirectory();
    void updateUploadCounts();
    QWidget *createCompareControls(QWidget *bar);
    void connectCompareSignals();
    void onCompareChosen(int index);
    void setCompare(engine::LiveCompareRequest compare);
    void applyComparison(const engine::LiveUpdate &update);
    void showExplorerForMode(engine::LiveCompareMode mode);
    // The Memory tab (live_session_memory.cpp).
    void createMemoryTab();
    void connectMemorySignals();
    void updateMemory(const engine::LiveUpdate &update);
    void onComparedRangeSelected(int64_t startNs, int64_t endNs);
    // The selected range and range A of a comparison, on every chart of the session's time.
    void showSelection(std::optional<std::pair<int64_t, int64_t>> range);
    void showComparedRange(std::optional<std::pair<int64_t, int64_t>> range);

    engine::ProfilingSession *m_session = nullptr;
    engine::LiveViewRequest m_request;
    uint64_t m_requestGeneration = 0; // of the latest request sent to the stage
    std::shared_ptr<const engine::LiveUpdate> m_lastUpdate;
    ProfileExplorer *m_explorer = nullptr;     // null until the first flush is shown
    ProfileExplorer *m_warmExplorer = nullptr; // built before the session starts, adopted by the first flush
    TimelineView *m_timeline = nullptr;
    HeatmapPanel *m_heatmap = nullptr;
    HealthView *m_health = nullptr;
    MemoryChart *m_memoryChart = nullptr;
    MemorySummaryView *m_memorySummary = nullptr;
    uint32_t m_memorySummaryFlushes = 0;        // the flush count of the snapshot the summary was asked for
    engine::LiveSelection m_memorySummaryScope; // and the scope
    QTabWidget *m_timelineTabs = nullptr;
    SessionStatusBar *m_status = nullptr;
    QLabel *m_message = nullptr;
    QStackedWidget *m_explorerStack = nullptr;
    QLabel *m_waiting = nullptr;
    QSplitter *m_splitter = nullptr;
    QPushButton *m_collapseTimelines = nullptr;
    bool m_timelinesCollapsed = false;
    QList<int> m_expandedSizes; // the splitter's sizes before the timelines were collapsed
    // Sizes are known once the view is first laid out: the remembered collapse (or a tab too short for the
    // timelines) is applied then.
    bool m_laidOut = false;
    bool m_collapseWhenLaidOut = false;
    QPushButton *m_stop = nullptr;
    QPushButton *m_pause = nullptr;
    QPushButton *m_resume = nullptr;
    QComboBox *m_scope = nullptr;
    QComboBox *m_compare = nullptr;
    CompareExplorer *m_compareExplorer = nullptr;
    ProfileLoader *m_baselineLoader = nullptr;
    QPushButton *m_save = nullptr;
    QPushButton *m_openProfile = nullptr;
    bool m_hasRange = false;
    int64_t m_rangeStart = 0;
    int64_t m_rangeEnd = 0;

    std::map<uint32_t, int64_t> m_flushArrivalNs; // CLOCK_MONOTONIC, by flush sequence, until the views show it
    std::shared_ptr<const engine::LoadedProfile> m_shownLoaded;
    uint32_t m_shownSequence = 0;
    bool m_analysisShown = false; // of m_shownSequence
    bool m_timelineShown = false;
    SessionUpload *m_upload = nullptr;
    QLabel *m_uploadCounts = nullptr;
};

} // namespace emberline::ui
