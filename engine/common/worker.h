#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace emberline::engine {

// What a stop does with the items still queued: Drain handles them first, Discard leaves them to
// Worker::Handlers::finished (the item under way always ends normally).
enum class WorkerStop { Drain, Discard };

// Names the calling thread as the system shows it (ps, top, gdb). The kernel keeps 15 characters and refuses a longer
// name rather than cut it: it is cut here.
inline void nameCurrentThread(const std::string &name)
{
    ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
}

// One thread fed by a queue: what the export worker, the live stage, the uploader and the debuginfod fetcher each
// run. Items are handled in the order they were posted, either one at a time (Handlers::item) or everything queued
// at once (Handlers::batch: items posted while a batch runs are coalesced into the next). The queue may be bounded:
// posting to a full queue drops its oldest item, hands it back and counts it. A stop is asked for without blocking
// (requestStop) or waited for (stop); afterwards posts are refused and handed back. A handler sees the stop through
// stopRequested() (or stopFlag(), for APIs that poll an atomic) and may sleep interruptibly (sleepUnlessStopped).
// Handlers run on the worker's thread and never under the worker's lock, so they may post and take their owner's
// locks freely.
//
// Thread: every member may be called from any thread, except sleepUnlessStopped() (the worker's thread); the
// handlers run on the worker's thread. Destroying the worker stops it (Discard) and joins: an owner declares it
// after everything its handlers use.
template <typename T> class Worker {
public:
    struct Options {
        std::string name;    // the thread's name; empty: unnamed
        size_t capacity = 0; // 0: unbounded
    };
    struct Handlers {
        std::function<void(T &)> item{};               // one item at a time; or
        std::function<void(std::vector<T> &)> batch{}; // every item queued, oldest first
        // Last, on the worker's thread: what a Discard stop left in the queue (empty after Drain).
        std::function<void(std::vector<T> &)> finished{};
    };
    struct Posted {
        bool queued = false;
        // The item that did not make it: the one posted when refused, else the oldest one a full queue dropped.
        std::optional<T> dropped;
    };

    explicit Worker(Options options = {}) : m_options(std::move(options)) {}
    ~Worker() { stop(WorkerStop::Discard); }
    Worker(const Worker &) = delete;
    Worker &operator=(const Worker &) = delete;

    // Starts the thread with its handlers (item or batch must be set); items posted before wait for it. Does
    // nothing when started already or stopped.
    void start(Handlers handlers)
    {
        std::lock_guard lock(m_mutex);
        if (m_started || m_stop)
            return;
        m_handlers = std::move(handlers);
        m_started = true;
        m_thread = std::thread([this] { run(); });
    }
    bool started() const
    {
        std::lock_guard lock(m_mutex);
        return m_started;
    }

    Posted post(T item)
    {
        Posted posted;
        {
            std::lock_guard lock(m_mutex);
            if (m_stop) {
                posted.dropped.emplace(std::move(item));
                return posted;
            }
            if (m_options.capacity > 0 && m_queue.size() >= m_options.capacity) {
                posted.dropped.emplace(std::move(m_queue.front()));
                m_queue.pop_front();
                ++m_dropped;
            }
            m_queue.push_back(std::move(item));
            posted.queued = true;
        }
        m_wake.notify_one();
        return posted;
    }

    // Idle: nothing queued and nothing under way, or a Discard stop asked for, or the thread has ended. Whether
    // it became idle within `timeout`.
    bool waitIdle(std::chrono::milliseconds timeout)
    {
        std::unique_lock lock(m_mutex);
        return m_idle.wait_for(lock, timeout, [this] { return idle(); });
    }
    void waitIdle()
    {
        std::unique_lock lock(m_mutex);
        m_idle.wait(lock, [this] { return idle(); });
    }

    // Never blocks. A Discard asked for after a Drain overrides it.
    void requestStop(WorkerStop how)
    {
        {
            std::lock_guard lock(m_mutex);
            if (!m_stop || how == WorkerStop::Discard)
                m_stop = how;
            m_stopFlag.store(true);
            if (!m_started)
                m_ended = true; // no thread will take what is queued
        }
        m_wake.notify_all();
        m_idle.notify_all();
    }
    // requestStop(), then waits for the thread to end.
    void stop(WorkerStop how)
    {
        requestStop(how);
        std::lock_guard joining(m_joinMutex);
        std::thread thread;
        {
            std::lock_guard lock(m_mutex);
            thread = std::move(m_thread);
        }
        if (thread.joinable())
            thread.join();
    }
    bool stopRequested() const { return m_stopFlag.load(); }
    const std::atomic<bool> &stopFlag() const { return m_stopFlag; }

    // For a handler: waits `duration` unless a stop is asked for meanwhile; false when it is.
    bool sleepUnlessStopped(std::chrono::nanoseconds duration)
    {
        std::unique_lock lock(m_mutex);
        return !m_wake.wait_for(lock, duration, [this] { return m_stop.has_value(); });
    }

    uint64_t dropped() const
    {
        std::lock_guard lock(m_mutex);
        return m_dropped;
    }
    size_t queued() const
    {
        std::lock_guard lock(m_mutex);
        return m_queue.size();
    }

private:
    bool idle() const { return m_ended || m_stop == WorkerStop::Discard || (m_queue.empty() && !m_busy); }

    std::vector<T> takeQueue()
    {
        std::vector<T> items(std::make_move_iterator(m_queue.begin()), std::make_move_iterator(m_queue.end()));
        m_queue.clear();
        return items;
    }

    void run()
    {
        if (!m_options.name.empty())
            nameCurrentThread(m_options.name);
        std::unique_lock lock(m_mutex);
        while (true) {
            m_wake.wait(lock, [this] { return m_stop || !m_queue.empty(); });
            if (m_stop == WorkerStop::Discard || m_queue.empty())
                break;
            m_busy = true;
            if (m_handlers.batch) {
                std::vector<T> items = takeQueue();
                lock.unlock();
                m_handlers.batch(items);
            } else {
                T item = std::move(m_queue.front());
                m_queue.pop_front();
                lock.unlock();
                m_handlers.item(item);
            }
            // The items are gone (freed outside the lock) before the worker says it is idle.
            lock.lock();
            m_busy = false;
            m_idle.notify_all();
        }
        std::vector<T> left = takeQueue();
        lock.unlock();
        if (m_handlers.finished)
            m_handlers.finished(left);
        left.clear();
        lock.lock();
        m_ended = true;
        m_idle.notify_all();
    }

    const Options m_options;
    Handlers m_handlers; // set once by start(), before the thread runs
    mutable std::mutex m_mutex;
    std::condition_variable m_wake; // the thread waits for items or a stop
    std::condition_variable m_idle; // waitIdle() waits for an empty queue and an idle thread
    std::deque<T> m_queue;
    std::optional<WorkerStop> m_stop;
    std::atomic<bool> m_stopFlag{false};
    uint64_t m_dropped = 0;
    bool m_started = false;
    bool m_busy = false;
    bool m_ended = false;
    std::mutex m_joinMutex; // stop() may be called from two threads at once
    std::thread m_thread;
};

} // namespace emberline::engine
