#pragma once

#include <QColor>
#include <QGuiApplication>
#include <QPalette>

#include <cmath>

namespace emberline::ui {

// Text colours that stay readable on a light and a dark palette alike: the views' tables colour a change, a
// problem or a warning, and tint their rows by cost with light backgrounds.

// The application's palette is dark (light text on a dark base), as with EMBERLINE_COLOR_SCHEME=dark or a dark
// desktop theme.
inline bool isDarkPalette(const QPalette &palette = QGuiApplication::palette())
{
    return palette.color(QPalette::Base).lightness() < palette.color(QPalette::Text).lightness();
}

// The relative luminance of a colour (WCAG): 0 for black, 1 for white.
inline double relativeLuminance(const QColor &c)
{
    const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

// Near-black or near-white, whichever contrasts more with `background` (a cost tint, a flame-graph frame).
inline QColor textOn(const QColor &background)
{
    const QColor dark(0x10, 0x10, 0x10);
    const QColor light(0xf4, 0xf4, 0xf4);
    const double l = relativeLuminance(background) + 0.05;
    const double onDark = l / (relativeLuminance(dark) + 0.05);
    const double onLight = (relativeLuminance(light) + 0.05) / l;
    return onDark >= onLight ? dark : light;
}

// What grew (red) and what shrank (blue) in a comparison, as the diff flame graph colours them.
inline QColor grewText()
{
    return isDarkPalette() ? QColor(0xff, 0x80, 0x70) : QColor(0xb0, 0x20, 0x18);
}
inline QColor shrankText()
{
    return isDarkPalette() ? QColor(0x80, 0xa8, 0xff) : QColor(0x20, 0x48, 0xb0);
}

// A problem (red) and a warning (amber) in a table.
inline QColor problemText()
{
    return isDarkPalette() ? QColor(0xff, 0x80, 0x70) : QColor(0xb0, 0x24, 0x18);
}
inline QColor warningText()
{
    return isDarkPalette() ? QColor(0xf0, 0xc0, 0x50) : QColor(0x8a, 0x5a, 0x00);
}

} // namespace emberline::ui
