#pragma once

#include "engine/upload/upload_record.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace emberline::ui {

// Every flush's upload, one row each in arrival order: flush number, time, outcome with HTTP status, size,
// latency, retries and tags. The tooltip of a row is its message (what happened, what to fix).
//
// Thread: GUI thread; records arrive through UploadNotifier's queued signal.
class UploadPanelModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        FlushColumn,
        TimeColumn,
        StatusColumn,
        SizeColumn,
        LatencyColumn,
        RetriesColumn,
        TagsColumn,
        ColumnCount
    };

    explicit UploadPanelModel(QObject *parent = nullptr);

    void addRecord(std::shared_ptr<const engine::UploadRecord> record);
    void clear();
    std::shared_ptr<const engine::UploadRecord> record(int row) const;

    struct Totals {
        int sent = 0;
        int refused = 0;
        int failed = 0;
        int dropped = 0;
        int notSent = 0;
        int retries = 0;
    };
    Totals totals() const { return m_totals; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString statusText(const engine::UploadRecord &r) const;

    std::vector<std::shared_ptr<const engine::UploadRecord>> m_records;
    Totals m_totals;
};

} // namespace emberline::ui
