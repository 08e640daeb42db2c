#include "ui/models/diff_caller_callee_model.h"

#include "engine/model/units.h"
#include "ui/common/model_roles.h"
#include "ui/models/diff_functions_model.h"

namespace emberline::ui {

DiffCallerCalleeModel::DiffCallerCalleeModel(Side side, QObject *parent)
    : CallerCalleeEdgeModel(side, ColumnCount, parent)
{
}

QVariant DiffCallerCalleeModel::edgeValue(size_t row, int column, int role) const
{
    const engine::DiffCallerCallee::Edge &e = edge(row);
    if (role == SortRole) {
        switch (column) {
        case BaseColumn:
            return QVariant::fromValue<qint64>(e.base);
        case NewColumn:
            return QVariant::fromValue<qint64>(e.next);
        case ChangeColumn:
            return QVariant::fromValue<qint64>(e.next - e.base);
        case ChangePercentColumn:
            return changePercentSortValue(e.base, e.next);
        default:
            return {};
        }
    }
    switch (column) {
    case BaseColumn:
        return QString::fromStdString(engine::formatValue(e.base, unit()));
    case NewColumn:
        return QString::fromStdString(engine::formatValue(e.next, unit()));
    case ChangeColumn:
        return QString::fromStdString(engine::formatChange(e.next - e.base, unit()));
    case ChangePercentColumn:
        return QString::fromStdString(engine::formatChangePercent(e.base, e.next));
    default:
        return {};
    }
}

QVariant DiffCallerCalleeModel::valueHeader(int section) const
{
    switch (section) {
    case BaseColumn:
        return tr("Base");
    case NewColumn:
        return tr("New");
    case ChangeColumn:
        return tr("Change");
    case ChangePercentColumn:
        return tr("Change %");
    default:
        return {};
    }
}

} // namespace emberline::ui
