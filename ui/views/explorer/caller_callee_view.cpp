#include "ui/views/explorer/caller_callee_view.h"

#include "engine/model/units.h"
#include "ui/common/model_roles.h"
#include "ui/models/caller_callee_model.h"
#include "ui/models/function_filter_proxy.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

namespace emberline::ui {

CallerCalleeView::CallerCalleeView(QWidget *parent) : QWidget(parent)
{
    setupUi();
}

void CallerCalleeView::setupUi()
{
    setObjectName(QStringLiteral("callerCalleeView"));
    m_callers = new CallerCalleeModel(CallerCalleeModel::Side::Callers, this);
    m_callees = new CallerCalleeModel(CallerCalleeModel::Side::Callees, this);
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("callerCalleeTitle"));
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(m_title);
    layout->addWidget(createTable(m_callers, QStringLiteral("callersTable")));
    layout->addWidget(createTable(m_callees, QStringLiteral("calleesTable")));
    clear();
}

QTreeView *CallerCalleeView::createTable(CallerCalleeModel *model, const QString &objectName)
{
    auto *proxy = new FunctionFilterProxy(this);
    proxy->setSourceModel(model);
    auto *table = new QTreeView(this);
    table->setObjectName(objectName);
    table->setModel(proxy);
    table->setRootIsDecorated(false);
    table->setUniformRowHeights(true);
    table->setAlternatingRowColors(true);
    table->setSortingEnabled(true);
    table->sortByColumn(CallerCalleeModel::ValueColumn, Qt::DescendingOrder);
    table->header()->setStretchLastSection(false);
    table->header()->setSectionResizeMode(CallerCalleeModel::NameColumn, QHeaderView::Stretch);
    table->header()->setSectionResizeMode(CallerCalleeModel::ValueColumn, QHeaderView::ResizeToContents);
    table->header()->setSectionResizeMode(CallerCalleeModel::ShareColumn, QHeaderView::ResizeToContents);
    connect(table, &QTreeView::activated, this,
            [this](const QModelIndex &index) { Q_EMIT frameActivated(index.data(FrameRole).toUInt()); });
    return table;
}

void CallerCalleeView::setCallerCallee(std::shared_ptr<const engine::CallerCallee> data,
                                       std::shared_ptr<const engine::FrameTable> frames, const std::string &unit)
{
    if (!data || !frames) {
        clear();
        return;
    }
    m_title->setText(tr("%1 — self %2, total %3")
                         .arg(QString::fromStdString(frames->frame(data->frame).name),
                              QString::fromStdString(engine::formatValue(data->self, unit)),
                              QString::fromStdString(engine::formatValue(data->total, unit))));
    m_callers->setCallerCallee(data, frames, unit);
    m_callees->setCallerCallee(std::move(data), std::move(frames), unit);
}

void CallerCalleeView::clear()
{
    m_title->setText(tr("Select a function to see its callers and callees."));
    m_callers->clear();
    m_callees->clear();
}

} // namespace emberline::ui
