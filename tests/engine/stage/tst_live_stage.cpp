// The live stage: flushes in, immutable updates out (a job with flushes publishes its timelines' part first), with the
// aggregate, the scope's profile, the timeline's buckets and the analysis the views show; requests answered with
// their generation.
#include "engine/stage/live_stage.h"

#include "engine/common/thread_priority.h"
#include "tests/engine/live/synthetic_flush.h"

#include <QTest>

#include <atomic>
#include <cerrno>
#include <mutex>

#include <sys/resource.h>
#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;

namespace {

// Collects what the stage publishes (on its own thread).
struct Published {
    std::mutex mutex;
    std::vector<std::shared_ptr<const LiveUpdate>> updates;
    LiveStage::Publish callback()
    {
        return [this](std::shared_ptr<const LiveUpdate> u) {
            std::lock_guard lock(mutex);
            updates.push_back(std::move(u));
        };
    }
    std::shared_ptr<const LiveUpdate> last()
    {
        std::lock_guard lock(mutex);
        return updates.empty() ? nullptr : updates.back();
    }
    std::vector<uint32_t> flushSequences()
    {
        std::lock_guard lock(mutex);
        std::vector<uint32_t> out;
        for (const auto &u : updates)
            for (const auto &f : u->flushes)
                out.push_back(f->sequence);
        return out;
    }
};

int64_t selfOf(const LiveUpdate &u, const char *name)
{
    for (const FunctionTable::Row &row : u.analysis->functions->rows())
        if (u.loaded->frames->frame(row.frame).name == name)
            return row.self;
    return -1;
}

constexpr int64_t kSecond = 1'000'000'000;

} // namespace

class TestLiveStage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFlushArrivesOnceWithItsAnalysis()
    {
        Published published;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, published.callback());
        for (uint32_t s = 1; s <= 3; ++s)
            stage.addFlush(test::syntheticFlush(s, 2 * int64_t(s) * kSecond, 100, 7));
        stage.waitUntilIdle();
        // Flushes may be merged together by one job, but each reaches the views exactly once, in order.
        QCOMPARE(published.flushSequences(), (std::vector<uint32_t>{1, 2, 3}));
        auto u = published.last();
        QVERIFY(u && u->snapshot && u->loaded && u->analysis && u->activity);
        QCOMPARE(u->snapshot->flushes, 3u);
        QVERIFY(u->flushReceivedNs > 0);
        // Without a request, the profile's default type (cpu-time): 300 samples of 10 ms, half a→b, half a→c.
        QCOMPARE(u->analysis->sampleType, u->snapshot->profile->defaultSampleTypeIndex());
        QCOMPARE(u->analysis->sampleType, 1);
        QCOMPARE(u->analysis->tree->total(), int64_t(300) * 10'000'000);
        QCOMPARE(selfOf(*u, "b"), int64_t(150) * 10'000'000);
        QCOMPARE(selfOf(*u, "c"), int64_t(150) * 10'000'000);
        QCOMPARE(selfOf(*u, "a"), int64_t(0));
        QCOMPARE(u->loaded->totals.at(0), int64_t(300));
        QVERIFY(u->error.empty());
    }

    // The stage's thread derives what the window waits for: it runs at the GUI thread's raised priority where the
    // system allows it (root), and as it was started where it does not.
    void stageThreadRaised()
    {
        std::atomic<int> nice{100};
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, [&](const std::shared_ptr<const LiveUpdate> &) {
            errno = 0;
            const int n = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
            nice = errno == 0 ? n : 200;
        });
        stage.addFlush(test::syntheticFlush(1, 2 * kSecond, 100, 7));
        stage.waitUntilIdle();
        if (::geteuid() == 0) {
            QCOMPARE(nice.load(), engine::kRaisedNice);
        } else {
            errno = 0;
            const int own = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
            QCOMPARE(nice.load(), own); // refused: a thread starts at its creator's value
            if (qEnvironmentVariable("CI") == QLatin1String("true"))
                QFAIL("CI runs as root: the raise must be tested there");
            QSKIP("not privileged to raise a thread's priority: checked only that nothing changed");
        }
    }

    void timelinesGoBeforeTheAnalysis()
    {
        Published published;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, published.callback());
        stage.addFlush(test::syntheticFlush(1, 2 * kSecond, 100, 7));
        stage.waitUntilIdle();
        std::vector<std::shared_ptr<const LiveUpdate>> updates;
        {
            std::lock_guard lock(published.mutex);
            updates = published.updates;
        }
        // A job with a flush: its timelines' part, then the same job's analysis.
        QCOMPARE(updates.size(), size_t(2));
        const LiveUpdate &first = *updates[0];
        const LiveUpdate &second = *updates[1];
        QVERIFY(first.analysisFollows && !first.timelineSent);
        QCOMPARE(first.flushes.size(), size_t(1));
        QVERIFY(first.snapshot && first.loaded && first.activity && first.heatmap);
        QVERIFY(!first.analysis);
        QVERIFY(second.timelineSent && !second.analysisFollows);
        QVERIFY(second.flushes.empty());
        QVERIFY(second.analysis && second.analysis->tree->total() > 0);
        QCOMPARE(second.generation, first.generation);
        QCOMPARE(second.snapshot, first.snapshot);
        QCOMPARE(second.loaded, first.loaded);
        QCOMPARE(second.activity, first.activity);

        // A request alone is one update, whole.
        const uint64_t generation = stage.setView(LiveViewRequest{});
        stage.waitUntilIdle();
        const auto answer = published.last();
        QCOMPARE(answer->generation, generation);
        QVERIFY(!answer->analysisFollows && !answer->timelineSent);
        QVERIFY(answer->analysis && answer->activity);
    }

    void requestsAreAnsweredWithTheirGeneration()
    {
        Published published;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, published.callback());
        stage.addFlush(test::syntheticFlush(1, 1 * kSecond, 100, 7));
        stage.addFlush(test::syntheticFlush(2, 3 * kSecond, 60, 8));
        stage.waitUntilIdle();

        LiveViewRequest lastFlush;
        lastFlush.scope = LiveScope::LastFlush;
        lastFlush.sampleType = 0; // cpu-samples
        const uint64_t g1 = stage.setView(lastFlush);
        stage.waitUntilIdle();
        auto u = published.last();
        QCOMPARE(u->generation, g1);
        QVERIFY(u->flushes.empty()); // a request brings no flush
        QCOMPARE(u->analysis->tree->total(), int64_t(60));
        QCOMPARE(u->loaded->totals.at(0), int64_t(60));

        // The first thread hidden over the whole session leaves the second one's 60 samples.
        LiveViewRequest hidden;
        hidden.sampleType = 0;
        hidden.hiddenThreads = {0};
        const uint64_t g2 = stage.setView(hidden);
        QVERIFY(g2 > g1);
        stage.waitUntilIdle();
        u = published.last();
        QCOMPARE(u->generation, g2);
        QCOMPARE(u->analysis->tree->total(), int64_t(60));

        // Another sample type: cpu-time, 10 ms per sample.
        LiveViewRequest cpuTime;
        cpuTime.sampleType = 1;
        stage.setView(cpuTime);
        stage.waitUntilIdle();
        u = published.last();
        QCOMPARE(u->analysis->sampleType, 1);
        QCOMPARE(u->analysis->tree->total(), int64_t(160) * 10'000'000);
        QCOMPARE(u->analysis->unit, std::string("nanoseconds"));
    }

    void aRequestBeforeAnyFlushWaitsForData()
    {
        Published published;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, published.callback());
        LiveViewRequest request;
        request.sampleType = 0;
        stage.setView(request);
        stage.waitUntilIdle();
        auto u = published.last();
        // Nothing merged yet: an update without data, which the views skip.
        QVERIFY(!u || !u->loaded);
        stage.addFlush(test::syntheticFlush(1, kSecond, 10, 7));
        stage.waitUntilIdle();
        u = published.last();
        QVERIFY(u && u->analysis);
        QCOMPARE(u->analysis->sampleType, 0); // the request made before the first flush holds
    }

    void stoppedStagePublishesNothing()
    {
        Published published;
        LiveStage stage({QStringLiteral("/tmp/session"), 100}, published.callback());
        stage.addFlush(test::syntheticFlush(1, kSecond, 10, 7));
        stage.waitUntilIdle();
        const auto before = published.flushSequences().size();
        stage.stop();
        stage.addFlush(test::syntheticFlush(2, 2 * kSecond, 10, 7));
        stage.setView(LiveViewRequest{});
        stage.waitUntilIdle(); // returns at once once stopped
        QTest::qWait(50);
        QCOMPARE(published.flushSequences().size(), before);
    }
};

QTEST_GUILESS_MAIN(TestLiveStage)
#include "tst_live_stage.moc"
