#include "ui/models/diff_functions_model.h"

#include "ui/common/frame_source.h"
#include "ui/common/text_colors.h"

#include "engine/model/units.h"
#include "ui/common/model_roles.h"

#include <QColor>

#include <limits>

namespace emberline::ui {

double changePercentSortValue(int64_t base, int64_t next)
{
    if (const auto pct = engine::changePercent(base, next))
        return *pct;
    return next == 0 ? 0.0
                     : (next > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
}

DiffFunctionsModel::DiffFunctionsModel(QObject *parent) : QAbstractTableModel(parent) {}

void DiffFunctionsModel::setComparison(std::shared_ptr<const engine::Comparison> comparison)
{
    beginResetModel();
    m_comparison = std::move(comparison);
    m_names.clear();
    if (m_comparison) {
        m_names.reserve(m_comparison->functions.size());
        for (const engine::DiffFunction &row : m_comparison->functions)
            m_names.push_back(QString::fromStdString(m_comparison->frames->frame(row.frame).name));
    }
    endResetModel();
}

int DiffFunctionsModel::rowOfFrame(uint32_t frame) const
{
    if (!m_comparison)
        return -1;
    const auto &rows = m_comparison->functions;
    for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].frame == frame)
            return static_cast<int>(i);
    }
    return -1;
}

uint32_t DiffFunctionsModel::frameAt(int row) const
{
    if (!m_comparison || row < 0 || static_cast<size_t>(row) >= m_comparison->functions.size())
        return engine::kNoIndex;
    return m_comparison->functions[static_cast<size_t>(row)].frame;
}

int DiffFunctionsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_comparison ? 0 : static_cast<int>(m_comparison->functions.size());
}

int DiffFunctionsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiffFunctionsModel::display(const engine::DiffFunction &row, int column) const
{
    const std::string &unit = m_comparison->unit;
    const auto value = [&](int64_t v) { return QString::fromStdString(engine::formatValue(v, unit)); };
    const auto change = [&](int64_t v) { return QString::fromStdString(engine::formatChange(v, unit)); };
    const auto pct = [](int64_t b, int64_t n) { return QString::fromStdString(engine::formatChangePercent(b, n)); };
    switch (column) {
    case BaseSelfColumn:
        return value(row.baseSelf);
    case NewSelfColumn:
        return value(row.newSelf);
    case SelfChangeColumn:
        return change(row.newSelf - row.baseSelf);
    case SelfChangePercentColumn:
        return pct(row.baseSelf, row.newSelf);
    case BaseTotalColumn:
        return value(row.baseTotal);
    case NewTotalColumn:
        return value(row.newTotal);
    case TotalChangeColumn:
        return change(row.newTotal - row.baseTotal);
    case TotalChangePercentColumn:
        return pct(row.baseTotal, row.newTotal);
    default:
        return {};
    }
}

QVariant DiffFunctionsModel::sortValue(const engine::DiffFunction &row, int column) const
{
    switch (column) {
    case BaseSelfColumn:
        return QVariant::fromValue<qint64>(row.baseSelf);
    case NewSelfColumn:
        return QVariant::fromValue<qint64>(row.newSelf);
    case SelfChangeColumn:
        return QVariant::fromValue<qint64>(row.newSelf - row.baseSelf);
    case SelfChangePercentColumn:
        return changePercentSortValue(row.baseSelf, row.newSelf);
    case BaseTotalColumn:
        return QVariant::fromValue<qint64>(row.baseTotal);
    case NewTotalColumn:
        return QVariant::fromValue<qint64>(row.newTotal);
    case TotalChangeColumn:
        return QVariant::fromValue<qint64>(row.newTotal - row.baseTotal);
    case TotalChangePercentColumn:
        return changePercentSortValue(row.baseTotal, row.newTotal);
    default:
        return {};
    }
}

QVariant DiffFunctionsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const engine::DiffFunction &row = m_comparison->functions[static_cast<size_t>(index.row())];
    const QString &name = m_names[static_cast<size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return index.column() == NameColumn ? QVariant(name) : display(row, index.column());
    case SortRole:
        return index.column() == NameColumn ? QVariant(name) : sortValue(row, index.column());
    case FrameRole:
        return row.frame;
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                            : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole: {
        // The change columns read like the flame graph: red grew, blue shrank.
        const bool self = index.column() == SelfChangeColumn || index.column() == SelfChangePercentColumn;
        const bool total = index.column() == TotalChangeColumn || index.column() == TotalChangePercentColumn;
        const int64_t change = self ? row.newSelf - row.baseSelf : (total ? row.newTotal - row.baseTotal : 0);
        if (change == 0)
            return {};
        return change > 0 ? grewText() : shrankText();
    }
    case Qt::ToolTipRole: {
        const QString source = frameSourceText(m_comparison->frames->frame(row.frame));
        return source.isEmpty() ? name : name + QLatin1Char('\n') + source;
    }
    default:
        return {};
    }
}

QVariant DiffFunctionsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn:
        return tr("Function");
    case BaseSelfColumn:
        return tr("Base self");
    case NewSelfColumn:
        return tr("New self");
    case SelfChangeColumn:
        return tr("Self change");
    case SelfChangePercentColumn:
        return tr("Self change %");
    case BaseTotalColumn:
        return tr("Base total");
    case NewTotalColumn:
        return tr("New total");
    case TotalChangeColumn:
        return tr("Total change");
    case TotalChangePercentColumn:
        return tr("Total change %");
    default:
        return {};
    }
}

} // namespace emberline::ui
