#pragma once

#include <Qt>

namespace emberline::ui {

// Item roles shared by the viewer's models.
enum ModelRole {
    SortRole = Qt::UserRole + 1, // raw value (qint64, double or the name) for QSortFilterProxyModel
    FrameRole,                   // the engine::FrameTable id of the row's function (uint)
};

} // namespace emberline::ui
