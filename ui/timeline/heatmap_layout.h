#pragma once

#include "engine/analysis/heatmap.h"

#include <QRectF>
#include <QRgb>
#include <QSizeF>

#include <optional>
#include <utility>
#include <vector>

namespace emberline::ui {

using engine::HeatmapCell;

// The heatmap's geometry, apart from any painting: where the grid of cells sits in the widget (row labels on the
// left, second labels on top, the legend below), how wide a cell is (at least kMinCellWidth pixels, so a long
// session scrolls sideways rather than squeezing seconds into nothing), the horizontal scroll offset, which
// columns are visible, which cell is under a point, the rectangles that highlight a range of cells in time order,
// and which labels fit. The view and its tests read the same numbers.
//
// Thread: GUI thread (plain value).
class HeatmapLayout {
public:
    static constexpr double kMinCellWidth = 6;
    static constexpr double kMaxCellWidth = 40;
    static constexpr double kLeftMargin = 58; // row labels ("980 ms")
    static constexpr double kTopMargin = 18;  // second labels
    static constexpr double kRightMargin = 8;
    static constexpr double kBottomMargin = 24; // the legend

    void setGrid(size_t columns, int rows);
    void setSize(QSizeF size);
    // Pixels scrolled to the right, clamped to [0, maxScroll()].
    void setScroll(double x);
    size_t columns() const { return m_columns; }
    int rows() const { return m_rows; }
    double scroll() const { return m_scroll; }
    double maxScroll() const;
    // The area the visible cells are drawn in (the grid's on-screen part).
    QRectF gridRect() const;
    QRectF legendRect() const;
    double cellWidth() const { return m_cellWidth; }
    double cellHeight() const;
    // First and one past the last column at least partly visible.
    std::pair<size_t, size_t> visibleColumns() const;
    double columnX(size_t column) const; // left edge, scroll applied
    QRectF cellRect(HeatmapCell cell) const;
    // The cell under a point of the grid, or none outside it.
    std::optional<HeatmapCell> cellAt(QPointF point) const;
    // The cell nearest to a point, for drags that leave the grid. Requires a non-empty grid.
    HeatmapCell nearestCell(QPointF point) const;
    // Rectangles covering the cells between a and b in time order (down a column, then the next one): at most
    // three, clipped to the grid rectangle.
    std::vector<QRectF> rangeRects(HeatmapCell a, HeatmapCell b) const;
    // Every how many columns and rows a label fits.
    size_t columnLabelStep() const;
    int rowLabelStep() const;

private:
    void update();

    size_t m_columns = 0;
    int m_rows = engine::Heatmap::kDefaultRows;
    QSizeF m_size;
    double m_scroll = 0;
    double m_cellWidth = kMinCellWidth;
};

// FlameScope's scale: white for nothing, through yellow and orange to deep red at the maximum.
QRgb heatColor(int64_t value, int64_t max);

} // namespace emberline::ui
