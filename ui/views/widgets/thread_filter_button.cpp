#include "ui/views/widgets/thread_filter_button.h"

#include <QHBoxLayout>
#include <QListView>
#include <QMenu>
#include <QVBoxLayout>
#include <QWidgetAction>

namespace emberline::ui {

ThreadFilterButton::ThreadFilterButton(QWidget *parent) : QToolButton(parent)
{
    setupUi();
    connectSignals();
}

void ThreadFilterButton::setupUi()
{
    setObjectName(QStringLiteral("threadFilterButton"));
    setPopupMode(QToolButton::InstantPopup);
    setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_model = new ThreadListModel(this);

    auto *menu = new QMenu(this);
    auto *panel = new QWidget(menu);
    auto *layout = new QVBoxLayout(panel);
    layout->setContentsMargins(6, 6, 6, 6);
    auto *buttons = new QHBoxLayout;
    m_all = new QToolButton(panel);
    m_all->setObjectName(QStringLiteral("threadFilterAll"));
    m_all->setText(tr("All threads"));
    m_none = new QToolButton(panel);
    m_none->setObjectName(QStringLiteral("threadFilterNone"));
    m_none->setText(tr("None"));
    buttons->addWidget(m_all);
    buttons->addWidget(m_none);
    buttons->addStretch();
    layout->addLayout(buttons);
    m_list = new QListView(panel);
    m_list->setObjectName(QStringLiteral("threadList"));
    m_list->setModel(m_model);
    m_list->setMinimumSize(320, 240);
    layout->addWidget(m_list);
    auto *action = new QWidgetAction(menu);
    action->setDefaultWidget(panel);
    menu->addAction(action);
    setMenu(menu);
    updateText();
}

void ThreadFilterButton::connectSignals()
{
    connect(m_all, &QToolButton::clicked, this, [this] { m_model->setAllChecked(true); });
    connect(m_none, &QToolButton::clicked, this, [this] { m_model->setAllChecked(false); });
    connect(m_model, &ThreadListModel::checkedThreadsChanged, this, [this] {
        updateText();
        Q_EMIT selectionChanged();
    });
}

void ThreadFilterButton::setThreads(std::shared_ptr<const engine::ThreadIndex> threads)
{
    m_model->setThreads(std::move(threads));
    updateText();
}

void ThreadFilterButton::updateText()
{
    const int total = m_model->rowCount();
    const int checked = m_model->checkedCount();
    if (checked == total)
        setText(total == 1 ? tr("1 thread") : tr("All %1 threads").arg(total)); // not "All 1 threads"
    else
        setText(tr("%1 of %2 threads").arg(checked).arg(total));
}

} // namespace emberline::ui
