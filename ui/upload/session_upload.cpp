#include "ui/upload/session_upload.h"

#include "engine/session/profiling_session.h"
#include "engine/upload/upload_notifier.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <chrono>

namespace emberline::ui {
namespace {

constexpr auto kFinishDeadline = std::chrono::seconds(5);

} // namespace

engine::Result<SessionUpload *> SessionUpload::create(engine::UploadSettings settings,
                                                      engine::ProfilingSession *session, QObject *parent)
{
    auto gate = std::make_shared<Gate>();
    auto uploader =
        engine::SessionUploader::create(std::move(settings), [gate](std::shared_ptr<const engine::UploadRecord> r) {
            std::lock_guard lock(gate->mutex);
            if (gate->notifier)
                gate->notifier->post(std::move(r));
        });
    if (!uploader)
        return uploader.error();
    auto *notifier = new engine::UploadNotifier;
    {
        std::lock_guard lock(gate->mutex);
        gate->notifier = notifier;
    }
    auto *upload = new SessionUpload(std::move(uploader).value(), std::move(gate), notifier, parent);
    upload->connectSession(session);
    return upload;
}

SessionUpload::SessionUpload(std::shared_ptr<engine::SessionUploader> uploader, std::shared_ptr<Gate> gate,
                             engine::UploadNotifier *notifier, QObject *parent)
    : QObject(parent), m_uploader(std::move(uploader)), m_gate(std::move(gate)), m_notifier(notifier)
{
    m_notifier->setParent(this);
    qRegisterMetaType<std::shared_ptr<const engine::UploadRecord>>();
    connect(m_notifier, &engine::UploadNotifier::recordReady, this, &SessionUpload::onRecord, Qt::QueuedConnection);
}

SessionUpload::~SessionUpload()
{
    // No record reaches the notifier once it is gone; a draining uploader keeps running on its pool thread.
    std::lock_guard lock(m_gate->mutex);
    m_gate->notifier = nullptr;
}

void SessionUpload::connectSession(engine::ProfilingSession *session)
{
    // The engine submits every flush from the exporter thread and learns the target's pid itself.
    session->setUpload(m_uploader);
    connect(session, &engine::ProfilingSession::finished, this, &SessionUpload::finishInBackground);
    connect(session, &engine::ProfilingSession::failed, this, &SessionUpload::finishInBackground);
}

QString SessionUpload::endpoint() const
{
    return QString::fromStdString(m_uploader->endpoint().describe());
}

void SessionUpload::setSubmitting(bool on)
{
    if (on == m_uploader->isSubmitting())
        return;
    m_uploader->setSubmitting(on);
    Q_EMIT submittingChanged(on);
}

void SessionUpload::onRecord(const std::shared_ptr<const engine::UploadRecord> &record)
{
    if (record->outcome != engine::UploadOutcome::Sent)
        m_lastProblem = QString::fromStdString(record->message);
    Q_EMIT changed();
}

void SessionUpload::finishInBackground()
{
    if (m_finishing)
        return;
    m_finishing = true;
    auto *watcher = new QFutureWatcher<bool>(this);
    connect(watcher, &QFutureWatcher<bool>::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_finished = true;
        Q_EMIT changed();
        Q_EMIT finished();
    });
    // The task owns a reference: the uploader outlives this object if the tab closes while it drains.
    watcher->setFuture(QtConcurrent::run([uploader = m_uploader] { return uploader->finish(kFinishDeadline); }));
}

} // namespace emberline::ui
