#include "ui/models/caller_callee_model.h"

#include "engine/model/units.h"
#include "ui/common/model_roles.h"

namespace emberline::ui {

CallerCalleeModel::CallerCalleeModel(Side side, QObject *parent) : CallerCalleeEdgeModel(side, ColumnCount, parent) {}

QVariant CallerCalleeModel::edgeValue(size_t row, int column, int role) const
{
    const engine::CallerCallee::Edge &e = edge(row);
    const int64_t total = callerCallee().total;
    if (role == SortRole) {
        switch (column) {
        case ValueColumn:
            return QVariant::fromValue<qint64>(e.value);
        case ShareColumn:
            return total == 0 ? 0.0 : 100.0 * double(e.value) / double(total);
        default:
            return {};
        }
    }
    switch (column) {
    case ValueColumn:
        return QString::fromStdString(engine::formatValue(e.value, unit()));
    case ShareColumn:
        return QString::fromStdString(engine::formatPercent(e.value, total));
    default:
        return {};
    }
}

QVariant CallerCalleeModel::valueHeader(int section) const
{
    switch (section) {
    case ValueColumn:
        return tr("Through edge");
    case ShareColumn:
        return tr("% of function");
    default:
        return {};
    }
}

} // namespace emberline::ui
