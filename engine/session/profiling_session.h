#pragma once

#include "engine/flush/flush.h"
#include "engine/flush/flush_consumers.h"
#include "engine/session/record_session.h"
#include "engine/stage/live_stage.h"
#include "engine/upload/session_uploader.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <memory>

class QThread;

namespace emberline::engine {

// The GUI's handle on one recording: a QObject facade over RecordSession, which it runs on its own QThread (the
// session thread). Its flushes go to the session's one list of flush consumers: the uploader, when there is one, and
// the live stage (LiveStage), which builds the views' update on its own thread. Everything it emits is an immutable
// value delivered on the thread this object lives on: started (the first live numbers: the target runs and is
// sampled), statsUpdated a few times a second, liveUpdated after each flush and each new view request (a flush
// reaches this thread once, in LiveUpdate::flushes, with everything the views need), then either finished (with
// the summary) or failed (with the engine's message, e.g. an attach that was refused). stop(), pause() and resume()
// only set flags the session thread polls, so they never block; the thread is joined when it has said it is done. When
// no output directory is given, the flushes go to a new folder under the user's data folder
// (AppDataLocation/sessions/<time>).
//
// Thread: lives on the GUI thread. The destructor of a still running session stops it without waiting: the
// session thread goes on alone to its end (the final flush, profile.pprof), and the application waits for such
// threads only at exit, after its event loop (waitForEndingSessions), so closing the window is immediate and
// the end of the session is never lost.
class ProfilingSession : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Stopping, Finished, Failed };
    Q_ENUM(State)

    explicit ProfilingSession(SessionConfig config, QObject *parent = nullptr);
    ~ProfilingSession() override;

    const SessionConfig &config() const { return m_config; }
    QString outputDirectory() const { return QString::fromStdString(m_config.outputDirectory); }
    State state() const { return m_state; }
    bool isActive() const { return m_state == State::Running || m_state == State::Stopping; }
    bool hasStarted() const { return m_started; }
    bool isPaused() const { return m_paused; }
    const SessionStats &lastStats() const { return m_stats; }
    const SessionSummary &summary() const { return m_summary; }
    QString errorMessage() const { return m_error; }
    uint32_t flushesReceived() const { return m_flushes; }

    // Where the session takes its sampler (before start(); default: the system's, perf events or ptrace).
    void setSamplerFactory(SamplerFactory factory) { m_samplerFactory = std::move(factory); }
    // Every flush also goes to this uploader, from the exporter thread: it joins the session's flush consumers. Given
    // after start() (a session started by the dialog, handed to its window once it runs), it takes the flushes from
    // then on.
    void setUpload(std::shared_ptr<SessionUploader> upload);
    const std::shared_ptr<SessionUploader> &upload() const { return m_upload; }
    // What the live views show (scope, hidden threads, sample type); answered by a liveUpdated with the returned
    // generation or a later one. Before start() it sets what the first flush is derived for.
    uint64_t setLiveView(LiveViewRequest request);
    void start();
    void stop();
    void pause();
    void resume();

    // Blocks until every session whose facade was destroyed while it was still ending has finished writing.
    // For process exit, after the event loop: it blocks no event loop there.
    static void waitForEndingSessions();
    // How many such sessions are still ending.
    static size_t endingSessions();

    // AppDataLocation/sessions, and a new folder in it named after the current time.
    static QString sessionsDirectory();
    static QString newSessionDirectory();

Q_SIGNALS:
    void started();
    void statsUpdated(const emberline::engine::SessionStats &stats);
    void liveUpdated(std::shared_ptr<const emberline::engine::LiveUpdate> update);
    void finished(const emberline::engine::SessionSummary &summary);
    void failed(const QString &message);
    void stateChanged(emberline::engine::ProfilingSession::State state);

private:
    struct Shared;
    void onStats(const SessionStats &stats);
    void onLiveUpdate(const std::shared_ptr<const LiveUpdate> &update);
    void onEnded(bool ok, const SessionSummary &summary, const std::string &error);
    void setState(State state);

    SessionConfig m_config;
    SamplerFactory m_samplerFactory;
    std::shared_ptr<SessionUploader> m_upload;
    std::shared_ptr<LiveStage> m_stage;
    // The session's flush consumers (the uploader, the live stage), shared with the session thread. Not in Shared:
    // the stage's publish callback holds that, and would hold itself through this list.
    std::shared_ptr<FlushConsumers> m_consumers = std::make_shared<FlushConsumers>();
    LiveViewRequest m_viewRequest;
    std::shared_ptr<Shared> m_shared;
    QThread *m_thread = nullptr;
    State m_state = State::Idle;
    bool m_started = false;
    bool m_paused = false;
    uint32_t m_flushes = 0;
    SessionStats m_stats;
    SessionSummary m_summary;
    QString m_error;
};

// Registers the values that cross threads in queued signals (idempotent).
void registerSessionMetaTypes();

} // namespace emberline::engine

Q_DECLARE_METATYPE(std::shared_ptr<const emberline::engine::LiveUpdate>)
Q_DECLARE_METATYPE(emberline::engine::SessionStats)
Q_DECLARE_METATYPE(emberline::engine::SessionSummary)
