#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

namespace emberline::ui {

// Runs a view's background work and delivers only the newest result: every run() cancels the one before it
// (through the atomic flag handed to the work) and bumps a generation number, so a result that a newer run has
// overtaken is dropped when it finishes late instead of overwriting the newer one. Results arrive on the thread
// that owns `context` (the GUI thread); the work runs on `pool` (the global pool by default) and must own what it
// reads, since it may outlive the job when the context goes away (it is told to stop, never waited for).
//
// Thread: run(), cancel() and the result callback on the context's thread; the work on a pool thread.
template <typename T> class LatestJob {
public:
    using Work = std::function<T(const std::atomic<bool> *cancel)>;
    using Deliver = std::function<void(T result)>;

    explicit LatestJob(QObject *context, QThreadPool *pool = QThreadPool::globalInstance())
        : m_context(context), m_pool(pool)
    {
    }
    ~LatestJob() { cancel(); }
    LatestJob(const LatestJob &) = delete;
    LatestJob &operator=(const LatestJob &) = delete;

    void run(Work work, Deliver deliver)
    {
        cancel();
        m_cancel = std::make_shared<std::atomic<bool>>(false);
        const uint64_t generation = ++m_generation;
        m_pending = true;
        auto *watcher = new QFutureWatcher<T>(m_context);
        QObject::connect(watcher, &QFutureWatcherBase::finished, m_context,
                         [this, watcher, generation, deliver = std::move(deliver)] {
                             watcher->deleteLater();
                             if (generation != m_generation)
                                 return; // overtaken by a newer run, or cancelled
                             m_pending = false;
                             deliver(watcher->result());
                         });
        watcher->setFuture(
            QtConcurrent::run(m_pool, [work = std::move(work), cancel = m_cancel] { return work(cancel.get()); }));
    }
    // The running work is told to stop and its result, if it still comes, is dropped.
    void cancel()
    {
        if (m_cancel)
            m_cancel->store(true);
        if (m_pending)
            ++m_generation;
        m_pending = false;
    }
    bool isPending() const { return m_pending; }
    uint64_t generation() const { return m_generation; }

private:
    QObject *m_context;
    QThreadPool *m_pool;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    uint64_t m_generation = 0;
    bool m_pending = false;
};

} // namespace emberline::ui
