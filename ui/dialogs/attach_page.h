#pragma once

#include "engine/process/process_list.h"
#include "engine/session/record_session.h"

#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTimer;

namespace emberline::ui {

class MemoryOptions;
class ProcessListModel;

// The "Attach" page of the Profile Process dialog: a live list of processes (pid, user, name, CPU %, command
// line), the user's own first, filterable by text and refreshed every two seconds while the page is shown;
// processes that cannot be traced are greyed out with the reason; a process that only waits for its children (a
// shell running a command) is said to, with the child to choose instead. The memory switch loads Emberline's agent into
// the chosen process. /proc is read on a worker, one scan at a time; the selection follows its pid across refreshes. A
// pid can also be typed.
//
// Thread: GUI thread; scans run on the thread pool.
class AttachPage : public QWidget {
    Q_OBJECT
public:
    explicit AttachPage(QWidget *parent = nullptr);

    QString fillConfig(engine::SessionConfig &config) const;
    void loadSettings();
    void saveSettings() const;
    void setPid(int pid);
    int pid() const;
    ProcessListModel *model() const { return m_model; }
    void refresh();
    bool isScanning() const { return m_scanning; }

Q_SIGNALS:
    void refreshed();

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    void setupUi();
    void connectSignals();
    void applyScan(std::vector<engine::ProcessEntry> processes);
    void selectPid(int pid);
    void showWaiting(); // the chosen process's note, where it only waits for its children

    ProcessListModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QLineEdit *m_filter = nullptr;
    QTableView *m_table = nullptr;
    QLineEdit *m_pid = nullptr;
    MemoryOptions *m_memory = nullptr; // loads Emberline's agent into the process
    QLabel *m_waiting = nullptr;       // "process P (bash) is waiting for its child C (python3)..."
    QTimer *m_timer = nullptr;
    std::shared_ptr<engine::ProcessScanner> m_scanner;
    bool m_scanning = false;
};

} // namespace emberline::ui
