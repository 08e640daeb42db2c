#include "ui/timeline/time_axis.h"

#include <QPixmap>

#include <algorithm>
#include <array>
#include <cmath>

namespace emberline::ui {

void TimeAxis::setTimeRange(int64_t startNs, int64_t endNs)
{
    m_start = startNs;
    m_end = std::max(startNs, endNs);
}

void TimeAxis::setPixelRange(double left, double width)
{
    m_left = left;
    m_width = std::max(0.0, width);
}

double TimeAxis::toPixel(int64_t timeNs) const
{
    if (!isValid())
        return m_left;
    const int64_t t = std::clamp(timeNs, m_start, m_end);
    return m_left + m_width * static_cast<double>(t - m_start) / static_cast<double>(m_end - m_start);
}

int64_t TimeAxis::toTime(double x) const
{
    if (!isValid())
        return m_start;
    const double fraction = std::clamp((x - m_left) / m_width, 0.0, 1.0);
    return m_start + static_cast<int64_t>(std::llround(fraction * static_cast<double>(m_end - m_start)));
}

std::pair<int64_t, int64_t> TimeAxis::rangeBetween(double x0, double x1) const
{
    const int64_t a = toTime(x0);
    const int64_t b = toTime(x1);
    return {std::min(a, b), std::max(a, b)};
}

QColor threadColor(uint32_t thread)
{
    // Distinct, readable on white; repeats after twelve threads.
    static const std::array<QColor, kThreadColors> kColors{
        QColor(0xd9, 0x5f, 0x02), QColor(0x1b, 0x9e, 0x77), QColor(0x75, 0x70, 0xb3), QColor(0xe7, 0x29, 0x8a),
        QColor(0x66, 0xa6, 0x1e), QColor(0xe6, 0xab, 0x02), QColor(0xa6, 0x76, 0x1d), QColor(0x1f, 0x78, 0xb4),
        QColor(0xb1, 0x59, 0x28), QColor(0x6a, 0x3d, 0x9a), QColor(0x33, 0xa0, 0x2c), QColor(0x66, 0x66, 0x66)};
    return kColors[thread % kColors.size()];
}

QIcon threadSwatch(uint32_t thread)
{
    // Made once per colour. A QColor decoration would make the item delegate paint a new pixmap for every row at
    // every repaint, and each new pixmap takes another entry of Qt's pixmap cache (10 MB) until it is full.
    static std::array<QIcon, kThreadColors> swatches;
    QIcon &swatch = swatches[thread % kThreadColors];
    if (swatch.isNull()) {
        QPixmap pixmap(16, 16);
        pixmap.fill(threadColor(thread));
        swatch = QIcon(pixmap);
    }
    return swatch;
}

} // namespace emberline::ui
