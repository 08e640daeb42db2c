#pragma once

#include "ui/flamegraph/flame_graph_layout.h"

#include <QByteArray>
#include <QColor>
#include <QString>

#include <functional>
#include <string>

namespace emberline::ui {

// A flame graph as a standalone SVG document: the layout's rectangles at its current zoom, whole height (not
// only the rows scrolled into view), each with its fill, its name where it fits, and a <title> tooltip with the
// name and total, like Brendan Gregg's flamegraph.pl output. Pure geometry and text: no widget, no painter.
//
// Thread: any; reads a layout the caller does not change meanwhile.
QByteArray flameGraphSvg(const FlameGraphLayout &layout, const std::function<QColor(const FlameRect &)> &fill,
                         const QString &title, const std::string &unit);

} // namespace emberline::ui
