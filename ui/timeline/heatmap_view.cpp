#include "ui/timeline/heatmap_view.h"

#include "engine/model/units.h"

#include <QHelpEvent>
#include <QImage>
#include <QKeyEvent>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace emberline::ui {
namespace {

constexpr int kPaletteSteps = 256;
const QColor kRangeA(30, 100, 220);
const QColor kRangeB(20, 150, 70);

} // namespace

HeatmapView::HeatmapView(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void HeatmapView::setupUi()
{
    setObjectName(QStringLiteral("heatmapView"));
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_scrollBar = new QScrollBar(Qt::Horizontal, this);
    m_scrollBar->setObjectName(QStringLiteral("heatmapScrollBar"));
    m_scrollBar->setVisible(false);
    m_palette.resize(kPaletteSteps);
    for (int i = 0; i < kPaletteSteps; ++i)
        m_palette[static_cast<size_t>(i)] = heatColor(i, kPaletteSteps - 1);
    m_emptyText = tr("No samples yet");
}

void HeatmapView::connectSignals()
{
    connect(m_scrollBar, &QScrollBar::valueChanged, this, [this](int value) {
        m_layout.setScroll(value);
        update();
    });
}

QSize HeatmapView::sizeHint() const
{
    return {900, 300};
}

QSize HeatmapView::minimumSizeHint() const
{
    return {200, 140};
}

void HeatmapView::setHeatmap(std::shared_ptr<const engine::Heatmap> heatmap)
{
    const bool followEnd = m_layout.scroll() >= m_layout.maxScroll() - 1;
    if (!heatmap || !m_heatmap || heatmap->startNs() != m_heatmap->startNs() || heatmap->rows() != m_heatmap->rows()) {
        m_selectionA.reset();
        m_selectionB.reset();
        m_drag.reset();
    }
    m_heatmap = std::move(heatmap);
    m_layout.setGrid(m_heatmap ? m_heatmap->columns() : 0, m_heatmap ? m_heatmap->rows() : 1);
    if (followEnd)
        m_layout.setScroll(m_layout.maxScroll());
    updateGeometry();
    update();
}

void HeatmapView::setValueUnit(std::string unit)
{
    m_unit = std::move(unit);
    update();
}

QString HeatmapView::valueText(int64_t value) const
{
    if (m_unit == "count" || m_unit.empty())
        return value == 1 ? tr("1 sample") : tr("%1 samples").arg(value);
    return QString::fromStdString(engine::formatValue(value, m_unit));
}

void HeatmapView::setEmptyText(const QString &text)
{
    m_emptyText = text;
    update();
}

std::optional<TimeRange> HeatmapView::rangeA() const
{
    if (!m_selectionA || !m_heatmap)
        return std::nullopt;
    return m_heatmap->rangeBetween(m_selectionA->first, m_selectionA->second);
}

std::optional<TimeRange> HeatmapView::rangeB() const
{
    if (!m_selectionB || !m_heatmap)
        return std::nullopt;
    return m_heatmap->rangeBetween(m_selectionB->first, m_selectionB->second);
}

void HeatmapView::selectCells(HeatmapCell from, HeatmapCell to, bool second)
{
    if (!m_heatmap || m_heatmap->columns() == 0)
        return;
    if (second && m_selectionA) {
        m_selectionB = CellRange(from, to);
        update();
        Q_EMIT rangesCompared(*rangeA(), *rangeB());
        return;
    }
    m_selectionA = CellRange(from, to);
    m_selectionB.reset();
    update();
    const TimeRange range = *rangeA();
    Q_EMIT rangeSelected(range.startNs, range.endNs);
}

void HeatmapView::clearSelection()
{
    const bool had = m_selectionA || m_selectionB;
    m_selectionA.reset();
    m_selectionB.reset();
    m_drag.reset();
    update();
    if (had)
        Q_EMIT selectionCleared();
}

QString HeatmapView::toolTipAt(QPointF point) const
{
    if (!m_heatmap)
        return {};
    const auto cell = m_layout.cellAt(point);
    if (!cell)
        return {};
    const int64_t fromMs = cell->row * m_heatmap->rowNs() / 1'000'000;
    const int64_t toMs = (cell->row + 1) * m_heatmap->rowNs() / 1'000'000;
    return tr("%1 s + %2–%3 ms\n%4")
        .arg(cell->column)
        .arg(fromMs)
        .arg(toMs)
        .arg(valueText(m_heatmap->value(cell->column, cell->row)));
}

void HeatmapView::updateGeometry()
{
    const int barHeight = m_scrollBar->sizeHint().height();
    m_layout.setSize(QSizeF(width(), height() - barHeight));
    const int max = static_cast<int>(std::ceil(m_layout.maxScroll()));
    m_scrollBar->setGeometry(static_cast<int>(HeatmapLayout::kLeftMargin), height() - barHeight,
                             width() - static_cast<int>(HeatmapLayout::kLeftMargin), barHeight);
    m_scrollBar->setRange(0, max);
    m_scrollBar->setPageStep(std::max(1, static_cast<int>(m_layout.gridRect().width())));
    m_scrollBar->setSingleStep(static_cast<int>(m_layout.cellWidth()) * 5);
    m_scrollBar->setValue(static_cast<int>(std::lround(m_layout.scroll())));
    m_scrollBar->setVisible(max > 0);
}

bool HeatmapView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void HeatmapView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    updateGeometry();
}

void HeatmapView::paintEvent(QPaintEvent * /*event*/)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().window());
    if (!m_heatmap || m_heatmap->columns() == 0) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_emptyText);
        return;
    }
    paintCells(painter);
    paintGridLines(painter);
    if (m_selectionA)
        paintRange(painter, *m_selectionA, kRangeA);
    if (m_selectionB)
        paintRange(painter, *m_selectionB, kRangeB);
    if (m_drag && m_drag->moved)
        paintRange(painter, {m_drag->anchor, m_drag->current}, m_drag->second && m_selectionA ? kRangeB : kRangeA);
    paintLabels(painter);
    paintLegend(painter);
}

void HeatmapView::paintCells(QPainter &painter) const
{
    const auto [first, last] = m_layout.visibleColumns();
    if (first >= last)
        return;
    const int rows = m_heatmap->rows();
    const int64_t max = m_heatmap->maxValue();
    QImage image(static_cast<int>(last - first), rows, QImage::Format_RGB32);
    // A cell without samples is the base colour: white on a light palette, not a white glare on a dark one.
    const QRgb empty = palette().color(QPalette::Base).rgb();
    for (size_t c = first; c < last; ++c) {
        const auto column = m_heatmap->column(c);
        const auto x = static_cast<int>(c - first);
        for (int r = 0; r < rows; ++r) {
            const int64_t v = column[static_cast<size_t>(r)];
            const size_t step =
                v <= 0 || max <= 0 ? 0 : std::max<size_t>(1, static_cast<size_t>(v * (kPaletteSteps - 1) / max));
            reinterpret_cast<QRgb *>(image.scanLine(r))[x] = step == 0 ? empty : m_palette[step];
        }
    }
    const QRectF grid = m_layout.gridRect();
    const QRectF target(m_layout.columnX(first), grid.top(), static_cast<double>(last - first) * m_layout.cellWidth(),
                        grid.height());
    painter.save();
    painter.setClipRect(grid);
    painter.drawImage(target, image); // nearest-neighbour: each cell a flat block
    painter.restore();
}

void HeatmapView::paintGridLines(QPainter &painter) const
{
    // Thin gaps between cells, as FlameScope draws them, where cells are wide enough to keep some colour.
    const QRectF grid = m_layout.gridRect();
    const auto [first, last] = m_layout.visibleColumns();
    QVector<QLineF> lines;
    if (m_layout.cellWidth() >= HeatmapLayout::kMinCellWidth) {
        for (size_t c = first + 1; c < last; ++c) {
            const double x = m_layout.columnX(c);
            lines.append(QLineF(x, grid.top(), x, grid.bottom()));
        }
    }
    if (m_layout.cellHeight() >= 5) {
        for (int r = 1; r < m_heatmap->rows(); ++r) {
            const double y = grid.top() + r * m_layout.cellHeight();
            lines.append(QLineF(grid.left(), y, grid.right(), y));
        }
    }
    painter.save();
    painter.setClipRect(grid);
    painter.setPen(QPen(palette().color(QPalette::Window), 1));
    painter.drawLines(lines);
    painter.restore();
}

void HeatmapView::paintRange(QPainter &painter, const CellRange &range, const QColor &color) const
{
    QColor fill = color;
    fill.setAlpha(70);
    painter.save();
    painter.setPen(QPen(color, 1.5));
    painter.setBrush(fill);
    for (const QRectF &r : m_layout.rangeRects(range.first, range.second))
        painter.drawRect(r);
    painter.restore();
}

void HeatmapView::paintLabels(QPainter &painter) const
{
    const QRectF grid = m_layout.gridRect();
    const QFontMetricsF metrics(font());
    painter.setPen(palette().color(QPalette::WindowText));
    const int rowStep = m_layout.rowLabelStep();
    for (int r = 0; r < m_heatmap->rows(); r += rowStep) {
        const double y = grid.top() + r * m_layout.cellHeight();
        const QString text = tr("%1 ms").arg(r * m_heatmap->rowNs() / 1'000'000);
        painter.drawText(QRectF(0, y - 1, HeatmapLayout::kLeftMargin - 6, metrics.height()),
                         Qt::AlignRight | Qt::AlignTop, text);
    }
    const size_t columnStep = m_layout.columnLabelStep();
    const auto [first, last] = m_layout.visibleColumns();
    painter.save();
    painter.setClipRect(QRectF(grid.left(), 0, grid.width() + HeatmapLayout::kRightMargin, grid.top()));
    for (size_t c = first - first % columnStep; c < last; c += columnStep) {
        const double x = m_layout.columnX(c);
        painter.drawText(QPointF(x + 1, grid.top() - 4), tr("%1 s").arg(c));
    }
    painter.restore();
}

void HeatmapView::paintLegend(QPainter &painter) const
{
    const QRectF bar = m_layout.legendRect();
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 10; ++i)
        gradient.setColorAt(i / 10.0, QColor(heatColor(std::max(1, i * 10), 100)));
    painter.fillRect(bar, gradient);
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(bar);
    painter.setPen(palette().color(QPalette::WindowText));
    const QFontMetricsF metrics(font());
    const double baseline = bar.center().y() + metrics.ascent() / 2 - 1;
    painter.drawText(QPointF(bar.left() - metrics.horizontalAdvance(QStringLiteral("0 ")) - 2, baseline),
                     QStringLiteral("0"));
    painter.drawText(QPointF(bar.right() + 6, baseline),
                     tr("max %1 per %2 ms").arg(valueText(m_heatmap->maxValue())).arg(m_heatmap->rowNs() / 1'000'000));
}

void HeatmapView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !m_heatmap || m_heatmap->columns() == 0 ||
        !m_layout.cellAt(event->position())) {
        QWidget::mousePressEvent(event);
        return;
    }
    const HeatmapCell cell = m_layout.nearestCell(event->position());
    m_drag = Drag{event->position(), cell, cell, (event->modifiers() & Qt::ShiftModifier) != 0, false};
}

void HeatmapView::mouseMoveEvent(QMouseEvent *event)
{
    if (!m_drag)
        return;
    const QPointF delta = event->position() - m_drag->pressPos;
    m_drag->moved = m_drag->moved || std::abs(delta.x()) >= 4 || std::abs(delta.y()) >= 4;
    m_drag->current = m_layout.nearestCell(event->position());
    update();
}

void HeatmapView::mouseReleaseEvent(QMouseEvent *event)
{
    if (!m_drag || event->button() != Qt::LeftButton)
        return;
    const Drag drag = *m_drag;
    m_drag.reset();
    // A click without a drag selects the one cell under it.
    selectCells(drag.anchor, drag.moved ? m_layout.nearestCell(event->position()) : drag.anchor, drag.second);
}

void HeatmapView::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Escape && (m_selectionA || m_selectionB || m_drag)) {
        clearSelection();
        return;
    }
    QWidget::keyPressEvent(event);
}

void HeatmapView::wheelEvent(QWheelEvent *event)
{
    if (!m_scrollBar->isVisible()) {
        QWidget::wheelEvent(event);
        return;
    }
    const QPoint delta = event->angleDelta();
    const int steps = (delta.x() != 0 ? delta.x() : delta.y()) / 120;
    m_scrollBar->setValue(m_scrollBar->value() - steps * m_scrollBar->singleStep());
}

} // namespace emberline::ui
