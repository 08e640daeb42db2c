#include "ui/timeline/live_thread_model.h"

#include "ui/common/model_roles.h"
#include "ui/timeline/time_axis.h"

namespace emberline::ui {

LiveThreadModel::LiveThreadModel(QObject *parent) : QAbstractListModel(parent) {}

void LiveThreadModel::setThreads(const std::vector<engine::LiveThread> &threads)
{
    const int before = static_cast<int>(m_threads.size());
    const int after = static_cast<int>(threads.size());
    if (after < before) { // a new session's threads: start over
        beginResetModel();
        m_threads = threads;
        m_hidden.assign(threads.size(), 0);
        endResetModel();
    } else {
        if (after > before) {
            beginInsertRows({}, before, after - 1);
            m_threads = threads;
            m_hidden.resize(threads.size(), 0);
            endInsertRows();
        } else {
            m_threads = threads;
        }
        if (before > 0)
            Q_EMIT dataChanged(index(0), index(before - 1), {Qt::DisplayRole, Qt::ToolTipRole, SortRole});
    }
    m_totalHits = 0;
    for (const auto &t : m_threads)
        m_totalHits += t.hits;
}

std::vector<uint32_t> LiveThreadModel::hiddenThreads() const
{
    std::vector<uint32_t> out;
    for (size_t i = 0; i < m_hidden.size(); ++i) {
        if (m_hidden[i])
            out.push_back(static_cast<uint32_t>(i));
    }
    return out;
}

void LiveThreadModel::isolate(int row)
{
    if (row < 0 || row >= rowCount())
        return;
    std::vector<uint8_t> hidden(m_threads.size(), 1);
    hidden[static_cast<size_t>(row)] = 0;
    setHidden(std::move(hidden));
}

void LiveThreadModel::showAll()
{
    setHidden(std::vector<uint8_t>(m_threads.size(), 0));
}

void LiveThreadModel::setHidden(std::vector<uint8_t> hidden)
{
    if (hidden == m_hidden)
        return;
    m_hidden = std::move(hidden);
    if (!m_threads.empty())
        Q_EMIT dataChanged(index(0), index(rowCount() - 1), {Qt::CheckStateRole});
    Q_EMIT hiddenThreadsChanged();
}

int LiveThreadModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_threads.size());
}

QVariant LiveThreadModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto row = static_cast<size_t>(index.row());
    const engine::LiveThread &thread = m_threads[row];
    const double share = m_totalHits ? 100.0 * static_cast<double>(thread.hits) / static_cast<double>(m_totalHits) : 0;
    switch (role) {
    case Qt::DisplayRole:
        return tr("%1 — %2%").arg(QString::fromStdString(thread.displayName()), QString::number(share, 'f', 1));
    case Qt::ToolTipRole:
        return tr("%1: %2 samples, %3% of the session's samples. Uncheck to hide it; right-click to isolate it.")
            .arg(QString::fromStdString(thread.displayName()))
            .arg(thread.hits)
            .arg(share, 0, 'f', 1);
    case Qt::CheckStateRole:
        return m_hidden[row] ? Qt::Unchecked : Qt::Checked;
    case Qt::DecorationRole:
        return threadSwatch(static_cast<uint32_t>(row));
    case SortRole:
        return QVariant::fromValue<qulonglong>(thread.hits);
    case Qt::UserRole:
        return static_cast<uint>(row);
    default:
        return {};
    }
}

bool LiveThreadModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (role != Qt::CheckStateRole || !checkIndex(index, CheckIndexOption::IndexIsValid))
        return false;
    const uint8_t hidden = static_cast<Qt::CheckState>(value.toInt()) == Qt::Checked ? 0 : 1;
    uint8_t &slot = m_hidden[static_cast<size_t>(index.row())];
    if (slot == hidden)
        return true;
    slot = hidden;
    Q_EMIT dataChanged(index, index, {Qt::CheckStateRole});
    Q_EMIT hiddenThreadsChanged();
    return true;
}

Qt::ItemFlags LiveThreadModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable;
}

} // namespace emberline::ui
