#pragma once

#include "engine/process/process_list.h"

#include <QAbstractTableModel>

#include <vector>

namespace emberline::ui {

// The processes the attach page lists: pid, user, name, CPU %, command line and, for those that cannot be
// traced, the reason (those rows are disabled, so views grey them out). Rows keep the scanner's order (own
// processes first); the page's proxy filters and sorts.
//
// Thread: GUI thread; the entries are scanned on a worker and handed over by value.
class ProcessListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Pid, User, Name, Cpu, CommandLine, Note, ColumnCount };

    explicit ProcessListModel(QObject *parent = nullptr);

    void setProcesses(std::vector<engine::ProcessEntry> processes);
    const engine::ProcessEntry *processAt(int row) const;
    int rowOfPid(int pid) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

private:
    std::vector<engine::ProcessEntry> m_processes;
};

} // namespace emberline::ui
