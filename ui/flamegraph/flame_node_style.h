#pragma once

#include <QColor>
#include <QList>
#include <QPair>
#include <QString>

#include <cstdint>

namespace emberline::ui {

// What a flame graph reads about each node when frames are not coloured by their package: its fill and the rows
// its tooltip gives in place of self and total. A differential flame graph colours by change and describes base,
// new, change and change %.
//
// Thread: GUI thread; an implementation reads immutable data shared with the worker that built it.
class FlameNodeStyle {
public:
    virtual ~FlameNodeStyle() = default;
    virtual QColor fill(uint32_t node) const = 0;
    virtual QList<QPair<QString, QString>> toolTipRows(uint32_t node) const = 0;
};

} // namespace emberline::ui
