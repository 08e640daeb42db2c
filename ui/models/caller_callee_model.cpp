#include "ui/models/caller_callee_model.h"

#include "engine/model/units.h"
#include "ui/models/model_roles.h"

namespace emberline::ui {

CallerCalleeModel::CallerCalleeModel(Side side, QObject *parent) : QAbstractTableModel(parent), m_side(side) {}

void CallerCalleeModel::setCallerCallee(std::shared_ptr<const engine::CallerCallee> data,
                                        std::shared_ptr<const engine::FrameTable> frames, const std::string &unit)
{
    beginResetModel();
    m_data = std::move(data);
    m_frames = std::move(frames);
    m_unit = unit;
    if (!m_frames)
        m_data.reset();
    endResetModel();
}

void CallerCalleeModel::clear()
{
    setCallerCallee(nullptr, nullptr, {});
}

const std::vector<engine::CallerCallee::Edge> &CallerCalleeModel::edges() const
{
    return m_side == Side::Callers ? m_data->callers : m_data->callees;
}

uint32_t CallerCalleeModel::frameAt(int row) const
{
    if (!m_data || row < 0 || static_cast<size_t>(row) >= edges().size())
        return engine::kNoIndex;
    return edges()[static_cast<size_t>(row)].frame;
}

int CallerCalleeModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_data ? 0 : static_cast<int>(edges().size());
}

int CallerCalleeModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CallerCalleeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &edge = edges()[static_cast<size_t>(index.row())];
    const engine::Frame &frame = m_frames->frame(edge.frame);
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn: return QString::fromStdString(frame.name);
        case ValueColumn: return QString::fromStdString(engine::formatValue(edge.value, m_unit));
        case ShareColumn: return QString::fromStdString(engine::formatPercent(edge.value, m_data->total));
        }
        break;
    case SortRole:
        switch (index.column()) {
        case NameColumn: return QString::fromStdString(frame.name);
        case ValueColumn: return QVariant::fromValue<qint64>(edge.value);
        case ShareColumn:
            return m_data->total == 0 ? 0.0 : 100.0 * double(edge.value) / double(m_data->total);
        }
        break;
    case FrameRole:
        return edge.frame;
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                            : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        return frame.file.empty() ? QString::fromStdString(frame.name)
                                  : QString::fromStdString(frame.name + "\n" + frame.file);
    default:
        break;
    }
    return {};
}

QVariant CallerCalleeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn: return m_side == Side::Callers ? tr("Caller") : tr("Callee");
    case ValueColumn: return tr("Through edge");
    case ShareColumn: return tr("% of function");
    }
    return {};
}

} // namespace emberline::ui
