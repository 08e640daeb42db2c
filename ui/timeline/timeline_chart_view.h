#pragma once

#include "ui/timeline/time_axis.h"

#include <QChartView>

#include <optional>

namespace emberline::ui {

// A chart of the live timeline whose x axis is the session's time: dragging across it selects a time range
// (drawn as a shaded band, the same band on every timeline chart), hovering reports the time under the mouse.
// The time↔pixel mapping comes from a TimeAxis laid over the chart's plot area; it only draws. The chart's
// background, axis labels, titles and grid follow the widget's palette (QtCharts' own theme is light only).
//
// Thread: GUI thread.
class TimelineChartView : public QChartView {
    Q_OBJECT
public:
    explicit TimelineChartView(QChart *chart, QWidget *parent = nullptr);

    // The session's time span; the chart's x axis shows it in seconds from its start.
    void setTimeRange(int64_t startNs, int64_t endNs);
    const TimeAxis &axis() const { return m_axis; }
    void setSelection(std::optional<std::pair<int64_t, int64_t>> range);
    // The range the selection is compared with (range A of a range comparison), drawn in its own colour.
    void setComparedRange(std::optional<std::pair<int64_t, int64_t>> range);
    // Fixed room around the plot area (for the axes' labels), so that stacked charts share one time axis.
    void setPlotMargins(const QMargins &margins);

Q_SIGNALS:
    void rangeSelected(int64_t startNs, int64_t endNs);
    // A Shift+drag: the second range of a comparison.
    void comparedRangeSelected(int64_t startNs, int64_t endNs);
    void clicked(int64_t timeNs);
    void hovered(int64_t timeNs, const QPoint &globalPos);

protected:
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void updateAxis();
    void followPalette();
    // The plot area inside the margins of setPlotMargins(), with the axes laid out around it.
    void applyPlotMargins();

    TimeAxis m_axis;
    QMargins m_plotMargins;
    std::optional<double> m_pressX;
    double m_dragX = 0;
    std::optional<std::pair<int64_t, int64_t>> m_selection;
    std::optional<std::pair<int64_t, int64_t>> m_compared;
};

} // namespace emberline::ui
