#pragma once

#include "engine/model/frame_table.h"

#include <QList>
#include <QPair>
#include <QString>

namespace emberline::ui {

// Where a frame's code is, as every tooltip that names a frame says it. A Python frame says that it is one, with
// its file as Python imports it and the line ("json/encoder.py:258"), the full path, and its module ("json.encoder");
// native code gives its source file and line, and the binary it is in. The line is the frame's (FrameTable: the
// function's start line, or for a Python function the lowest line known of it).
//
// Rows of (label, value), in the order a tooltip lists them; none when the frame has neither file nor binary.
QList<QPair<QString, QString>> frameSourceRows(const engine::Frame &frame);
// The same rows as lines of plain text, for a table's tooltip under the function's name: "Python frame:
// json/encoder.py:258", "File: /usr/lib/python3.12/json/encoder.py", ...; native code keeps its plain
// "file:line" and binary lines.
QString frameSourceText(const engine::Frame &frame);

} // namespace emberline::ui
