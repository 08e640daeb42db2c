#include "ui/timeline/timeline_chart_view.h"

#include <QAbstractAxis>
#include <QGraphicsLayout>
#include <QLegend>
#include <QMouseEvent>
#include <QValueAxis>

namespace emberline::ui {

TimelineChartView::TimelineChartView(QChart *chart, QWidget *parent) : QChartView(chart, parent)
{
    setRenderHint(QPainter::Antialiasing, false);
    setMouseTracking(true);
    setRubberBand(QChartView::NoRubberBand);
    setCursor(Qt::CrossCursor);
    connect(chart, &QChart::plotAreaChanged, this, [this] { updateAxis(); });
    followPalette();
}

void TimelineChartView::followPalette()
{
    const QPalette &p = palette();
    QChart *c = chart();
    c->setBackgroundBrush(p.base());
    c->setBackgroundPen(Qt::NoPen);
    c->setTitleBrush(p.text());
    c->legend()->setLabelColor(p.color(QPalette::Text)); // the memory chart's legend: dark grey on a dark base
    QColor grid = p.color(QPalette::Text);
    grid.setAlpha(40); // a faint line on a light or a dark base alike
    QColor minor = grid;
    minor.setAlpha(20);
    QColor line = p.color(QPalette::Text);
    line.setAlpha(110);
    for (QAbstractAxis *axis : c->axes()) {
        axis->setLabelsBrush(p.text());
        axis->setTitleBrush(p.text());
        // Cosmetic pens (width 0), as the timeline sets them: wider ones cost a path stroke per repaint.
        QPen pen = axis->linePen();
        pen.setColor(line);
        axis->setLinePen(pen);
        pen = axis->gridLinePen();
        pen.setColor(grid);
        axis->setGridLinePen(pen);
        pen = axis->minorGridLinePen();
        pen.setColor(minor);
        axis->setMinorGridLinePen(pen);
    }
}

void TimelineChartView::showEvent(QShowEvent *event)
{
    QChartView::showEvent(event);
    followPalette(); // axes added after construction
}

void TimelineChartView::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        followPalette();
}

void TimelineChartView::setTimeRange(int64_t startNs, int64_t endNs)
{
    m_axis.setTimeRange(startNs, endNs);
    const auto horizontal = chart()->axes(Qt::Horizontal);
    if (auto *x = horizontal.isEmpty() ? nullptr : qobject_cast<QValueAxis *>(horizontal.first())) {
        // The range is exactly the session's span (the TimeAxis maps the same); ticks fall on round seconds.
        // Each setter makes the chart lay its labels out again, so only what changed is set.
        const double span = std::max(0.001, m_axis.toSeconds(endNs));
        double step = 0.5;
        for (double s : {1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0}) {
            if (span / step <= 8)
                break;
            step = s;
        }
        if (x->tickType() != QValueAxis::TicksDynamic) {
            x->setTickType(QValueAxis::TicksDynamic);
            x->setTickAnchor(0);
        }
        if (x->tickInterval() != step)
            x->setTickInterval(step);
        const QString format = step < 1 ? QStringLiteral("%.1f s") : QStringLiteral("%.0f s");
        if (x->labelFormat() != format)
            x->setLabelFormat(format);
        x->setRange(0.0, span);
    }
    updateAxis();
}

void TimelineChartView::updateAxis()
{
    const QRectF plot = chart()->plotArea();
    // The chart sits at the scene's origin and the view does not scroll, so scene x is view x.
    m_axis.setPixelRange(mapFromScene(plot.topLeft()).x(), plot.width());
    viewport()->update();
}

void TimelineChartView::setSelection(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_selection = range;
    viewport()->update();
}

void TimelineChartView::setPlotMargins(const QMargins &margins)
{
    m_plotMargins = margins;
    applyPlotMargins();
    updateAxis();
}

void TimelineChartView::applyPlotMargins()
{
    const QRectF area = QRectF(QPointF(0, 0), size()).marginsRemoved(m_plotMargins.toMarginsF());
    if (m_plotMargins.isNull() || area == chart()->plotArea())
        return;
    chart()->setPlotArea(area);
    // A fixed plot area moves the series at once, but the axes (their lines, grid and labels) only when the chart
    // lays itself out again, and the view's resize laid it out with the old area: in a pane made taller the time
    // labels stayed where the old plot area ended, hidden under the activity strip or cut off. Laid out now, they
    // sit under the new area.
    if (QGraphicsLayout *layout = chart()->layout()) {
        layout->invalidate();
        layout->activate();
    }
}

void TimelineChartView::resizeEvent(QResizeEvent *event)
{
    QChartView::resizeEvent(event);
    applyPlotMargins();
    updateAxis();
}

void TimelineChartView::setComparedRange(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_compared = range;
    viewport()->update();
}

void TimelineChartView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton)
        return QChartView::mousePressEvent(event);
    m_pressX = event->position().x();
    m_dragX = *m_pressX;
    event->accept();
}

void TimelineChartView::mouseMoveEvent(QMouseEvent *event)
{
    const double x = event->position().x();
    if (m_pressX) {
        m_dragX = x;
        viewport()->update();
    } else if (m_axis.isValid()) {
        Q_EMIT hovered(m_axis.toTime(x), event->globalPosition().toPoint());
    }
    event->accept();
}

void TimelineChartView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !m_pressX)
        return QChartView::mouseReleaseEvent(event);
    const double x0 = *m_pressX;
    const double x1 = event->position().x();
    m_pressX.reset();
    viewport()->update();
    if (!m_axis.isValid())
        return;
    if (TimeAxis::isDrag(x0, x1)) {
        const auto [start, end] = m_axis.rangeBetween(x0, x1);
        if (event->modifiers().testFlag(Qt::ShiftModifier))
            Q_EMIT comparedRangeSelected(start, end);
        else
            Q_EMIT rangeSelected(start, end);
    } else {
        Q_EMIT clicked(m_axis.toTime(x1));
    }
    event->accept();
}

void TimelineChartView::drawForeground(QPainter *painter, const QRectF &rect)
{
    QChartView::drawForeground(painter, rect);
    const QRectF plot = chart()->plotArea();
    auto band = [&](double x0, double x1, const QColor &fill) {
        const double left = std::clamp(std::min(x0, x1), plot.left(), plot.right());
        const double right = std::clamp(std::max(x0, x1), plot.left(), plot.right());
        painter->fillRect(QRectF(left, plot.top(), right - left, plot.height()), fill);
        painter->setPen(QPen(fill.darker(160), 1));
        painter->drawLine(QPointF(left, plot.top()), QPointF(left, plot.bottom()));
        painter->drawLine(QPointF(right, plot.top()), QPointF(right, plot.bottom()));
    };
    // Scene coordinates: the axis maps to view x, the scene's origin is the view's.
    const double offset = mapFromScene(QPointF(0, 0)).x();
    if (m_compared && m_axis.isValid())
        band(m_axis.toPixel(m_compared->first) - offset, m_axis.toPixel(m_compared->second) - offset,
             QColor(230, 140, 30, 60));
    if (m_pressX)
        band(*m_pressX - offset, m_dragX - offset, QColor(30, 110, 220, 50));
    else if (m_selection && m_axis.isValid())
        band(m_axis.toPixel(m_selection->first) - offset, m_axis.toPixel(m_selection->second) - offset,
             QColor(30, 110, 220, 60));
}

} // namespace emberline::ui
