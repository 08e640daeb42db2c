#include "ui/views/explorer/source_view.h"

#include "engine/model/python_frame.h"
#include "ui/common/value_text.h"
#include "ui/models/source_lines_model.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

namespace emberline::ui {

SourceView::SourceView(QWidget *parent) : QWidget(parent)
{
    setupUi();
}

void SourceView::setupUi()
{
    setObjectName(QStringLiteral("sourceView"));
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("sourceTitle"));
    m_title->setTextFormat(Qt::PlainText);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("sourceNote"));
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);
    m_note->setStyleSheet(QStringLiteral("QLabel { background: #fff4d6; color: #3a2c00; padding: 4px; }"));
    m_note->setVisible(false);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("sourceMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_model = new SourceLinesModel(this);
    m_table = new QTreeView(this);
    m_table->setObjectName(QStringLiteral("sourceTable"));
    m_table->setModel(m_model);
    m_table->setRootIsDecorated(false);
    m_table->setUniformRowHeights(true);
    m_table->setAlternatingRowColors(false);
    m_table->setTextElideMode(Qt::ElideNone); // code is cut at the edge, never given an ellipsis
    m_table->header()->setStretchLastSection(true);
    m_table->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->header()->setSectionResizeMode(SourceLinesModel::CodeColumn, QHeaderView::Interactive);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_title);
    layout->addWidget(m_note);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_table, 1);
    setMessage(tr("Select a function in the flame graph or a table to see its source lines."));
}

void SourceView::setMessage(const QString &message)
{
    m_hottestRow = -1;
    m_model->clear();
    m_title->clear();
    showNote(QString());
    m_message->setText(message);
    m_message->setVisible(true);
    m_table->setVisible(false);
}

void SourceView::showNote(const QString &text)
{
    m_note->setText(text);
    m_note->setVisible(!text.isEmpty());
}

void SourceView::setListing(std::shared_ptr<const engine::SourceListing> listing, const std::string &unit)
{
    const engine::FunctionLines &fn = listing->function;
    const QString file =
        listing->source ? QString::fromStdString(listing->source->path) : QString::fromStdString(fn.file);
    m_title->setText(
        tr("%1 — %2 — self %3, total %4")
            .arg(QString::fromStdString(fn.name), file, valueText(fn.self, unit), valueText(fn.total, unit)));
    QStringList notes;
    if (!listing->source && engine::isFrozenPythonFile(fn.file))
        notes << tr("%1 is a module frozen into the Python interpreter: its source is not on disk under that name, "
                    "so only the lines with a cost are listed.")
                     .arg(file);
    else if (!listing->source)
        notes << tr("Source %1: only the lines with a cost are listed. Add the folder that holds it in "
                    "View > Source Roots….")
                     .arg(QString::fromStdString(listing->sourceProblem));
    if (!listing->pastEnd.empty())
        notes << tr("%n line(s) with a cost lie past the end of %1 (%2 lines): the file changed since the "
                    "recording, so its lines may not match the costs.",
                    nullptr, static_cast<int>(listing->pastEnd.size()))
                     .arg(file)
                     .arg(listing->source->lines.size());
    if (listing->functionsWithName > 1)
        notes << tr("%1 files hold a function of this name; this is the one in %2.")
                     .arg(listing->functionsWithName)
                     .arg(QString::fromStdString(fn.file));
    showNote(notes.join(QLatin1Char('\n')));
    const int64_t hottest = listing->hottestLine;
    m_model->setListing(std::move(listing), unit);
    m_message->setVisible(false);
    m_table->setVisible(true);
    m_hottestRow = m_model->rowOfLine(hottest);
    if (m_hottestRow >= 0) {
        const QModelIndex index = m_model->index(m_hottestRow, SourceLinesModel::LineColumn);
        // Current but not selected: a selected row's highlight would hide the hottest line's heat.
        m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::NoUpdate);
    }
    scrollToHottest();
}

void SourceView::scrollToHottest()
{
    if (m_hottestRow >= 0 && m_hottestRow < m_model->rowCount() && m_table->isVisibleTo(this))
        m_table->scrollTo(m_model->index(m_hottestRow, SourceLinesModel::LineColumn),
                          QAbstractItemView::PositionAtCenter);
}

QString SourceView::title() const
{
    return m_title->text();
}

QString SourceView::note() const
{
    return m_note->isVisibleTo(this) ? m_note->text() : QString();
}

QString SourceView::message() const
{
    return m_message->isVisibleTo(this) ? m_message->text() : QString();
}

} // namespace emberline::ui
