#include "ui/models/thread_list_model.h"

#include "ui/common/model_roles.h"

#include <algorithm>
#include <numeric>

namespace emberline::ui {

ThreadListModel::ThreadListModel(QObject *parent) : QAbstractListModel(parent) {}

void ThreadListModel::setThreads(std::shared_ptr<const engine::ThreadIndex> threads)
{
    beginResetModel();
    m_threads = std::move(threads);
    const size_t n = m_threads ? m_threads->threads().size() : 0;
    m_order.resize(n);
    std::iota(m_order.begin(), m_order.end(), 0u);
    if (m_threads) {
        const auto &list = m_threads->threads();
        std::stable_sort(m_order.begin(), m_order.end(),
                         [&](uint32_t a, uint32_t b) { return list[a].samples > list[b].samples; });
    }
    m_checked.assign(n, 1);
    endResetModel();
}

std::vector<uint32_t> ThreadListModel::checkedThreads() const
{
    const int checked = checkedCount();
    if (checked == static_cast<int>(m_order.size()))
        return {};
    if (checked == 0)
        return {engine::kNoIndex}; // an ordinal no sample has: the filter keeps nothing
    std::vector<uint32_t> out;
    for (size_t row = 0; row < m_order.size(); ++row) {
        if (m_checked[row])
            out.push_back(m_order[row]);
    }
    std::sort(out.begin(), out.end());
    return out;
}

int ThreadListModel::checkedCount() const
{
    return static_cast<int>(std::count(m_checked.begin(), m_checked.end(), uint8_t(1)));
}

void ThreadListModel::setAllChecked(bool checked)
{
    if (m_checked.empty())
        return;
    std::fill(m_checked.begin(), m_checked.end(), checked ? 1 : 0);
    Q_EMIT dataChanged(index(0), index(rowCount() - 1), {Qt::CheckStateRole});
    Q_EMIT checkedThreadsChanged();
}

int ThreadListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_order.size());
}

QVariant ThreadListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto row = static_cast<size_t>(index.row());
    const engine::ThreadInfo &info = m_threads->threads()[m_order[row]];
    switch (role) {
    case Qt::DisplayRole: {
        const QString name = QString::fromStdString(info.displayName());
        return info.samples == 1 ? tr("%1 — 1 sample").arg(name)
                                 : tr("%1 — %2 samples").arg(name, QString::number(info.samples));
    }
    case Qt::CheckStateRole:
        return m_checked[row] ? Qt::Checked : Qt::Unchecked;
    case SortRole:
        return QVariant::fromValue<qulonglong>(info.samples);
    case Qt::UserRole:
        return m_order[row];
    default:
        return {};
    }
}

bool ThreadListModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (role != Qt::CheckStateRole || !checkIndex(index, CheckIndexOption::IndexIsValid))
        return false;
    const uint8_t checked = static_cast<Qt::CheckState>(value.toInt()) == Qt::Checked ? 1 : 0;
    uint8_t &slot = m_checked[static_cast<size_t>(index.row())];
    if (slot == checked)
        return true;
    slot = checked;
    Q_EMIT dataChanged(index, index, {Qt::CheckStateRole});
    Q_EMIT checkedThreadsChanged();
    return true;
}

Qt::ItemFlags ThreadListModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable;
}

} // namespace emberline::ui
