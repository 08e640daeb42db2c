#include "ui/views/explorer/disassembly_view.h"

#include "engine/model/python_frame.h"
#include "engine/model/units.h"
#include "ui/models/disassembly_model.h"

#include <QAction>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace emberline::ui {

DisassemblyView::DisassemblyView(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void DisassemblyView::setupUi()
{
    m_runner = new DisassemblyRunner(this);
    m_model = new DisassemblyModel(this);
    m_title = new QLabel(tr("Pick a function to see its instructions."), this);
    m_title->setObjectName(QStringLiteral("disassemblyTitle"));
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setWordWrap(true);
    m_notes = new QLabel(this);
    m_notes->setObjectName(QStringLiteral("disassemblyNotes"));
    m_notes->setWordWrap(true);
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notes->hide();
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("disassemblyTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setShowGrid(false);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 4);
    // Cost, address and instruction fit a detail pane without a horizontal scroll bar; the instruction's bytes
    // are there on request (the header's context menu), as perf annotate hides them too.
    QHeaderView *header = m_table->horizontalHeader();
    header->setSectionResizeMode(DisassemblyModel::InstructionColumn, QHeaderView::Stretch);
    header->setSectionResizeMode(DisassemblyModel::SelfColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(DisassemblyModel::TotalColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(DisassemblyModel::AddressColumn, QHeaderView::ResizeToContents);
    m_table->setColumnHidden(DisassemblyModel::BytesColumn, true);
    m_table->setTextElideMode(Qt::ElideRight);
    m_showBytes = new QAction(tr("Show Instruction Bytes"), this);
    m_showBytes->setObjectName(QStringLiteral("showBytesAction"));
    m_showBytes->setCheckable(true);
    header->setContextMenuPolicy(Qt::ActionsContextMenu);
    header->addAction(m_showBytes);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_title);
    layout->addWidget(m_notes);
    layout->addWidget(m_table, 1);
    // Takes the room of the table when it is hidden (a Python function's), so that the words stay at the top.
    layout->addStretch(0);
}

void DisassemblyView::connectSignals()
{
    connect(m_runner, &DisassemblyRunner::ready, this, &DisassemblyView::showResult);
    connect(m_runner, &DisassemblyRunner::failed, this, &DisassemblyView::showError);
    connect(m_showBytes, &QAction::toggled, this, [this](bool show) {
        m_table->setColumnHidden(DisassemblyModel::BytesColumn, !show);
        if (show)
            m_table->resizeColumnToContents(DisassemblyModel::BytesColumn);
    });
}

void DisassemblyView::setProfile(std::shared_ptr<const engine::Profile> profile, int sampleType)
{
    m_profile = std::move(profile);
    m_sampleType = sampleType;
    m_function.clear();
    m_model->setResult(nullptr);
    m_title->setText(tr("Pick a function to see its instructions."));
    m_notes->hide();
    m_table->show();
}

void DisassemblyView::showFunction(const QString &name)
{
    if (!m_profile)
        return;
    m_function = name;
    m_model->setResult(nullptr);
    m_notes->hide();
    m_table->show();
    m_title->setText(tr("Disassembling %1…").arg(name));
    m_runner->request(m_profile, name, m_sampleType, m_sourceRoots);
}

void DisassemblyView::showFrame(const engine::Frame &frame)
{
    if (!m_profile)
        return;
    const QString name = QString::fromStdString(frame.name);
    if (!engine::isPythonFrame(frame)) {
        showFunction(name);
        return;
    }
    m_runner->cancel(); // an answer for the function before must not replace this one
    m_function = name;
    showPythonFunction(name);
}

void DisassemblyView::showPythonFunction(const QString &name)
{
    // No table at all: an empty one would read as instructions that failed to come.
    m_model->setResult(nullptr);
    m_table->hide();
    m_title->setText(
        tr("<b>%1</b> is a Python function: it has no machine code to disassemble.").arg(name.toHtmlEscaped()));
    m_notes->setText(tr("CPython compiles it to bytecode and runs that bytecode in its interpreter loop, so the "
                        "profile holds its source lines, not instruction addresses. Its lines and their costs are "
                        "in the Source tab."));
    m_notes->show();
    Q_EMIT functionShown(name);
}

void DisassemblyView::showResult(const std::shared_ptr<const DisassemblyResult> &result)
{
    if (result->python) {
        showPythonFunction(QString::fromStdString(result->function.name));
        return;
    }
    const engine::FunctionDisassembly &fn = result->function;
    QStringList notes;
    for (const std::string &note : fn.notes)
        notes << QString::fromStdString(note);
    if (!fn.error.empty()) {
        m_model->setResult(nullptr);
        m_title->setText(tr("%1: not disassembled").arg(QString::fromStdString(fn.name)));
        notes << QString::fromStdString(fn.error);
    } else {
        m_title->setText(tr("<b>%1</b> — self %2, total %3 (%4 of all)<br>%5, build id %6, found at the %7")
                             .arg(QString::fromStdString(fn.name).toHtmlEscaped(),
                                  QString::fromStdString(engine::formatValue(fn.self, result->unit)),
                                  QString::fromStdString(engine::formatValue(fn.total, result->unit)),
                                  QString::fromStdString(engine::formatPercent(fn.total, result->grandTotal)),
                                  QString::fromStdString(fn.binary).toHtmlEscaped(), QString::fromStdString(fn.buildId),
                                  QString::fromStdString(fn.origin)));
        m_model->setResult(result);
        m_table->clearSpans();
        for (int row = 0; row < m_model->rowCount(); ++row) {
            if (m_model->isSourceRow(row))
                m_table->setSpan(row, 0, 1, DisassemblyModel::ColumnCount);
        }
        m_table->resizeColumnToContents(DisassemblyModel::BytesColumn);
        scrollToHottest();
    }
    m_notes->setText(notes.join(QLatin1Char('\n')));
    m_notes->setVisible(!notes.isEmpty());
    // Once more after the new title and notes are laid out: wrapped (a narrow window), they take the table's
    // room and would leave the hottest instruction at its bottom edge.
    if (fn.error.empty())
        QTimer::singleShot(0, this, &DisassemblyView::scrollToHottest);
    Q_EMIT functionShown(QString::fromStdString(fn.name));
}

void DisassemblyView::scrollToHottest()
{
    // Scrolled to, not selected: a selection would hide its heat colour.
    if (const int hottest = m_model->hottestRow(); hottest >= 0)
        m_table->scrollTo(m_model->index(hottest, DisassemblyModel::InstructionColumn),
                          QAbstractItemView::PositionAtCenter);
}

void DisassemblyView::showError(const QString &message)
{
    m_model->setResult(nullptr);
    m_title->setText(tr("%1: not disassembled").arg(m_function));
    m_notes->setText(message);
    m_notes->show();
    Q_EMIT failed(message);
}

} // namespace emberline::ui
