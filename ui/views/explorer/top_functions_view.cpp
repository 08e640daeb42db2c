#include "ui/views/explorer/top_functions_view.h"

#include "ui/common/model_roles.h"
#include "ui/models/function_filter_proxy.h"
#include "ui/models/top_functions_model.h"

#include <QFontMetrics>
#include <QHeaderView>
#include <QLineEdit>
#include <QScrollBar>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

namespace emberline::ui {

TopFunctionsView::TopFunctionsView(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void TopFunctionsView::setupUi()
{
    setObjectName(QStringLiteral("topFunctionsView"));
    m_model = new TopFunctionsModel(this);
    m_proxy = new FunctionFilterProxy(this);
    m_proxy->setSourceModel(m_model);

    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("functionFilter"));
    m_filter->setPlaceholderText(tr("Filter functions"));
    m_filter->setClearButtonEnabled(true);

    m_table = new QTreeView(this);
    m_table->setObjectName(QStringLiteral("topFunctionsTable"));
    m_table->setModel(m_proxy);
    m_table->setRootIsDecorated(false);
    m_table->setUniformRowHeights(true);
    m_table->setAlternatingRowColors(true);
    m_table->setSortingEnabled(true);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->sortByColumn(TopFunctionsModel::SelfColumn, Qt::DescendingOrder);
    QHeaderView *header = m_table->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(TopFunctionsModel::NameColumn, QHeaderView::Stretch);
    // Fixed widths wide enough for any value, rather than ResizeToContents: measuring every row's text again
    // after each live refresh would cost the GUI thread milliseconds per thousand rows.
    const QFontMetrics metrics(m_table->font());
    const int valueWidth = metrics.horizontalAdvance(QStringLiteral("99999999999 ")) + 24;
    const int percentWidth = metrics.horizontalAdvance(QStringLiteral("100.00% ")) + 24;
    for (int c = TopFunctionsModel::SelfColumn; c < TopFunctionsModel::ColumnCount; ++c) {
        header->setSectionResizeMode(c, QHeaderView::Interactive);
        const bool percent = c == TopFunctionsModel::SelfPercentColumn || c == TopFunctionsModel::TotalPercentColumn;
        const int title = header->fontMetrics().horizontalAdvance(
                              m_model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString()) +
                          32;
        header->resizeSection(c, std::max(percent ? percentWidth : valueWidth, title));
    }

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(m_filter);
    layout->addWidget(m_table);
}

void TopFunctionsView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitColumns();
}

void TopFunctionsView::fitColumns()
{
    const QHeaderView *header = m_table->header();
    int numbers = 0;
    for (int c = TopFunctionsModel::SelfColumn; c < TopFunctionsModel::ColumnCount; ++c)
        numbers += header->sectionSize(c);
    const int name = m_table->fontMetrics().averageCharWidth() * 24;
    const bool room = m_table->width() - m_table->verticalScrollBar()->sizeHint().width() - numbers >= name;
    for (int c : {int(TopFunctionsModel::SelfColumn), int(TopFunctionsModel::TotalColumn)}) {
        if (m_table->isColumnHidden(c) == room)
            m_table->setColumnHidden(c, !room);
    }
}

void TopFunctionsView::connectSignals()
{
    // A new table resets the header's sections: hidden again if the pane is still narrow.
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &TopFunctionsView::fitColumns);
    connect(m_table->header(), &QHeaderView::sectionCountChanged, this, &TopFunctionsView::fitColumns);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &FunctionFilterProxy::setNameFilter);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (current.isValid())
                    Q_EMIT frameSelected(current.data(FrameRole).toUInt());
            });
    connect(m_table, &QTreeView::customContextMenuRequested, this, [this](const QPoint &pos) {
        const QModelIndex index = m_table->indexAt(pos);
        if (index.isValid())
            Q_EMIT frameContextMenuRequested(index.data(FrameRole).toUInt(), m_table->viewport()->mapToGlobal(pos));
    });
}

void TopFunctionsView::selectFrame(uint32_t frame, bool revealIfFiltered)
{
    const int sourceRow = m_model->rowOfFrame(frame);
    if (sourceRow < 0)
        return;
    QModelIndex index = m_proxy->mapFromSource(m_model->index(sourceRow, 0));
    if (!index.isValid()) {
        if (!revealIfFiltered)
            return;
        m_filter->clear();
        index = m_proxy->mapFromSource(m_model->index(sourceRow, 0));
    }
    m_table->setCurrentIndex(index);
    m_table->scrollTo(index);
}

uint32_t TopFunctionsView::selectedFrame() const
{
    const QModelIndex current = m_table->currentIndex();
    return current.isValid() ? current.data(FrameRole).toUInt() : UINT32_MAX;
}

} // namespace emberline::ui
