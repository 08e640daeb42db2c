#pragma once

#include <QColor>
#include <QIcon>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace emberline::ui {

// Time ↔ pixels for the live timelines, apart from any painting: a time span [startNs, endNs] laid over a
// horizontal pixel span [left, left + width]. Times outside the span clamp to its ends; a drag between two x
// positions becomes an ordered time range. The charts, the activity strip and the selection overlay all use
// it, so that a dragged range means the same times in each of them.
//
// Thread: GUI thread (plain value).
class TimeAxis {
public:
    void setTimeRange(int64_t startNs, int64_t endNs);
    void setPixelRange(double left, double width);
    int64_t startNs() const { return m_start; }
    int64_t endNs() const { return m_end; }
    double left() const { return m_left; }
    double width() const { return m_width; }
    bool isValid() const { return m_end > m_start && m_width > 0; }

    double toPixel(int64_t timeNs) const;
    int64_t toTime(double x) const;
    // Seconds since the span's start (the charts' x values).
    double toSeconds(int64_t timeNs) const { return static_cast<double>(timeNs - m_start) * 1e-9; }
    int64_t fromSeconds(double seconds) const { return m_start + static_cast<int64_t>(seconds * 1e9); }
    // The ordered, clamped time range between two x positions.
    std::pair<int64_t, int64_t> rangeBetween(double x0, double x1) const;
    // Whether a press at x0 and a release at x1 is a drag (a selection) rather than a click.
    static bool isDrag(double x0, double x1) { return x1 - x0 >= kMinDragPixels || x0 - x1 >= kMinDragPixels; }

    static constexpr double kMinDragPixels = 4;

private:
    int64_t m_start = 0;
    int64_t m_end = 0;
    double m_left = 0;
    double m_width = 0;
};

// The colour of a live session's thread (by its stable ordinal) in the charts, the strip and the thread list.
// Colours repeat after this many threads.
inline constexpr size_t kThreadColors = 12;
QColor threadColor(uint32_t thread);
// A square of the thread's colour, for lists: one icon per colour, shared (GUI thread only).
QIcon threadSwatch(uint32_t thread);

} // namespace emberline::ui
