#include "ui/timeline/heatmap_layout.h"

#include <QColor>

#include <algorithm>
#include <array>
#include <cmath>

namespace emberline::ui {

void HeatmapLayout::setGrid(size_t columns, int rows)
{
    m_columns = columns;
    m_rows = std::max(1, rows);
    update();
}

void HeatmapLayout::setSize(QSizeF size)
{
    m_size = size;
    update();
}

void HeatmapLayout::setScroll(double x)
{
    m_scroll = std::clamp(x, 0.0, maxScroll());
}

void HeatmapLayout::update()
{
    const double width = std::max(0.0, m_size.width() - kLeftMargin - kRightMargin);
    m_cellWidth = m_columns == 0 ? kMaxCellWidth
                                 : std::clamp(width / static_cast<double>(m_columns), kMinCellWidth, kMaxCellWidth);
    m_scroll = std::clamp(m_scroll, 0.0, maxScroll());
}

double HeatmapLayout::maxScroll() const
{
    const double content = m_cellWidth * static_cast<double>(m_columns);
    return std::max(0.0, content - (m_size.width() - kLeftMargin - kRightMargin));
}

QRectF HeatmapLayout::gridRect() const
{
    const double width = std::min(m_cellWidth * static_cast<double>(m_columns),
                                  std::max(0.0, m_size.width() - kLeftMargin - kRightMargin));
    const double height = std::max(0.0, m_size.height() - kTopMargin - kBottomMargin);
    return {kLeftMargin, kTopMargin, width, height};
}

QRectF HeatmapLayout::legendRect() const
{
    return {kLeftMargin, m_size.height() - kBottomMargin + 6, std::min(200.0, m_size.width() - kLeftMargin), 10};
}

double HeatmapLayout::cellHeight() const
{
    return gridRect().height() / m_rows;
}

std::pair<size_t, size_t> HeatmapLayout::visibleColumns() const
{
    if (m_columns == 0 || m_cellWidth <= 0)
        return {0, 0};
    const QRectF grid = gridRect();
    const auto first = static_cast<size_t>(m_scroll / m_cellWidth);
    const auto last = static_cast<size_t>(std::ceil((m_scroll + grid.width()) / m_cellWidth));
    return {std::min(first, m_columns), std::min(last, m_columns)};
}

double HeatmapLayout::columnX(size_t column) const
{
    return kLeftMargin + static_cast<double>(column) * m_cellWidth - m_scroll;
}

QRectF HeatmapLayout::cellRect(HeatmapCell cell) const
{
    return {columnX(cell.column), kTopMargin + cell.row * cellHeight(), m_cellWidth, cellHeight()};
}

std::optional<HeatmapCell> HeatmapLayout::cellAt(QPointF point) const
{
    const QRectF grid = gridRect();
    if (m_columns == 0 || !grid.contains(point) || cellHeight() <= 0)
        return std::nullopt;
    const auto column = static_cast<size_t>((point.x() - kLeftMargin + m_scroll) / m_cellWidth);
    const int row = static_cast<int>((point.y() - kTopMargin) / cellHeight());
    if (column >= m_columns)
        return std::nullopt;
    return HeatmapCell{column, std::clamp(row, 0, m_rows - 1)};
}

HeatmapCell HeatmapLayout::nearestCell(QPointF point) const
{
    const QRectF grid = gridRect();
    const double x = std::clamp(point.x(), grid.left(), std::max(grid.left(), grid.right() - 0.01));
    const double y = std::clamp(point.y(), grid.top(), std::max(grid.top(), grid.bottom() - 0.01));
    const double h = cellHeight();
    const double column = std::floor((x - kLeftMargin + m_scroll) / m_cellWidth);
    return {static_cast<size_t>(std::clamp(column, 0.0, static_cast<double>(m_columns - 1))),
            h > 0 ? std::clamp(static_cast<int>((y - kTopMargin) / h), 0, m_rows - 1) : 0};
}

std::vector<QRectF> HeatmapLayout::rangeRects(HeatmapCell a, HeatmapCell b) const
{
    if (std::pair(b.column, b.row) < std::pair(a.column, a.row))
        std::swap(a, b);
    const QRectF grid = gridRect();
    const double h = cellHeight();
    const auto span = [&](size_t c0, size_t c1, int r0, int r1) {
        return QRectF(columnX(c0), kTopMargin + r0 * h, m_cellWidth * static_cast<double>(c1 - c0 + 1),
                      (r1 - r0 + 1) * h);
    };
    std::vector<QRectF> rects;
    if (a.column == b.column) {
        rects.push_back(span(a.column, a.column, a.row, b.row));
    } else {
        rects.push_back(span(a.column, a.column, a.row, m_rows - 1));
        if (b.column > a.column + 1)
            rects.push_back(span(a.column + 1, b.column - 1, 0, m_rows - 1));
        rects.push_back(span(b.column, b.column, 0, b.row));
    }
    std::vector<QRectF> visible;
    for (const QRectF &r : rects) {
        const QRectF clipped = r.intersected(grid);
        if (!clipped.isEmpty())
            visible.push_back(clipped);
    }
    return visible;
}

size_t HeatmapLayout::columnLabelStep() const
{
    static constexpr std::array<size_t, 12> steps = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600};
    for (size_t step : steps) {
        if (static_cast<double>(step) * m_cellWidth >= 40)
            return step;
    }
    return steps.back();
}

int HeatmapLayout::rowLabelStep() const
{
    static constexpr std::array<int, 6> steps = {1, 2, 5, 10, 25, 50};
    for (int step : steps) {
        if (step * cellHeight() >= 14 && m_rows % step == 0)
            return step;
    }
    return m_rows;
}

QRgb heatColor(int64_t value, int64_t max)
{
    if (value <= 0 || max <= 0)
        return qRgb(255, 255, 255);
    // Stops of FlameScope's white → yellow → orange → red ramp; the lowest non-zero value is already visibly
    // tinted, so that a single sample never looks like none.
    struct Stop {
        double at;
        int r, g, b;
    };
    static constexpr std::array<Stop, 4> stops = {
        {{0.0, 255, 244, 196}, {0.35, 255, 196, 64}, {0.7, 244, 110, 20}, {1.0, 178, 24, 10}}};
    const double t = std::clamp(static_cast<double>(value) / static_cast<double>(max), 0.0, 1.0);
    size_t i = 1;
    while (i + 1 < stops.size() && t > stops[i].at)
        ++i;
    const Stop &lo = stops[i - 1];
    const Stop &hi = stops[i];
    const double f = (t - lo.at) / (hi.at - lo.at);
    const auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
    return qRgb(mix(lo.r, hi.r), mix(lo.g, hi.g), mix(lo.b, hi.b));
}

} // namespace emberline::ui
