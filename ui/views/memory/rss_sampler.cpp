#include "ui/views/memory/rss_sampler.h"

#include "engine/common/clock.h"

#include <QThread>
#include <QTimer>

namespace emberline::ui {

RssSampler::RssSampler(int intervalMs, QObject *parent) : QObject(parent), m_thread(new QThread(this))
{
    m_thread->setObjectName(QStringLiteral("rss sampler"));
    m_context = new QObject;
    m_timer = new QTimer;
    m_timer->setInterval(intervalMs);
    m_context->moveToThread(m_thread);
    m_timer->moveToThread(m_thread);
    connect(m_timer, &QTimer::timeout, m_context, [this] { sampleOnce(); });
    m_thread->start();
}

RssSampler::~RssSampler()
{
    // The timer is stopped on its own thread (a timer cannot be stopped from another), then the thread ends.
    QMetaObject::invokeMethod(
        m_context, [this] { m_timer->stop(); }, Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
    delete m_timer;
    delete m_context;
}

void RssSampler::setProcess(int pid)
{
    m_pid = pid;
    QMetaObject::invokeMethod(m_context, [this, pid] {
        if (pid <= 0) {
            m_tree.reset();
            m_timer->stop();
            return;
        }
        m_tree.emplace(pid);
        sampleOnce();
        m_timer->start();
    });
}

void RssSampler::sampleOnce()
{
    if (!m_tree)
        return;
    const int64_t bytes = m_tree->residentBytes();
    if (bytes < 0) { // the program is gone
        m_tree.reset();
        m_timer->stop();
        return;
    }
    const int64_t timeNs = engine::clockNs(CLOCK_REALTIME);
    // Delivered on the sampler's own thread; dropped if it is destroyed first.
    QMetaObject::invokeMethod(this, [this, timeNs, bytes] { Q_EMIT sampled(timeNs, bytes); });
}

} // namespace emberline::ui
