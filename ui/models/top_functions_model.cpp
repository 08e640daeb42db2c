#include "ui/models/top_functions_model.h"

#include "engine/model/units.h"
#include "ui/common/frame_source.h"
#include "ui/common/model_roles.h"

namespace emberline::ui {

TopFunctionsModel::TopFunctionsModel(QObject *parent) : QAbstractTableModel(parent) {}

void TopFunctionsModel::setFunctions(std::shared_ptr<const engine::FunctionTable> functions,
                                     std::shared_ptr<const engine::FrameTable> frames, const std::string &unit)
{
    beginResetModel();
    m_functions = std::move(functions);
    m_frames = std::move(frames);
    m_unit = unit;
    m_names.clear();
    if (m_functions && m_frames) {
        m_names.reserve(m_functions->rows().size());
        for (const auto &row : m_functions->rows())
            m_names.push_back(QString::fromStdString(m_frames->frame(row.frame).name));
    }
    endResetModel();
}

void TopFunctionsModel::clear()
{
    setFunctions(nullptr, nullptr, {});
}

int TopFunctionsModel::rowOfFrame(uint32_t frame) const
{
    if (!m_functions)
        return -1;
    const auto &rows = m_functions->rows();
    for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].frame == frame)
            return static_cast<int>(i);
    }
    return -1;
}

uint32_t TopFunctionsModel::frameAt(int row) const
{
    if (!m_functions || row < 0 || static_cast<size_t>(row) >= m_functions->rows().size())
        return engine::kNoIndex;
    return m_functions->rows()[static_cast<size_t>(row)].frame;
}

int TopFunctionsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_functions ? 0 : static_cast<int>(m_functions->rows().size());
}

int TopFunctionsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TopFunctionsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &row = m_functions->rows()[static_cast<size_t>(index.row())];
    const int64_t grand = m_functions->grandTotal();
    const auto share = [grand](int64_t v) { return grand == 0 ? 0.0 : 100.0 * double(v) / double(grand); };
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return m_names[static_cast<size_t>(index.row())];
        case SelfColumn:
            return QString::fromStdString(engine::formatValue(row.self, m_unit));
        case TotalColumn:
            return QString::fromStdString(engine::formatValue(row.total, m_unit));
        case SelfPercentColumn:
            return QString::fromStdString(engine::formatPercent(row.self, grand));
        case TotalPercentColumn:
            return QString::fromStdString(engine::formatPercent(row.total, grand));
        }
        break;
    case SortRole:
        switch (index.column()) {
        case NameColumn:
            return m_names[static_cast<size_t>(index.row())];
        case SelfColumn:
            return QVariant::fromValue<qint64>(row.self);
        case TotalColumn:
            return QVariant::fromValue<qint64>(row.total);
        case SelfPercentColumn:
            return share(row.self);
        case TotalPercentColumn:
            return share(row.total);
        }
        break;
    case FrameRole:
        return row.frame;
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                            : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole: {
        const engine::Frame &frame = m_frames->frame(row.frame);
        QString tip = m_names[static_cast<size_t>(index.row())];
        if (const QString source = frameSourceText(frame); !source.isEmpty())
            tip += QLatin1Char('\n') + source;
        return tip;
    }
    default:
        break;
    }
    return {};
}

QVariant TopFunctionsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn:
        return tr("Function");
    case SelfColumn:
        return tr("Self");
    case TotalColumn:
        return tr("Total");
    case SelfPercentColumn:
        return tr("Self %");
    case TotalPercentColumn:
        return tr("Total %");
    }
    return {};
}

} // namespace emberline::ui
