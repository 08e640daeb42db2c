#pragma once

#include "engine/live/live_selection.h"
#include "ui/timeline/time_axis.h"

#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

namespace emberline::ui {

// The per-thread activity strip under the CPU chart: one thin row per shown thread, each bucket shaded by the
// thread's CPU use (its colour at full strength for a whole core), aligned with the charts' plot area through
// the same TimeAxis. Dragging selects a time range; hovering reports the time and thread under the mouse.
//
// Thread: GUI thread; the activity is an immutable result built on a worker.
class ActivityStrip : public QWidget {
    Q_OBJECT
public:
    explicit ActivityStrip(QWidget *parent = nullptr);

    void setActivity(std::shared_ptr<const engine::ThreadActivity> activity, std::vector<uint32_t> threads,
                     std::vector<QString> names);
    void setAxis(const TimeAxis &axis);
    void setSelection(std::optional<std::pair<int64_t, int64_t>> range);
    // The range the selection is compared with (range A of a range comparison), drawn in its own colour.
    void setComparedRange(std::optional<std::pair<int64_t, int64_t>> range);
    const std::shared_ptr<const engine::ThreadActivity> &activity() const { return m_activity; }
    QSize sizeHint() const override;
    // The thread shown on the row at y, or kNoIndex.
    uint32_t threadAt(double y) const;

Q_SIGNALS:
    void rangeSelected(int64_t startNs, int64_t endNs);
    // A Shift+drag: the second range of a comparison.
    void comparedRangeSelected(int64_t startNs, int64_t endNs);
    void hovered(int64_t timeNs, uint32_t thread, const QPoint &globalPos);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;

private:
    static constexpr int kRowHeight = 10;

    std::shared_ptr<const engine::ThreadActivity> m_activity;
    std::vector<uint32_t> m_threads;
    std::vector<QString> m_names;
    TimeAxis m_axis;
    std::optional<std::pair<int64_t, int64_t>> m_selection;
    std::optional<std::pair<int64_t, int64_t>> m_compared;
    std::optional<double> m_pressX;
    double m_dragX = 0;
};

} // namespace emberline::ui
