#pragma once

#include "engine/live/live_snapshot.h"

#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QAreaSeries;
class QLineSeries;
class QScatterSeries;
class QTimer;
class QValueAxis;

namespace emberline::ui {

class TimelineChartView;

// A memory session's chart over the session's time, both lines on one axis of bytes (labelled in KiB, MiB or GiB):
// the live heap the sampled allocations tell (each flush's in-use space, a point at its end) and the resident memory
// (RSS) of the program's processes, as the session reads it every quarter second (SessionStats). Between flushes, a
// dashed line follows the live heap as the session's live numbers tell it every quarter second (the same estimate, kept
// by the session between flushes; a session read back from its folder has its flushes only). Around the live heap, a
// band shows the range sampling leaves it 19 times in 20 (each flush's in-use margin, where the session told it: a
// small heap sampled every 512 KiB is known to a few tens of per cent, a large one to a few). Dragging across it
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
    // Per point of heapPoints, the half-width of its sampling's 95% range (0 where none is known).
    static std::vector<double> heapMargins(const engine::LiveSnapshot &snapshot);

    void setSnapshot(const std::shared_ptr<const engine::LiveSnapshot> &snapshot);
    // A reading of the resident memory; the chart follows within half a second.
    void addResident(int64_t timeNs, int64_t bytes);
    // A reading of the live heap (the session's live numbers, every quarter second); the chart follows within half a
    // second.
    void addHeapReading(int64_t timeNs, int64_t bytes);
    // An attached program: a line at the attach (CLOCK_REALTIME), before which the heap was not watched (the RSS
    // holds that older heap too).
    void setAttachedAt(int64_t timeNs);
    QLineSeries *attachSeries() const { return m_attach; }
    void setSelection(std::optional<std::pair<int64_t, int64_t>> range);
    void setComparedRange(std::optional<std::pair<int64_t, int64_t>> range);

    TimelineChartView *chartView() const { return m_view; }
    QLineSeries *heapSeries() const { return m_heap; }
    // The live heap's readings (dashed).
    QLineSeries *heapReadingSeries() const { return m_heapReadings; }
    QLineSeries *residentSeries() const { return m_resident; }
    QScatterSeries *leakedSeries() const { return m_leaked; }
    // The live heap's sampling range: visible only while some flush has a margin.
    QAreaSeries *rangeSeries() const { return m_range; }
    QValueAxis *bytesAxis() const { return m_y; }
    // What hovering at this time shows: the live heap as of the last flush up to then, and the RSS reading nearest
    // before it.
    QString toolTipAt(int64_t timeNs) const;

Q_SIGNALS:
    void rangeSelected(int64_t startNs, int64_t endNs);
    void comparedRangeSelected(int64_t startNs, int64_t endNs);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    // Shorter than this, the legend sits beside the plot rather than above it.
    static constexpr int kLegendAboveHeight = 220;
    void setupUi();
    void connectSignals();
    // A reading appended to `readings` (in time order), the chart laid out anew within half a second.
    void addReading(std::vector<std::pair<int64_t, int64_t>> &readings, int64_t timeNs, int64_t bytes);
    // The session's last flush has come, and its programs still held `bytes` when they ended (its in-use values are
    // the leaks): a mark at the live heap's end.
    void setLeaked(int64_t bytes);
    // The time span, both lines and the bytes axis, from what is held now.
    void relayout();
    // The bytes axis' range and ticks, as many as the plot's height holds.
    void fitBytesAxis();

    TimelineChartView *m_view = nullptr;
    QValueAxis *m_x = nullptr;
    QValueAxis *m_y = nullptr;
    QLineSeries *m_heap = nullptr;
    QLineSeries *m_heapReadings = nullptr;
    QLineSeries *m_resident = nullptr;
    QScatterSeries *m_leaked = nullptr; // added when the session ends with leaks
    QLineSeries *m_attach = nullptr;    // added for an attached program
    int64_t m_attachedNs = 0;
    QAreaSeries *m_range = nullptr; // between m_rangeLow and m_rangeHigh
    QLineSeries *m_rangeLow = nullptr;
    QLineSeries *m_rangeHigh = nullptr;
    int64_t m_leakedBytes = -1;
    double m_bytesTop = 1; // the bytes axis' top, in its unit
    QString m_bytesUnit = QStringLiteral("B");
    double m_fittedHeight = 0;    // the plot height the ticks were fitted to
    QTimer *m_relayout = nullptr; // coalesces the RSS readings into a relayout every half second
    std::vector<std::pair<int64_t, int64_t>> m_heapPoints;
    std::vector<double> m_heapMargins;                         // per heap point
    std::vector<std::pair<int64_t, int64_t>> m_readings;       // live heap readings, in time order
    std::vector<std::pair<int64_t, int64_t>> m_residentPoints; // in time order
    int64_t m_sessionStartNs = 0;
    int64_t m_sessionEndNs = 0;
};

} // namespace emberline::ui
