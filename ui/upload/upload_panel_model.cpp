#include "ui/upload/upload_panel_model.h"

#include "ui/common/text_colors.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QLocale>

namespace emberline::ui {
namespace {

QString tagsText(const engine::UploadRecord &r)
{
    return QString::fromStdString(engine::joinTags(r.tags));
}

} // namespace

UploadPanelModel::UploadPanelModel(QObject *parent) : QAbstractTableModel(parent) {}

void UploadPanelModel::addRecord(std::shared_ptr<const engine::UploadRecord> record)
{
    if (!record)
        return;
    const int row = static_cast<int>(m_records.size());
    beginInsertRows({}, row, row);
    switch (record->outcome) {
    case engine::UploadOutcome::Sent:
        ++m_totals.sent;
        break;
    case engine::UploadOutcome::Rejected:
        ++m_totals.refused;
        break;
    case engine::UploadOutcome::Dropped:
        ++m_totals.dropped;
        break;
    case engine::UploadOutcome::Cancelled:
        ++m_totals.notSent;
        break;
    default:
        ++m_totals.failed;
    }
    m_totals.retries += record->retries();
    m_records.push_back(std::move(record));
    endInsertRows();
}

void UploadPanelModel::clear()
{
    beginResetModel();
    m_records.clear();
    m_totals = {};
    endResetModel();
}

std::shared_ptr<const engine::UploadRecord> UploadPanelModel::record(int row) const
{
    return row >= 0 && row < static_cast<int>(m_records.size()) ? m_records[static_cast<size_t>(row)] : nullptr;
}

int UploadPanelModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_records.size());
}

int UploadPanelModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString UploadPanelModel::statusText(const engine::UploadRecord &r) const
{
    const QString outcome = QString::fromLatin1(engine::outcomeName(r.outcome));
    return r.httpStatus ? QStringLiteral("%1 (HTTP %2)").arg(outcome).arg(r.httpStatus) : outcome;
}

QVariant UploadPanelModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const engine::UploadRecord &r = *m_records[static_cast<size_t>(index.row())];
    if (role == Qt::ToolTipRole)
        return QString::fromStdString(r.message);
    if (role == Qt::ForegroundRole && index.column() == StatusColumn && r.outcome != engine::UploadOutcome::Sent)
        return QBrush(problemText());
    if (role == Qt::TextAlignmentRole && index.column() != TagsColumn && index.column() != StatusColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case FlushColumn:
        return r.flushSequence;
    case TimeColumn:
        return QDateTime::fromMSecsSinceEpoch(r.finishedAtNs / 1'000'000).toString(QStringLiteral("HH:mm:ss"));
    case StatusColumn:
        return statusText(r);
    case SizeColumn:
        return r.bodyBytes ? QLocale().formattedDataSize(static_cast<qint64>(r.bodyBytes)) : QStringLiteral("–");
    case LatencyColumn:
        return r.requestLatencyNs ? QStringLiteral("%1 ms").arg(r.requestLatencyNs / 1e6, 0, 'f', 1)
                                  : QStringLiteral("–");
    case RetriesColumn:
        return r.retries();
    case TagsColumn:
        return tagsText(r);
    }
    return {};
}

QVariant UploadPanelModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case FlushColumn:
        return tr("Flush");
    case TimeColumn:
        return tr("Time");
    case StatusColumn:
        return tr("Status");
    case SizeColumn:
        return tr("Size");
    case LatencyColumn:
        return tr("Latency");
    case RetriesColumn:
        return tr("Retries");
    case TagsColumn:
        return tr("Tags");
    }
    return {};
}

} // namespace emberline::ui
