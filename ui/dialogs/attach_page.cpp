#include "ui/dialogs/attach_page.h"
#include "ui/dialogs/memory_options.h"

#include "ui/common/model_roles.h"
#include "ui/models/process_list_model.h"

#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIntValidator>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <unistd.h>

namespace emberline::ui {

AttachPage::AttachPage(QWidget *parent) : QWidget(parent), m_scanner(std::make_shared<engine::ProcessScanner>())
{
    setupUi();
    connectSignals();
}

void AttachPage::setupUi()
{
    setObjectName(QStringLiteral("attachPage"));
    m_model = new ProcessListModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setSortRole(SortRole);
    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("processFilterEdit"));
    m_filter->setPlaceholderText(tr("Filter by pid, user, name or command line"));
    m_filter->setClearButtonEnabled(true);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("processTable"));
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // the scanner's order: own processes first
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    m_table->setColumnWidth(ProcessListModel::Pid, 70);
    m_table->setColumnWidth(ProcessListModel::User, 80);
    m_table->setColumnWidth(ProcessListModel::Name, 140);
    m_table->setColumnWidth(ProcessListModel::Cpu, 60);
    m_table->setColumnWidth(ProcessListModel::CommandLine, 300);
    m_pid = new QLineEdit(this);
    m_pid->setObjectName(QStringLiteral("pidEdit"));
    m_pid->setValidator(new QIntValidator(1, 1 << 30, m_pid));
    m_pid->setPlaceholderText(tr("or type a pid"));
    m_pid->setMaximumWidth(140);
    m_timer = new QTimer(this);
    m_timer->setInterval(2000);

    m_memory = new MemoryOptions(MemoryOptions::Target::Running, this);

    auto *pidRow = new QHBoxLayout;
    pidRow->addWidget(new QLabel(tr("Process &ID:"), this));
    pidRow->addWidget(m_pid);
    pidRow->addSpacing(24);
    pidRow->addWidget(m_memory);
    pidRow->addStretch();
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_filter);
    layout->addWidget(m_table, 1);
    layout->addLayout(pidRow);
    m_waiting = new QLabel(this);
    m_waiting->setObjectName(QStringLiteral("attachWaitingLabel"));
    m_waiting->setWordWrap(true);
    m_waiting->setVisible(false);
    layout->addWidget(m_waiting);
    qobject_cast<QLabel *>(pidRow->itemAt(0)->widget())->setBuddy(m_pid);
}

void AttachPage::connectSignals()
{
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_pid, &QLineEdit::textChanged, this, &AttachPage::showWaiting);
    connect(m_timer, &QTimer::timeout, this, &AttachPage::refresh);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (current.isValid())
                    m_pid->setText(QString::number(current.data(Qt::UserRole).toInt()));
            });
}

void AttachPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refresh();
    m_timer->start();
}

void AttachPage::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_timer->stop();
}

void AttachPage::refresh()
{
    if (m_scanning)
        return; // one scan at a time; the next tick catches up
    m_scanning = true;
    auto *watcher = new QFutureWatcher<std::vector<engine::ProcessEntry>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_scanning = false;
        applyScan(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([scanner = m_scanner] { return scanner->scan(); }));
}

void AttachPage::applyScan(std::vector<engine::ProcessEntry> processes)
{
    const int selected = pid();
    m_model->setProcesses(std::move(processes));
    if (selected > 0)
        selectPid(selected);
    showWaiting();
    Q_EMIT refreshed();
}

void AttachPage::showWaiting()
{
    const engine::ProcessEntry *entry = m_model->processAt(m_model->rowOfPid(pid()));
    if (!entry || entry->waiting.empty()) {
        m_waiting->clear();
        m_waiting->setVisible(false);
        return;
    }
    m_waiting->setText(
        tr("Process %1 (%2) is %3: the work is the child's, not its own. Choose the child to profile it.")
            .arg(entry->pid)
            .arg(QString::fromStdString(entry->name), QString::fromStdString(entry->waiting)));
    m_waiting->setVisible(true);
}

void AttachPage::selectPid(int pid)
{
    const int row = m_model->rowOfPid(pid);
    const QModelIndex index = row < 0 ? QModelIndex() : m_proxy->mapFromSource(m_model->index(row, 0));
    QSignalBlocker block(m_table->selectionModel());
    if (index.isValid()) {
        m_table->selectionModel()->setCurrentIndex(index,
                                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    } else {
        m_table->clearSelection();
    }
}

void AttachPage::setPid(int pid)
{
    m_pid->setText(QString::number(pid));
    selectPid(pid);
}

int AttachPage::pid() const
{
    return m_pid->text().toInt();
}

QString AttachPage::fillConfig(engine::SessionConfig &config) const
{
    const int target = pid();
    if (target <= 0)
        return tr("Choose a process to attach to, or type its pid.");
    if (target == static_cast<int>(getpid()))
        return tr("Emberline cannot profile itself.");
    if (!engine::processExists(target))
        return tr("Process %1 no longer exists.").arg(target);
    const int row = m_model->rowOfPid(target);
    if (const engine::ProcessEntry *entry = m_model->processAt(row); entry && !entry->traceable)
        return tr("Process %1 cannot be profiled: %2.").arg(target).arg(QString::fromStdString(entry->reason));
    config.command.clear();
    config.pid = target;
    config.memory = m_memory->memory();
    config.allocInterval = m_memory->allocInterval();
    return {};
}

void AttachPage::loadSettings()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("profileDialog"));
    m_memory->load(settings, QStringLiteral("attach"));
}

void AttachPage::saveSettings() const
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("profileDialog"));
    m_memory->save(settings, QStringLiteral("attach"));
}

} // namespace emberline::ui
