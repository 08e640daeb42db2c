#include "engine/session/profiling_session.h"

#include "engine/common/logging.h"

#include <QDateTime>
#include <QDir>
#include <QLoggingCategory>
#include <QPointer>
#include <QStandardPaths>
#include <QThread>

#include <memory>
#include <mutex>
#include <vector>

namespace emberline::engine {

// What the session thread shares with the facade. The thread posts to the facade only through
// QMetaObject::invokeMethod while `owner` is set; the facade clears it (under the mutex) before it goes away,
// so a late callback never reaches a destroyed object.
struct ProfilingSession::Shared {
    SessionControl control;
    std::mutex mutex;
    ProfilingSession *owner = nullptr;

    // Queues call(owner) on the owner's thread, unless the owner is gone.
    template <typename F> void post(F call)
    {
        std::lock_guard lock(mutex);
        if (ProfilingSession *target = owner)
            QMetaObject::invokeMethod(
                target, [target, call] { call(target); }, Qt::QueuedConnection);
    }
};

namespace {

// Session threads whose facade went while they were still ending (the window was closed): kept here until
// they have written their last flush and profile.pprof, so that closing never waits for that and it is never
// cut short. The application waits for them at exit, after its event loop (waitForEndingSessions); the
// destructor of this process-wide object is the last resort.
class EndingSessions {
public:
    static EndingSessions &instance()
    {
        static EndingSessions sessions;
        return sessions;
    }
    ~EndingSessions() { waitAll(); }

    void adopt(QThread *thread)
    {
        std::lock_guard lock(m_mutex);
        reapFinished();
        m_threads.emplace_back(thread);
    }
    size_t count()
    {
        std::lock_guard lock(m_mutex);
        reapFinished();
        return m_threads.size();
    }
    void waitAll()
    {
        std::vector<std::unique_ptr<QThread>> threads;
        {
            std::lock_guard lock(m_mutex);
            threads.swap(m_threads);
        }
        for (const auto &thread : threads)
            thread->wait();
    }

private:
    void reapFinished()
    {
        std::erase_if(m_threads, [](const std::unique_ptr<QThread> &t) { return t->isFinished(); });
    }

    std::mutex m_mutex;
    std::vector<std::unique_ptr<QThread>> m_threads;
};

} // namespace

void registerSessionMetaTypes()
{
    static std::once_flag once;
    std::call_once(once, [] {
        qRegisterMetaType<std::shared_ptr<const LiveUpdate>>();
        qRegisterMetaType<SessionStats>();
        qRegisterMetaType<SessionSummary>();
    });
}

ProfilingSession::ProfilingSession(SessionConfig config, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_shared(std::make_shared<Shared>())
{
    registerSessionMetaTypes();
    m_shared->owner = this;
    // A program launched from the desktop has no terminal to share, and in a session of its own it cannot
    // crowd the views' threads out of the CPU however many busy threads it runs.
    m_config.ownSession = true;
}

ProfilingSession::~ProfilingSession()
{
    {
        std::lock_guard lock(m_shared->mutex);
        m_shared->owner = nullptr;
    }
    m_shared->control.stop = true;
    if (m_stage)
        m_stage->stop(); // nobody is left to show what it would derive
    if (!m_thread)
        return;
    if (!m_thread->isRunning()) {
        m_thread->wait();
        delete m_thread;
        return;
    }
    // No wait here, on the GUI thread: the session ends on its own thread, which no longer reports to anyone.
    qCInfo(lcSession) << "the session ends on its own thread; its last flush and profile.pprof are still being "
                         "written";
    EndingSessions::instance().adopt(m_thread);
    m_thread = nullptr;
}

void ProfilingSession::waitForEndingSessions()
{
    EndingSessions::instance().waitAll();
}

size_t ProfilingSession::endingSessions()
{
    return EndingSessions::instance().count();
}

QString ProfilingSession::sessionsDirectory()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("sessions"));
}

QString ProfilingSession::newSessionDirectory()
{
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    return QDir(sessionsDirectory()).filePath(stamp);
}

void ProfilingSession::start()
{
    if (m_state != State::Idle)
        return;
    if (m_config.outputDirectory.empty())
        m_config.outputDirectory = newSessionDirectory().toStdString();
    setState(State::Running);
    std::shared_ptr<Shared> shared = m_shared;
    const SessionConfig config = m_config;
    // The live stage is fed on the exporter thread and publishes on its own; the session thread and this facade
    // share it, so that it goes on while a session ends without its window.
    m_stage = std::make_shared<LiveStage>(LiveStage::Options{outputDirectory(), m_config.frequency},
                                          [shared](const std::shared_ptr<const LiveUpdate> &update) {
                                              shared->post(
                                                  [update](ProfilingSession *owner) { owner->onLiveUpdate(update); });
                                          });
    m_stage->setView(m_viewRequest);
    // The uploader first: it takes each flush on the exporter thread before the views see it.
    m_consumers->add(m_upload);
    m_consumers->add(m_stage);
    m_thread = QThread::create([shared, config, factory = m_samplerFactory, consumers = m_consumers, stage = m_stage] {
        RecordSession::Callbacks callbacks;
        callbacks.consumers = consumers;
        callbacks.onStats = [shared](const SessionStats &stats) {
            shared->post([stats](ProfilingSession *owner) { owner->onStats(stats); });
        };
        RecordSession session(config, factory);
        Result<SessionSummary> result = session.run(shared->control, callbacks);
        stage->waitUntilIdle(); // the last flush's update is posted before the end is

        // Plain values cross the thread (a copied variant trips GCC's maybe-uninitialized analysis).
        const bool ok = result.ok();
        SessionSummary summary = ok ? result.value() : SessionSummary{};
        std::string error = ok ? std::string() : result.error().message;
        shared->post([ok, summary, error](ProfilingSession *owner) { owner->onEnded(ok, summary, error); });
    });
    m_thread->setObjectName(QStringLiteral("emberline-session"));
    qCDebug(lcSession) << "starting a session; flushes go to" << outputDirectory();
    m_thread->start();
}

void ProfilingSession::stop()
{
    if (m_state != State::Running)
        return;
    m_shared->control.stop = true;
    setState(State::Stopping);
}

void ProfilingSession::pause()
{
    if (m_state != State::Running || m_paused)
        return;
    m_shared->control.paused = true;
    m_paused = true;
    Q_EMIT stateChanged(m_state);
}

void ProfilingSession::resume()
{
    if (m_state != State::Running || !m_paused)
        return;
    m_shared->control.paused = false;
    m_paused = false;
    Q_EMIT stateChanged(m_state);
}

void ProfilingSession::onStats(const SessionStats &stats)
{
    if (!isActive())
        return;
    m_stats = stats;
    if (!m_started) {
        m_started = true;
        Q_EMIT started();
    }
    Q_EMIT statsUpdated(stats);
}

void ProfilingSession::setUpload(std::shared_ptr<SessionUploader> upload)
{
    m_upload = upload;
    // Running, it joins the consumers at once and learns the target the session announced last; otherwise the
    // session adds it when it starts.
    if (m_thread)
        m_consumers->add(std::move(upload));
}

uint64_t ProfilingSession::setLiveView(LiveViewRequest request)
{
    m_viewRequest = request;
    return m_stage ? m_stage->setView(std::move(request)) : 0;
}

void ProfilingSession::onLiveUpdate(const std::shared_ptr<const LiveUpdate> &update)
{
    m_flushes += static_cast<uint32_t>(update->flushes.size());
    Q_EMIT liveUpdated(update);
}

void ProfilingSession::onEnded(bool ok, const SessionSummary &summary, const std::string &error)
{
    // The thread posted this as its last act: joining is immediate.
    m_thread->wait();
    m_paused = false;
    if (ok) {
        m_summary = summary;
        qCDebug(lcSession) << "session ended:" << QString::fromStdString(m_summary.endReason);
        setState(State::Finished);
        Q_EMIT finished(m_summary);
    } else {
        m_error = QString::fromStdString(error);
        qCDebug(lcSession) << "session failed:" << m_error;
        setState(State::Failed);
        Q_EMIT failed(m_error);
    }
}

void ProfilingSession::setState(State state)
{
    if (state == m_state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

} // namespace emberline::engine
