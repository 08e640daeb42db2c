#include "ui/models/process_list_model.h"

#include "ui/common/model_roles.h"

namespace emberline::ui {

ProcessListModel::ProcessListModel(QObject *parent) : QAbstractTableModel(parent) {}

void ProcessListModel::setProcesses(std::vector<engine::ProcessEntry> processes)
{
    beginResetModel();
    m_processes = std::move(processes);
    endResetModel();
}

const engine::ProcessEntry *ProcessListModel::processAt(int row) const
{
    return row >= 0 && static_cast<size_t>(row) < m_processes.size() ? &m_processes[static_cast<size_t>(row)] : nullptr;
}

int ProcessListModel::rowOfPid(int pid) const
{
    for (size_t i = 0; i < m_processes.size(); ++i) {
        if (m_processes[i].pid == pid)
            return static_cast<int>(i);
    }
    return -1;
}

int ProcessListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_processes.size());
}

int ProcessListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProcessListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const engine::ProcessEntry &p = m_processes[static_cast<size_t>(index.row())];
    if (role == Qt::ToolTipRole) {
        const QString command = QString::fromStdString(p.commandLine);
        return p.traceable ? command : tr("Cannot be profiled: %1").arg(QString::fromStdString(p.reason));
    }
    if (role == Qt::UserRole)
        return p.pid;
    if (role == Qt::TextAlignmentRole && (index.column() == Pid || index.column() == Cpu))
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    switch (index.column()) {
    case Pid:
        return p.pid;
    case User:
        return QString::fromStdString(p.user);
    case Name:
        return QString::fromStdString(p.name);
    case Cpu:
        return role == SortRole ? QVariant(p.cpuPercent) : QVariant(QString::number(p.cpuPercent, 'f', 1));
    case CommandLine:
        return QString::fromStdString(p.commandLine);
    case Note:
        return QString::fromStdString(p.reason.empty() ? p.waiting : p.reason);
    default:
        return {};
    }
}

QVariant ProcessListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Pid:
        return tr("PID");
    case User:
        return tr("User");
    case Name:
        return tr("Name");
    case Cpu:
        return tr("CPU %");
    case CommandLine:
        return tr("Command line");
    case Note:
        return tr("Note");
    default:
        return {};
    }
}

Qt::ItemFlags ProcessListModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return Qt::NoItemFlags;
    // Processes that cannot be traced stay visible (with their reason) but cannot be chosen.
    return m_processes[static_cast<size_t>(index.row())].traceable ? Qt::ItemIsEnabled | Qt::ItemIsSelectable
                                                                   : Qt::NoItemFlags;
}

} // namespace emberline::ui
