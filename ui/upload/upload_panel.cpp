#include "ui/upload/upload_panel.h"

#include "engine/upload/upload_notifier.h"
#include "ui/upload/upload_panel_model.h"

#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace emberline::ui {

UploadPanel::UploadPanel(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
    updateSummary();
}

void UploadPanel::setupUi()
{
    setObjectName(QStringLiteral("uploadPanel"));
    m_model = new UploadPanelModel(this);
    auto *layout = new QVBoxLayout(this);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("uploadSummary"));
    layout->addWidget(m_summary);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    m_table = new QTableView(splitter);
    m_table->setObjectName(QStringLiteral("uploadTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);

    auto *detail = new QWidget(splitter);
    auto *detailLayout = new QVBoxLayout(detail);
    detailLayout->setContentsMargins(0, 0, 0, 0);
    m_message = new QLabel(detail);
    m_message->setObjectName(QStringLiteral("uploadMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_destination = new QLabel(detail);
    m_destination->setObjectName(QStringLiteral("uploadDestination"));
    m_destination->setWordWrap(true);
    m_destination->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_eventJson = new QPlainTextEdit(detail);
    m_eventJson->setObjectName(QStringLiteral("uploadEventJson"));
    m_eventJson->setReadOnly(true);
    m_eventJson->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_attachments = new QTreeWidget(detail);
    m_attachments->setObjectName(QStringLiteral("uploadAttachments"));
    m_attachments->setHeaderLabels({tr("Attachment"), tr("Sent"), tr("Uncompressed"), tr("Encoding")});
    m_attachments->setRootIsDecorated(false);
    m_attachments->setMaximumHeight(90);
    detailLayout->addWidget(new QLabel(tr("What Datadog receives"), detail));
    detailLayout->addWidget(m_message);
    detailLayout->addWidget(m_destination);
    detailLayout->addWidget(m_eventJson, 1);
    detailLayout->addWidget(m_attachments);
    layout->addWidget(splitter, 1);
}

void UploadPanel::connectSignals()
{
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                showRecord(current.row());
                m_followLatest = current.row() == m_model->rowCount() - 1;
            });
}

void UploadPanel::follow(engine::UploadNotifier *notifier)
{
    connect(notifier, &engine::UploadNotifier::recordReady, this, &UploadPanel::addRecord, Qt::QueuedConnection);
}

void UploadPanel::addRecord(std::shared_ptr<const emberline::engine::UploadRecord> record)
{
    m_model->addRecord(std::move(record));
    updateSummary();
    if (m_followLatest)
        m_table->setCurrentIndex(m_model->index(m_model->rowCount() - 1, 0));
}

void UploadPanel::clear()
{
    m_model->clear();
    m_followLatest = true;
    showRecord(-1);
    updateSummary();
}

void UploadPanel::updateSummary()
{
    const UploadPanelModel::Totals t = m_model->totals();
    m_summary->setText(tr("%1 flushes: %2 sent, %3 refused, %4 failed, %5 dropped, %6 not sent; %7 retries")
                           .arg(m_model->rowCount())
                           .arg(t.sent)
                           .arg(t.refused)
                           .arg(t.failed)
                           .arg(t.dropped)
                           .arg(t.notSent)
                           .arg(t.retries));
}

void UploadPanel::showRecord(int row)
{
    const auto record = m_model->record(row);
    m_attachments->clear();
    if (!record) {
        m_message->clear();
        m_destination->clear();
        m_eventJson->clear();
        return;
    }
    m_message->setText(QString::fromStdString(record->message));
    QStringList headers;
    for (const auto &[name, value] : record->headers)
        headers << QString::fromStdString(name + ": " + value);
    m_destination->setText(
        tr("POST %1\n%2").arg(QString::fromStdString(record->endpoint), headers.join(QLatin1Char('\n'))));
    const QJsonDocument event = QJsonDocument::fromJson(QByteArray::fromStdString(record->eventJson));
    m_eventJson->setPlainText(event.isNull() ? tr("(nothing was built for this flush)")
                                             : QString::fromUtf8(event.toJson(QJsonDocument::Indented)));
    const QLocale locale;
    for (const engine::UploadAttachmentInfo &a : record->attachments) {
        new QTreeWidgetItem(m_attachments,
                            {QString::fromStdString(a.name), locale.formattedDataSize(static_cast<qint64>(a.bytes)),
                             locale.formattedDataSize(static_cast<qint64>(a.rawBytes)),
                             QString::fromStdString(a.encoding)});
    }
}

} // namespace emberline::ui
