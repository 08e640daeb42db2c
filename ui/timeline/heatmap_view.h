#pragma once

#include "engine/analysis/heatmap.h"
#include "ui/timeline/heatmap_layout.h"

#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

class QScrollBar;

namespace emberline::ui {

using engine::TimeRange;

// The sub-second heatmap (FlameScope's view of a session): a column per second, a row per sub-second bucket,
// each cell shaded by its samples (heatColor), with second labels on top, millisecond labels on the left and a
// legend with the maximum below. Dragging from one cell to another selects the time between them (range A, down a
// column and on to the next); Shift+drag selects a second range (B) to compare with A; Esc clears both. A long
// session scrolls sideways and, while the view shows its end, follows it as it grows. Only the visible cells are
// drawn, as one image scaled up (a cell is a pixel of it), so a repaint costs the same at any session length.
//
// Thread: GUI thread; the heatmap is an immutable result built on a worker.
class HeatmapView : public QWidget {
    Q_OBJECT
public:
    using CellRange = std::pair<HeatmapCell, HeatmapCell>;

    explicit HeatmapView(QWidget *parent = nullptr);

    // Shows a new state of the heatmap. The selections stay while the start stays the same (a live session's
    // next flush, another sample type); a heatmap with another start clears them.
    void setHeatmap(std::shared_ptr<const engine::Heatmap> heatmap);
    const std::shared_ptr<const engine::Heatmap> &heatmap() const { return m_heatmap; }
    // The pprof unit of the values ("count" reads as samples), for tooltips and the legend.
    void setValueUnit(std::string unit);
    QString valueText(int64_t value) const;
    // What the view says instead of a grid when there is none (no timestamps, still computing, an error).
    void setEmptyText(const QString &text);
    const HeatmapLayout &layout() const { return m_layout; }
    std::optional<CellRange> selectionA() const { return m_selectionA; }
    std::optional<CellRange> selectionB() const { return m_selectionB; }
    std::optional<TimeRange> rangeA() const;
    std::optional<TimeRange> rangeB() const;
    // Selects range A (or B) between two cells as a drag would, with the same signals.
    void selectCells(HeatmapCell from, HeatmapCell to, bool second = false);
    void clearSelection();
    QString toolTipAt(QPointF point) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    // Range A, [startNs, endNs).
    void rangeSelected(int64_t startNs, int64_t endNs);
    // Range B was selected while range A stands.
    void rangesCompared(emberline::engine::TimeRange a, emberline::engine::TimeRange b);
    void selectionCleared();

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;

private:
    void setupUi();
    void connectSignals();
    void updateGeometry();
    void paintCells(QPainter &painter) const;
    void paintGridLines(QPainter &painter) const;
    void paintRange(QPainter &painter, const CellRange &range, const QColor &color) const;
    void paintLabels(QPainter &painter) const;
    void paintLegend(QPainter &painter) const;

    struct Drag {
        QPointF pressPos;
        HeatmapCell anchor;
        HeatmapCell current;
        bool second = false;
        bool moved = false;
    };

    std::shared_ptr<const engine::Heatmap> m_heatmap;
    std::string m_unit = "count";
    QString m_emptyText;
    HeatmapLayout m_layout;
    std::vector<QRgb> m_palette; // heatColor of 256 steps of the current maximum
    std::optional<CellRange> m_selectionA;
    std::optional<CellRange> m_selectionB;
    std::optional<Drag> m_drag;
    QScrollBar *m_scrollBar = nullptr;
};

} // namespace emberline::ui
