#include "ui/models/diff_caller_callee_model.h"

#include "engine/model/units.h"
#include "ui/models/diff_functions_model.h"
#include "ui/models/model_roles.h"

namespace emberline::ui {

DiffCallerCalleeModel::DiffCallerCalleeModel(Side side, QObject *parent) : QAbstractTableModel(parent), m_side(side)
{
}

void DiffCallerCalleeModel::setCallerCallee(std::shared_ptr<const engine::DiffCallerCallee> data,
                                            std::shared_ptr<const engine::FrameTable> frames,
                                            const std::string &unit)
{
    beginResetModel();
    m_data = std::move(data);
    m_frames = std::move(frames);
    m_unit = unit;
    if (!m_frames)
        m_data.reset();
    endResetModel();
}

void DiffCallerCalleeModel::clear()
{
    setCallerCallee(nullptr, nullptr, {});
}

const std::vector<engine::DiffCallerCallee::Edge> &DiffCallerCalleeModel::edges() const
{
    return m_side == Side::Callers ? m_data->callers : m_data->callees;
}

uint32_t DiffCallerCalleeModel::frameAt(int row) const
{
    if (!m_data || row < 0 || static_cast<size_t>(row) >= edges().size())
        return engine::kNoIndex;
    return edges()[static_cast<size_t>(row)].frame;
}

int DiffCallerCalleeModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_data ? 0 : static_cast<int>(edges().size());
}

int DiffCallerCalleeModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiffCallerCalleeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &edge = edges()[static_cast<size_t>(index.row())];
    const engine::Frame &frame = m_frames->frame(edge.frame);
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn: return QString::fromStdString(frame.name);
        case BaseColumn: return QString::fromStdString(engine::formatValue(edge.base, m_unit));
        case NewColumn: return QString::fromStdString(engine::formatValue(edge.next, m_unit));
        case ChangeColumn: return QString::fromStdString(engine::formatChange(edge.next - edge.base, m_unit));
        case ChangePercentColumn: return QString::fromStdString(engine::formatChangePercent(edge.base, edge.next));
        default: return {};
        }
    case SortRole:
        switch (index.column()) {
        case NameColumn: return QString::fromStdString(frame.name);
        case BaseColumn: return QVariant::fromValue<qint64>(edge.base);
        case NewColumn: return QVariant::fromValue<qint64>(edge.next);
        case ChangeColumn: return QVariant::fromValue<qint64>(edge.next - edge.base);
        case ChangePercentColumn: return changePercentSortValue(edge.base, edge.next);
        default: return {};
        }
    case FrameRole:
        return edge.frame;
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                            : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        return frame.file.empty() ? QString::fromStdString(frame.name)
                                  : QString::fromStdString(frame.name + "\n" + frame.file);
    default:
        return {};
    }
}

QVariant DiffCallerCalleeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn: return m_side == Side::Callers ? tr("Caller") : tr("Callee");
    case BaseColumn: return tr("Base");
    case NewColumn: return tr("New");
    case ChangeColumn: return tr("Change");
    case ChangePercentColumn: return tr("Change %");
    default: return {};
    }
}

} // namespace emberline::ui
