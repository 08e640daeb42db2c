#pragma once

#include "engine/upload/session_uploader.h"
#include "engine/upload/upload_settings.h"

#include <QObject>

#include <memory>
#include <mutex>

namespace emberline::engine {
class ProfilingSession;
class UploadNotifier;
struct SessionStats;
struct SessionSummary;
} // namespace emberline::engine

namespace emberline::ui {

// The upload side of one live session, as the window sees it: the engine's SessionUploader, which the session
// feeds from its exporter thread (set on the session before it starts), and an UploadNotifier that brings its
// per-flush records to the GUI thread. Submitting can be paused and resumed while the session runs; flushes made
// meanwhile are kept on disk only. When the session ends, the queue gets up to five seconds to drain on a pool
// thread, so the final flush has its chance and the GUI never waits; that thread keeps the uploader alive until
// it returns, even when this object is gone.
//
// Thread: GUI thread. The uploader's callback runs on its own thread and reaches the notifier through a gate
// that this object closes when it is destroyed.
class SessionUpload : public QObject {
    Q_OBJECT
public:
    // Fails when the settings name no usable endpoint. Call before the session starts.
    static engine::Result<SessionUpload *> create(engine::UploadSettings settings, engine::ProfilingSession *session,
                                                  QObject *parent = nullptr);
    ~SessionUpload() override;

    engine::UploadNotifier *notifier() const { return m_notifier; }
    engine::UploaderCounters counters() const { return m_uploader->counters(); }
    QString endpoint() const;
    bool isSubmitting() const { return m_uploader->isSubmitting(); }
    bool isFinishing() const { return m_finishing; }
    bool isFinished() const { return m_finished; }
    // The last refusal or failure, in the uploader's words; empty while every flush went through.
    QString lastProblem() const { return m_lastProblem; }
    void setSubmitting(bool on);

Q_SIGNALS:
    void submittingChanged(bool on);
    // Counters or the last problem changed (a record arrived, or the queue drained).
    void changed();
    // The queue drained (or its time ran out) after the session ended.
    void finished();

private:
    struct Gate {
        std::mutex mutex;
        engine::UploadNotifier *notifier = nullptr;
    };
    SessionUpload(std::shared_ptr<engine::SessionUploader> uploader, std::shared_ptr<Gate> gate,
                  engine::UploadNotifier *notifier, QObject *parent);
    void connectSession(engine::ProfilingSession *session);
    void onRecord(const std::shared_ptr<const engine::UploadRecord> &record);
    void finishInBackground();

    std::shared_ptr<engine::SessionUploader> m_uploader;
    std::shared_ptr<Gate> m_gate;
    engine::UploadNotifier *m_notifier = nullptr;
    QString m_lastProblem;
    bool m_finishing = false;
    bool m_finished = false;
};

} // namespace emberline::ui
