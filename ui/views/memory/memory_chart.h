#pragma once

#include "engine/live/live_snapshot.h"

#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QLineSeries;
class QTimer;
class QValueAxis;

namespace emberline::ui {

class TimelineChartView;

// A memory session's chart over the session's time, both lines on one axis of bytes (labelled in KiB, MiB or GiB):
// the live heap the sampled allocations tell (each flush's in-use space, a point at its end) and the resident memory
// (RSS) of the program's processes, read every quarter second off this thread (RssSampler). Dragging across it
// selects a time range as the thread timelines do (a TimelineChartView, the same band and signals); hovering tells
// both values. It draws what it is given.
//
// Thread: GUI thread.
class MemoryChart : public QWidget {
    Q_OBJECT
public:
    explicit MemoryChart(QWidget *parent = nullptr);

    // Each flush's end and its in-use bytes (the memory rows' in-use space), in session order.
    static std::vector<std::pair<int64_t, int64_t>> heapPoints(const engine::LiveSnapshot &snapshot);

    void setSnapshot(const std::shared_ptr<const engine::LiveSnapshot> &snapshot);
    // A reading of the resident memory; the chart follows within half a second.
    void addResident(int64_t timeNs, int64_t bytes);
    void setSelection(std::optional<std::pair<int64_t, int64_t>> range);
    void setComparedRange(std::optional<std::pair<int64_t, int64_t>> range);

    TimelineChartView *chartView() const { return m_view; }
    QLineSeries *heapSeries() const { return m_heap; }
    QLineSeries *residentSeries() const { return m_resident; }
    QValueAxis *bytesAxis() const { return m_y; }
    // What hovering at this time shows: the live heap as of the last flush up to then, and the RSS reading nearest
    // before it.
    QString toolTipAt(int64_t timeNs) const;

Q_SIGNALS:
    void rangeSelected(int64_t startNs, int64_t endNs);
    void comparedRangeSelected(int64_t startNs, int64_t endNs);

private:
    void setupUi();
    void connectSignals();
    // The time span, both lines and the bytes axis, from what is held now.
    void relayout();

    TimelineChartView *m_view = nullptr;
    QValueAxis *m_x = nullptr;
    QValueAxis *m_y = nullptr;
    QLineSeries *m_heap = nullptr;
    QLineSeries *m_resident = nullptr;
    QTimer *m_relayout = nullptr; // coalesces the RSS readings into a relayout every half second
    std::vector<std::pair<int64_t, int64_t>> m_heapPoints;
    std::vector<std::pair<int64_t, int64_t>> m_residentPoints; // in time order
    int64_t m_sessionStartNs = 0;
    int64_t m_sessionEndNs = 0;
};

} // namespace emberline::ui
