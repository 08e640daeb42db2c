#include "ui/views/compare/diff_tables_view.h"

#include "engine/model/units.h"
#include "ui/common/model_roles.h"
#include "ui/models/diff_caller_callee_model.h"
#include "ui/models/diff_functions_model.h"
#include "ui/models/function_filter_proxy.h"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

namespace emberline::ui {
namespace {

// Fixed widths wide enough for any value: measuring every row again after each comparison would cost the GUI
// thread milliseconds per thousand rows.
void sizeValueColumns(QTreeView *table, int first, int count)
{
    QHeaderView *header = table->header();
    header->setStretchLastSection(false);
    // The name keeps room to be read; the table scrolls sideways when the pane is narrower than its columns.
    header->setSectionResizeMode(0, QHeaderView::Interactive);
    header->resizeSection(0, table->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 36);
    const int valueWidth = table->fontMetrics().horizontalAdvance(QStringLiteral("+999.99 ms")) + 20;
    for (int c = first; c < count; ++c) {
        header->setSectionResizeMode(c, QHeaderView::Interactive);
        const int title =
            header->fontMetrics().horizontalAdvance(table->model()->headerData(c, Qt::Horizontal).toString()) + 28;
        header->resizeSection(c, std::max(valueWidth, title));
    }
}

QTreeView *newTable(QWidget *parent, const QString &objectName)
{
    auto *table = new QTreeView(parent);
    table->setObjectName(objectName);
    table->setRootIsDecorated(false);
    table->setUniformRowHeights(true);
    table->setAlternatingRowColors(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    return table;
}

// Sorting by the header, which the table leaves to this (its own sorting is off): the table starts sorted by the size
// of `initial`'s change, largest first, shrinks among growths. A click on a change column sorts by the size of the
// change, the next click by the largest growth first, the next by the largest shrink first, and round again. Another
// column sorts largest first (names A to Z), a second click reversing it.
void sortByHeader(QTreeView *table, FunctionFilterProxy *proxy, const QList<int> &changeColumns, int initial)
{
    proxy->setChangeColumns(changeColumns);
    QHeaderView *header = table->header();
    header->setSectionsClickable(true);
    header->setSortIndicatorShown(true);
    proxy->setSortByMagnitude(true);
    table->sortByColumn(initial, Qt::DescendingOrder);
    QObject::connect(header, &QHeaderView::sectionClicked, table, [table, proxy](int section) {
        const bool same = section == proxy->sortColumn();
        Qt::SortOrder order = Qt::DescendingOrder;
        bool magnitude = false;
        if (proxy->isChangeColumn(section)) {
            magnitude = !same || (!proxy->sortsByMagnitude() && proxy->sortOrder() == Qt::AscendingOrder);
            order = same && !magnitude && !proxy->sortsByMagnitude() ? Qt::AscendingOrder : Qt::DescendingOrder;
        } else if (same) {
            order = proxy->sortOrder() == Qt::AscendingOrder ? Qt::DescendingOrder : Qt::AscendingOrder;
        } else if (section == 0) {
            order = Qt::AscendingOrder;
        }
        proxy->setSortByMagnitude(magnitude);
        table->sortByColumn(section, order);
    });
}

} // namespace

DiffTablesView::DiffTablesView(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void DiffTablesView::setupUi()
{
    setObjectName(QStringLiteral("diffTablesView"));
    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("diffTablesSplitter"));
    splitter->addWidget(createFunctionsPane());
    splitter->addWidget(createCallerCalleePane());
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter);
}

QWidget *DiffTablesView::createFunctionsPane()
{
    auto *pane = new QWidget(this);
    m_functions = new DiffFunctionsModel(this);
    m_proxy = new FunctionFilterProxy(this);
    m_proxy->setSourceModel(m_functions);
    m_filter = new QLineEdit(pane);
    m_filter->setObjectName(QStringLiteral("diffFunctionFilter"));
    m_filter->setPlaceholderText(tr("Filter functions"));
    m_filter->setClearButtonEnabled(true);
    m_table = newTable(pane, QStringLiteral("diffFunctionsTable"));
    m_table->setModel(m_proxy);
    sortByHeader(m_table, m_proxy, {DiffFunctionsModel::SelfChangeColumn, DiffFunctionsModel::TotalChangeColumn},
                 DiffFunctionsModel::SelfChangeColumn);
    sizeValueColumns(m_table, DiffFunctionsModel::BaseSelfColumn, DiffFunctionsModel::ColumnCount);
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(m_filter);
    layout->addWidget(m_table);
    return pane;
}

QWidget *DiffTablesView::createCallerCalleePane()
{
    auto *pane = new QWidget(this);
    m_callers = new DiffCallerCalleeModel(DiffCallerCalleeModel::Side::Callers, this);
    m_callees = new DiffCallerCalleeModel(DiffCallerCalleeModel::Side::Callees, this);
    m_callerTitle = new QLabel(tr("Select a function to see its callers and callees."), pane);
    m_callerTitle->setObjectName(QStringLiteral("diffCallerCalleeTitle"));
    m_callerTitle->setTextFormat(Qt::PlainText);
    m_callerTitle->setWordWrap(true);
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(m_callerTitle);
    layout->addWidget(createCallerCalleeTable(m_callers, QStringLiteral("diffCallersTable")));
    layout->addWidget(createCallerCalleeTable(m_callees, QStringLiteral("diffCalleesTable")));
    return pane;
}

QTreeView *DiffTablesView::createCallerCalleeTable(DiffCallerCalleeModel *model, const QString &objectName)
{
    auto *proxy = new FunctionFilterProxy(this);
    proxy->setSourceModel(model);
    QTreeView *table = newTable(this, objectName);
    table->setModel(proxy);
    sortByHeader(table, proxy, {DiffCallerCalleeModel::ChangeColumn}, DiffCallerCalleeModel::ChangeColumn);
    sizeValueColumns(table, DiffCallerCalleeModel::BaseColumn, DiffCallerCalleeModel::ColumnCount);
    connect(table, &QTreeView::activated, this,
            [this](const QModelIndex &index) { Q_EMIT frameSelected(index.data(FrameRole).toUInt()); });
    return table;
}

void DiffTablesView::connectSignals()
{
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &FunctionFilterProxy::setNameFilter);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (current.isValid())
                    Q_EMIT frameSelected(current.data(FrameRole).toUInt());
            });
}

void DiffTablesView::setComparison(std::shared_ptr<const engine::Comparison> comparison)
{
    m_comparison = std::move(comparison);
    m_functions->setComparison(m_comparison);
    if (!m_comparison) {
        m_callers->clear();
        m_callees->clear();
    }
}

void DiffTablesView::setCallerCallee(std::shared_ptr<const engine::DiffCallerCallee> data)
{
    if (!data || !m_comparison) {
        m_callers->clear();
        m_callees->clear();
        return;
    }
    const std::string &unit = m_comparison->unit;
    m_callerTitle->setText(
        tr("%1: total %2 → %3 (%4), self %5 → %6")
            .arg(QString::fromStdString(m_comparison->frames->frame(data->frame).name),
                 QString::fromStdString(engine::formatValue(data->baseTotal, unit)),
                 QString::fromStdString(engine::formatValue(data->newTotal, unit)),
                 QString::fromStdString(engine::formatChangePercent(data->baseTotal, data->newTotal)),
                 QString::fromStdString(engine::formatValue(data->baseSelf, unit)),
                 QString::fromStdString(engine::formatValue(data->newSelf, unit))));
    m_callers->setCallerCallee(data, m_comparison->frames, unit);
    m_callees->setCallerCallee(std::move(data), m_comparison->frames, unit);
}

void DiffTablesView::selectFrame(uint32_t frame)
{
    const int sourceRow = m_functions->rowOfFrame(frame);
    if (sourceRow < 0)
        return;
    QModelIndex index = m_proxy->mapFromSource(m_functions->index(sourceRow, 0));
    if (!index.isValid()) {
        m_filter->clear();
        index = m_proxy->mapFromSource(m_functions->index(sourceRow, 0));
    }
    m_table->setCurrentIndex(index);
    m_table->scrollTo(index);
}

} // namespace emberline::ui
