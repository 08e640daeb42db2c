#pragma once

#include "engine/live/live_selection.h"
#include "ui/timeline/time_axis.h"

#include <QList>
#include <QPointF>
#include <QWidget>

#include <map>
#include <memory>
#include <optional>

class QChart;
class QLabel;
class QTimer;
class QLineSeries;
class QListView;
class QToolButton;
class QValueAxis;

namespace emberline::ui {

class ActivityStrip;
class LiveThreadModel;
class TimelineChartView;

// The live session's timelines: CPU per thread over time (QtCharts, one line per shown thread, in buckets finer
// than a flush), the per-thread activity strip, and samples and lost samples per flush; beside them the thread
// list, where threads are hidden, shown or isolated. Dragging across any timeline selects a time range; hovering
// shows the values under the mouse. It draws immutable results and reports what the user chose. In a short
// room (a live session gives the flame graph most of the tab) the CPU chart and the strip stay whole and the
// flush chart, the least needed, is left out; its numbers stay in the status bar.
//
// Thread: GUI thread.
class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget *parent = nullptr);

    // A line of points in time order as a chart `pixels` wide can show it: as is while there are no more points
    // than pixels, else each four-pixel column's lowest and highest point.
    static QList<QPointF> thinLine(const QList<QPointF> &points, double pixels);
    // One thread's CPU line: a point per bucket, thinned to the axis' width. `peak` is raised to the highest value.
    static QList<QPointF> cpuPoints(const engine::ThreadActivity &activity, uint32_t thread, const TimeAxis &axis,
                                    double &peak);

    // Shows a new snapshot: the CPU chart and the thread list at once, the flush chart and the activity strip in
    // the next passes of the event loop (see applyNextPart); dataShown() follows the last part.
    void setData(std::shared_ptr<const engine::LiveSnapshot> snapshot,
                 std::shared_ptr<const engine::ThreadActivity> activity);
    void setSelection(std::optional<std::pair<int64_t, int64_t>> range);
    // Range A of a range comparison, drawn beside the selection (range B) in its own colour; nullopt hides it.
    void setComparedRange(std::optional<std::pair<int64_t, int64_t>> range);
    LiveThreadModel *threadModel() const { return m_threadModel; }
    TimelineChartView *cpuChart() const { return m_cpuView; }
    TimelineChartView *flushChart() const { return m_flushView; }
    ActivityStrip *activityStrip() const { return m_strip; }
    // What hovering at this time over the CPU chart shows (also used by the tests).
    QString cpuToolTip(int64_t timeNs) const;
    QString flushToolTip(int64_t timeNs) const;

Q_SIGNALS:
    void rangeSelected(int64_t startNs, int64_t endNs);
    // Shift+drag on any timeline: the second range of a comparison (the first is the selected range).
    void comparedRangeSelected(int64_t startNs, int64_t endNs);
    void hiddenThreadsChanged();
    // Every part of the timeline shows the snapshot last given to setData.
    void dataShown();

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    enum class Part { None, FlushChart, Strip };
    void applyNextPart();
    void setupUi();
    void connectSignals();
    QWidget *createThreadPane();
    QChart *createChart(QValueAxis *&x, QValueAxis *&y, const QString &yTitle);
    void updateCpuSeries();
    void updateFlushSeries();
    void updateStrip();
    // The flush chart goes when the CPU chart and the strip would not keep their room beside it, and comes back
    // when they would.
    void fitCharts();
    void updateCpuTicks();
    std::vector<uint32_t> shownThreads() const;

    std::shared_ptr<const engine::LiveSnapshot> m_snapshot;
    std::shared_ptr<const engine::ThreadActivity> m_activity;
    LiveThreadModel *m_threadModel = nullptr;
    QListView *m_threadList = nullptr;
    QToolButton *m_isolate = nullptr;
    QToolButton *m_showAll = nullptr;
    TimelineChartView *m_cpuView = nullptr;
    TimelineChartView *m_flushView = nullptr;
    ActivityStrip *m_strip = nullptr;
    QValueAxis *m_cpuX = nullptr;
    QValueAxis *m_cpuY = nullptr;
    QValueAxis *m_flushX = nullptr;
    QValueAxis *m_flushY = nullptr;
    std::map<uint32_t, QLineSeries *> m_cpuSeries;
    double m_cpuTop = 100; // the CPU chart's top label: the busiest thread's peak, rounded up to 50%
    QLineSeries *m_samplesSeries = nullptr;
    QLineSeries *m_lostSeries = nullptr;
    Part m_nextPart = Part::None; // what of the last snapshot is still to be shown
    QTimer *m_partTimer = nullptr;
};

} // namespace emberline::ui
