#include "ui/models/function_filter_proxy.h"

#include "ui/common/model_roles.h"

#include <cmath>

namespace emberline::ui {

FunctionFilterProxy::FunctionFilterProxy(QObject *parent) : QSortFilterProxyModel(parent)
{
    setSortRole(SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
    setFilterKeyColumn(0);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
    setDynamicSortFilter(true);
}

void FunctionFilterProxy::setNameFilter(const QString &text)
{
    setFilterFixedString(text.trimmed());
}

void FunctionFilterProxy::setSortByMagnitude(bool magnitude)
{
    if (magnitude == m_byMagnitude)
        return;
    m_byMagnitude = magnitude;
    invalidate(); // sorts again by the same column and order, with the new comparison
    if (isChangeColumn(sortColumn()))
        Q_EMIT headerDataChanged(Qt::Horizontal, sortColumn(), sortColumn());
}

QVariant FunctionFilterProxy::headerData(int section, Qt::Orientation orientation, int role) const
{
    QVariant title = QSortFilterProxyModel::headerData(section, orientation, role);
    if (orientation != Qt::Horizontal || !isChangeColumn(section))
        return title;
    // The sorted change column says when it is sorted by size: "Self change ±".
    const bool bySize = m_byMagnitude && section == sortColumn();
    if (role == Qt::DisplayRole && bySize)
        return title.toString() + QStringLiteral(" ±");
    if (role == Qt::ToolTipRole)
        return bySize ? tr("Sorted by the size of the change, growth and shrink alike. Click to put the largest "
                           "growth first, again for the largest shrink first.")
                      : tr("Click to sort by the size of the change, growth and shrink alike; again for the largest "
                           "growth first, again for the largest shrink first.");
    return title;
}

bool FunctionFilterProxy::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    if (!m_byMagnitude || !isChangeColumn(left.column()))
        return QSortFilterProxyModel::lessThan(left, right);
    const QVariant a = left.data(SortRole);
    const QVariant b = right.data(SortRole);
    if (a.typeId() == QMetaType::LongLong && b.typeId() == QMetaType::LongLong) {
        const qint64 x = a.toLongLong();
        const qint64 y = b.toLongLong();
        // Equal sizes: the growth after the shrink, so that the growth comes first in descending order.
        return std::llabs(x) != std::llabs(y) ? std::llabs(x) < std::llabs(y) : x < y;
    }
    const double x = a.toDouble();
    const double y = b.toDouble();
    return std::fabs(x) != std::fabs(y) ? std::fabs(x) < std::fabs(y) : x < y;
}

} // namespace emberline::ui
