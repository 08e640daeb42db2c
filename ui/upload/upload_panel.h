#pragma once

#include "engine/upload/upload_record.h"

#include <QWidget>

#include <memory>

class QLabel;
class QPlainTextEdit;
class QTableView;
class QTreeWidget;

namespace emberline::engine {
class UploadNotifier;
}

namespace emberline::ui {

class UploadPanelModel;

// The Upload panel: a table of every flush's upload (time, size, tags, HTTP status, latency, retries), totals
// (sent, refused, failed, dropped), and for the selected flush "what Datadog receives": the destination and
// headers (API key hidden), the event.json pretty-printed, and the attachments with their sizes and encoding.
// New rows are selected as they arrive unless the user picked another row.
//
// Thread: GUI thread.
class UploadPanel : public QWidget {
    Q_OBJECT
public:
    explicit UploadPanel(QWidget *parent = nullptr);

    // Receives the uploader's records (queued across threads).
    void follow(engine::UploadNotifier *notifier);
    UploadPanelModel *model() const { return m_model; }

public Q_SLOTS:
    void addRecord(std::shared_ptr<const emberline::engine::UploadRecord> record);
    void clear();

private:
    void setupUi();
    void connectSignals();
    void showRecord(int row);
    void updateSummary();

    UploadPanelModel *m_model = nullptr;
    QLabel *m_summary = nullptr;
    QTableView *m_table = nullptr;
    QLabel *m_message = nullptr;
    QLabel *m_destination = nullptr;
    QPlainTextEdit *m_eventJson = nullptr;
    QTreeWidget *m_attachments = nullptr;
    bool m_followLatest = true;
};

} // namespace emberline::ui
