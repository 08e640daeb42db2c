#pragma once

#include "engine/model/frame_table.h"

#include <QColor>
#include <QString>

#include <vector>

namespace emberline::ui {

// What a frame is coloured by: a Python frame's top package ("python:json" for json/encoder.py, the script's base
// name for a script: engine::pythonModuleName), its Go package (from the name), its Node package
// (node_modules/<pkg>, node:internal, or the script's base name), otherwise the basename of its mapping (native
// code), otherwise the first component of a C++/Rust qualified name. Pseudo-frames such as "(idle)" share one key.
QString frameColorKey(const engine::Frame &frame);
// Whether a key is a Python frame's ("python:" and its package).
bool isPythonColorKey(const QString &key);

// A stable colour for a key: the hue comes from a hash of the key only, so colours do not change between
// refreshes, runs or machines. A Python key's hue is a blue or a teal (185° to 235°); every other key's lies
// outside 170° to 250°, so that Python's frames read as a family of their own next to the native ones.
QColor colorForKey(const QString &key);

// Colours per frame of one FrameTable, computed once: normal, dimmed (for frames outside a search or under the
// zoomed node's ancestors).
//
// Thread: GUI thread.
class FramePalette {
public:
    void reset(const engine::FrameTable *frames);
    const QColor &normal(uint32_t frame) const { return m_normal[frame]; }
    const QColor &dimmed(uint32_t frame) const { return m_dimmed[frame]; }
    static QColor rootColor() { return QColor(0xc8, 0xc8, 0xcc); }
    static QColor matchColor() { return QColor(0xd9, 0x4c, 0xe6); }

private:
    std::vector<QColor> m_normal;
    std::vector<QColor> m_dimmed;
};

} // namespace emberline::ui
