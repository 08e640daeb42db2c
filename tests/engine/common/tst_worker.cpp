// The queue-fed worker thread of engine/common/worker.h, which runs the export worker, the live stage, the uploader
// and the debuginfod fetcher: order, the thread the work runs on, batches that coalesce, the bounded queue that drops
// its oldest item, and the two ways to stop.
#include "engine/common/worker.h"

#include <QTest>

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

using namespace emberline::engine;
using namespace std::chrono_literals;

// Not in an anonymous namespace: the handlers' lambdas, which capture these, belong to the test class.

// Holds a handler until the test opens it, and tells the test when a handler has reached it.
class Gate {
public:
    void pass()
    {
        std::unique_lock lock(m_mutex);
        ++m_arrived;
        m_changed.notify_all();
        m_changed.wait(lock, [this] { return m_open; });
    }
    bool waitArrived(int count = 1)
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, 10s, [&] { return m_arrived >= count; });
    }
    void open()
    {
        std::lock_guard lock(m_mutex);
        m_open = true;
        m_changed.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    int m_arrived = 0;
    bool m_open = false;
};

// What the handlers saw, written on the worker's thread and read by the test after waitIdle() or stop().
struct Seen {
    std::mutex mutex;
    std::vector<int> items;
    std::vector<std::vector<int>> batches;
    std::vector<int> left;
    int finishedCalls = 0;
    std::vector<std::thread::id> threads;

    void add(int item)
    {
        std::lock_guard lock(mutex);
        items.push_back(item);
        threads.push_back(std::this_thread::get_id());
    }
};

static std::vector<int> range(int from, int to)
{
    std::vector<int> out;
    for (int i = from; i <= to; ++i)
        out.push_back(i);
    return out;
}

class TestWorker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, flushes would reach the disk, the views or Datadog out of order, or the work would run on the
    // thread that posts it (the session thread, which must never wait for it).
    void itemsRunInOrderOnTheWorkersOwnThread()
    {
        Seen seen;
        Worker<int> worker({"tst-worker"});
        std::string threadName;
        worker.start({.item = [&](int &i) {
            if (i == 0) {
                char name[16] = {};
                ::pthread_getname_np(::pthread_self(), name, sizeof name);
                threadName = name;
            }
            seen.add(i);
        }});
        QVERIFY(worker.started());
        for (int i = 0; i < 2000; ++i)
            QVERIFY(worker.post(i).queued);
        QVERIFY(worker.waitIdle(10s));
        QCOMPARE(seen.items, range(0, 1999));
        QCOMPARE(seen.threads.size(), size_t(2000));
        for (const std::thread::id &id : seen.threads) {
            QVERIFY(id == seen.threads.front());
            QVERIFY(id != std::this_thread::get_id());
        }
        QCOMPARE(threadName, std::string("tst-worker"));
        QCOMPARE(worker.dropped(), uint64_t(0));
    }

    // Thread names longer than the kernel keeps are cut, not refused. If this fails, a worker runs unnamed.
    void longThreadNamesAreCut()
    {
        std::string threadName;
        Worker<int> worker({"a-worker-with-a-long-name"});
        worker.start({.item = [&](int &) {
            char name[16] = {};
            ::pthread_getname_np(::pthread_self(), name, sizeof name);
            threadName = name;
        }});
        worker.post(1);
        QVERIFY(worker.waitIdle(10s));
        QCOMPARE(threadName, std::string("a-worker-with-a"));
    }

    // Items posted while a batch runs come together in the next one, in order (the live stage merges the flushes
    // that arrived during a job in one). If this fails, the stage would derive the views once per flush however far
    // behind it is, or lose or reorder flushes.
    void batchesTakeEverythingQueuedWhileOneRan()
    {
        Seen seen;
        Gate gate;
        Worker<int> worker;
        worker.start({.batch = [&](std::vector<int> &items) {
            {
                std::lock_guard lock(seen.mutex);
                seen.batches.push_back(items);
            }
            if (items.front() == 1)
                gate.pass();
        }});
        worker.post(1);
        QVERIFY(gate.waitArrived());
        for (int i = 2; i <= 6; ++i)
            worker.post(i);
        QVERIFY(!worker.waitIdle(20ms)); // the first batch still runs
        gate.open();
        QVERIFY(worker.waitIdle(10s));
        QCOMPARE(seen.batches.size(), size_t(2));
        QCOMPARE(seen.batches[0], std::vector<int>{1});
        QCOMPARE(seen.batches[1], range(2, 6));
    }

    // A bounded queue that is full drops its oldest waiting item, hands it back to the poster and counts it; the
    // item under way is not in the queue and is never dropped. If this fails, a dead Datadog agent would make the
    // upload queue grow without bound, or flushes would vanish without an Upload record.
    void boundedQueueDropsTheOldestAndCountsIt()
    {
        Seen seen;
        Gate gate;
        Worker<int> worker({"", 3});
        worker.start({.item = [&](int &i) {
            if (i == 1)
                gate.pass();
            seen.add(i);
        }});
        worker.post(1);
        QVERIFY(gate.waitArrived()); // 1 is under way: the queue is empty
        std::vector<int> droppedItems;
        for (int i = 2; i <= 8; ++i) {
            Worker<int>::Posted posted = worker.post(i);
            QVERIFY(posted.queued);
            if (posted.dropped)
                droppedItems.push_back(*posted.dropped);
        }
        QCOMPARE(droppedItems, range(2, 5));
        QCOMPARE(worker.dropped(), uint64_t(4));
        QCOMPARE(worker.queued(), size_t(3));
        gate.open();
        QVERIFY(worker.waitIdle(10s));
        QCOMPARE(seen.items, (std::vector<int>{1, 6, 7, 8}));
    }

    // Items posted before the thread starts wait for it; a Drain stop handles everything queued before the thread
    // ends, and `finished` then gets nothing. If this fails, the export worker would lose the final flush (posted
    // just before the session asks it to finish) or write profile.pprof without it.
    void drainStopHandlesEverythingQueued()
    {
        Seen seen;
        std::thread::id finishedOn;
        Worker<int> worker;
        for (int i = 1; i <= 50; ++i)
            worker.post(i);
        QCOMPARE(worker.queued(), size_t(50));
        QVERIFY(!worker.started());
        worker.start({.item = [&](int &i) { seen.add(i); },
                      .finished =
                          [&](std::vector<int> &left) {
                              seen.left = left;
                              ++seen.finishedCalls;
                              finishedOn = std::this_thread::get_id();
                          }});
        worker.stop(WorkerStop::Drain);
        QCOMPARE(seen.items, range(1, 50));
        QCOMPARE(seen.finishedCalls, 1);
        QVERIFY(seen.left.empty());
        QVERIFY(finishedOn == seen.threads.front());
        // Stopped: a post is refused and handed back; starting again does nothing.
        Worker<int>::Posted refused = worker.post(51);
        QVERIFY(!refused.queued);
        QVERIFY(refused.dropped.has_value() && *refused.dropped == 51);
        worker.start({.item = [&](int &i) { seen.add(i); }});
        QCOMPARE(worker.queued(), size_t(0));
        QCOMPARE(seen.items.size(), size_t(50));
    }

    // requestStop(Discard) returns while the item under way still runs; that item ends normally, the queued ones go
    // to `finished` on the worker's thread, untried, and waitIdle() no longer waits. If this fails, closing a window
    // would wait for the live stage's job, or the uploader would not report the flushes it never tried.
    void discardStopLeavesTheQueueToFinished()
    {
        Seen seen;
        Gate gate;
        std::thread::id finishedOn;
        Worker<int> worker;
        worker.start({.item =
                          [&](int &i) {
                              gate.pass();
                              seen.add(i);
                          },
                      .finished =
                          [&](std::vector<int> &left) {
                              seen.left = left;
                              ++seen.finishedCalls;
                              finishedOn = std::this_thread::get_id();
                          }});
        worker.post(1);
        QVERIFY(gate.waitArrived());
        for (int i = 2; i <= 5; ++i)
            worker.post(i);
        worker.requestStop(WorkerStop::Discard); // never blocks, though item 1 is held
        QVERIFY(worker.stopRequested());
        QVERIFY(worker.stopFlag().load());
        QVERIFY(worker.waitIdle(0ms));
        QVERIFY(!worker.post(6).queued);
        gate.open();
        worker.stop(WorkerStop::Discard);
        QCOMPARE(seen.items, std::vector<int>{1});
        QCOMPARE(seen.left, range(2, 5));
        QCOMPARE(seen.finishedCalls, 1);
        QVERIFY(finishedOn == seen.threads.front());
        QVERIFY(finishedOn != std::this_thread::get_id());
    }

    // A Discard asked for while a Drain runs wins: what is still queued is not handled. If this fails, a session
    // whose window closes while its exporter drains would not end promptly.
    void discardOverridesDrain()
    {
        Seen seen;
        Gate gate;
        Worker<int> worker;
        worker.start({.item =
                          [&](int &i) {
                              if (i == 1)
                                  gate.pass();
                              seen.add(i);
                          },
                      .finished = [&](std::vector<int> &left) { seen.left = left; }});
        worker.post(1);
        QVERIFY(gate.waitArrived());
        worker.post(2);
        worker.post(3);
        worker.requestStop(WorkerStop::Drain);
        QVERIFY(!worker.waitIdle(20ms)); // draining: 2 and 3 are still to do
        worker.requestStop(WorkerStop::Discard);
        gate.open();
        worker.stop(WorkerStop::Drain); // joins; the Discard stays
        QCOMPARE(seen.items, std::vector<int>{1});
        QCOMPARE(seen.left, (std::vector<int>{2, 3}));
    }

    // A handler's sleep (the uploader's retry backoff) lasts its time, or ends at once when a stop is asked for. If
    // this fails, stopping a session would wait out the uploader's backoff, or retries would not wait at all.
    void sleepEndsAtAStop()
    {
        Gate gate;
        bool shortSlept = false;
        bool longSlept = true;
        std::chrono::steady_clock::duration shortTook{};
        std::chrono::steady_clock::duration longTook{};
        Worker<int> worker;
        worker.start({.item = [&](int &) {
            auto start = std::chrono::steady_clock::now();
            shortSlept = worker.sleepUnlessStopped(30ms);
            shortTook = std::chrono::steady_clock::now() - start;
            gate.pass();
            start = std::chrono::steady_clock::now();
            longSlept = worker.sleepUnlessStopped(60s);
            longTook = std::chrono::steady_clock::now() - start;
        }});
        worker.post(1);
        worker.post(2); // a post does not cut a sleep short
        QVERIFY(gate.waitArrived());
        gate.open();
        QTest::qWait(50);
        worker.stop(WorkerStop::Discard);
        QVERIFY(shortSlept);
        QVERIFY(shortTook >= 30ms);
        QVERIFY(!longSlept);
        QVERIFY(longTook >= 40ms);
        QVERIFY2(longTook < 10s, "the stop did not wake the sleeping handler");
    }

    // A worker destroyed before it started, or with items queued, ends without handling them and without hanging.
    // If this fails, a symbolizer whose fetcher never downloaded anything would hang the exporter at the end.
    void destroyedUnstartedOrBusyWorkersEnd()
    {
        int handled = 0;
        {
            Worker<int> unstarted;
            unstarted.post(1);
            unstarted.requestStop(WorkerStop::Drain);
            QVERIFY(unstarted.waitIdle(0ms)); // no thread will ever take the item
        }
        Gate gate;
        {
            Worker<int> busy;
            busy.start({.item = [&](int &) {
                gate.pass();
                ++handled;
            }});
            busy.post(1);
            busy.post(2);
            QVERIFY(gate.waitArrived());
            gate.open();
        } // ~Worker: Discard, join
        QVERIFY(handled >= 1 && handled <= 2);
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "tst_worker.moc"
