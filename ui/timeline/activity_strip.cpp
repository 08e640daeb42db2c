#include "ui/timeline/activity_strip.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

namespace emberline::ui {

ActivityStrip::ActivityStrip(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("activityStrip"));
    setMouseTracking(true);
    setCursor(Qt::CrossCursor);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void ActivityStrip::setActivity(std::shared_ptr<const engine::ThreadActivity> activity, std::vector<uint32_t> threads,
                                std::vector<QString> names)
{
    m_activity = std::move(activity);
    m_threads = std::move(threads);
    m_names = std::move(names);
    setFixedHeight(std::max<int>(kRowHeight, static_cast<int>(m_threads.size()) * kRowHeight) + 2);
    update();
}

void ActivityStrip::setAxis(const TimeAxis &axis)
{
    m_axis = axis;
    update();
}

void ActivityStrip::setSelection(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_selection = range;
    update();
}

void ActivityStrip::setComparedRange(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_compared = range;
    update();
}

QSize ActivityStrip::sizeHint() const
{
    return {400, std::max<int>(kRowHeight, static_cast<int>(m_threads.size()) * kRowHeight) + 2};
}

uint32_t ActivityStrip::threadAt(double y) const
{
    const int row = static_cast<int>(y - 1) / kRowHeight;
    return row >= 0 && static_cast<size_t>(row) < m_threads.size() ? m_threads[static_cast<size_t>(row)]
                                                                   : engine::kNoIndex;
}

void ActivityStrip::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    if (!m_activity || !m_axis.isValid())
        return;
    const engine::ThreadActivity &a = *m_activity;
    for (size_t row = 0; row < m_threads.size(); ++row) {
        const uint32_t thread = m_threads[row];
        const double top = 1 + static_cast<double>(row) * kRowHeight;
        QColor color = threadColor(thread);
        for (size_t b = 0; b < a.bucketCount; ++b) {
            const double cpu = std::min(100.0, a.cpuPercent(thread, b));
            if (cpu <= 0.5)
                continue;
            const double x0 = m_axis.toPixel(a.bucketStart(b));
            const double x1 = m_axis.toPixel(a.bucketStart(b + 1));
            color.setAlphaF(static_cast<float>(0.15 + 0.85 * cpu / 100.0));
            painter.fillRect(QRectF(x0, top, std::max(1.0, x1 - x0), kRowHeight - 2), color);
        }
    }
    if (m_compared) {
        const double left = m_axis.toPixel(m_compared->first);
        const double right = m_axis.toPixel(m_compared->second);
        painter.fillRect(QRectF(left, 0, right - left, height()), QColor(230, 140, 30, 50));
    }
    std::optional<std::pair<double, double>> band;
    if (m_pressX)
        band = std::make_pair(*m_pressX, m_dragX);
    else if (m_selection)
        band = std::make_pair(m_axis.toPixel(m_selection->first), m_axis.toPixel(m_selection->second));
    if (band) {
        const double left = std::min(band->first, band->second);
        const double right = std::max(band->first, band->second);
        painter.fillRect(QRectF(left, 0, right - left, height()), QColor(30, 110, 220, 50));
    }
}

void ActivityStrip::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_pressX = event->position().x();
        m_dragX = *m_pressX;
    }
}

void ActivityStrip::mouseMoveEvent(QMouseEvent *event)
{
    if (m_pressX) {
        m_dragX = event->position().x();
        update();
    } else if (m_axis.isValid()) {
        Q_EMIT hovered(m_axis.toTime(event->position().x()), threadAt(event->position().y()),
                       event->globalPosition().toPoint());
    }
}

void ActivityStrip::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !m_pressX)
        return;
    const double x0 = *m_pressX;
    m_pressX.reset();
    update();
    if (m_axis.isValid() && TimeAxis::isDrag(x0, event->position().x())) {
        const auto [start, end] = m_axis.rangeBetween(x0, event->position().x());
        if (event->modifiers().testFlag(Qt::ShiftModifier))
            Q_EMIT comparedRangeSelected(start, end);
        else
            Q_EMIT rangeSelected(start, end);
    }
}

} // namespace emberline::ui
