// The live timeline fed real LiveProfile snapshots of hand-made flushes, where every number is known: a new
// snapshot shows in the thread list and the CPU chart at once, in the flush chart and the activity strip over the
// next passes of the event loop, and dataShown() follows once every part shows the newest snapshot.

#include "tests/engine/live/synthetic_flush.h"

#include "engine/live/live_profile.h"
#include "engine/live/live_selection.h"
#include "ui/timeline/activity_strip.h"
#include "ui/timeline/live_thread_model.h"
#include "ui/timeline/timeline_chart_view.h"
#include "ui/timeline/timeline_view.h"

#include <QChart>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTest>

using namespace emberline;
using emberline::test::syntheticFlush;

namespace {

constexpr int64_t kStart = 1'700'000'000'000'000'000;

// 250 ms buckets are whole activity bins: the samples' hits are not read.
std::shared_ptr<const engine::ThreadActivity> activityOf(const engine::LiveSnapshot &snapshot)
{
    return std::make_shared<const engine::ThreadActivity>(engine::bucketActivity(snapshot, {}, 250'000'000));
}

QLineSeries *samplesLine(ui::TimelineView &view)
{
    const auto series = view.flushChart()->chart()->series();
    return series.isEmpty() ? nullptr : qobject_cast<QLineSeries *>(series.first());
}

} // namespace

class TestTimelineView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Two flushes on threads 7 and 9. Right after setData the thread list and the CPU chart show both threads
    // while the flush chart and the strip still show nothing; once dataShown() comes, the flush chart has a point
    // per flush with its sample count and the strip the new activity. If this fails, a flush's timeline is drawn
    // in one piece again (a long stall of the GUI thread) or some part never shows the flush.
    void partsFollowInLaterPasses()
    {
        engine::LiveProfile live;
        QVERIFY(live.add(syntheticFlush(1, kStart, 100, 7)).ok());
        QVERIFY(live.add(syntheticFlush(2, kStart + 1'000'000'000, 100, 9)).ok());
        ui::TimelineView view;
        view.resize(900, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy shown(&view, &ui::TimelineView::dataShown);

        const auto snapshot = live.snapshot();
        const auto activity = activityOf(*snapshot);
        view.setData(snapshot, activity);
        QCOMPARE(view.threadModel()->rowCount(), 2);
        QCOMPARE(view.cpuChart()->chart()->series().size(), 2);
        QLineSeries *samples = samplesLine(view);
        QVERIFY(samples);
        QCOMPARE(samples->count(), 0);
        QVERIFY(view.activityStrip()->activity() != activity);
        QCOMPARE(shown.count(), 0);

        QVERIFY(shown.wait(5000));
        QCOMPARE(samples->count(), 2);
        for (int i = 0; i < 2; ++i)
            QCOMPARE(samples->at(i).y(), static_cast<double>(snapshot->chunks[size_t(i)]->samples));
        QVERIFY(view.activityStrip()->activity() == activity);
    }

    // Two snapshots given before the event loop runs: the parts still to come show the newer one, and
    // dataShown() comes once, for it. If this fails, a burst of flushes shows a stale flush chart or strip, or
    // reports a flush as shown before it is.
    void newerSnapshotOvertakesPendingParts()
    {
        engine::LiveProfile live;
        QVERIFY(live.add(syntheticFlush(1, kStart, 100, 7)).ok());
        ui::TimelineView view;
        view.resize(900, 420);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy shown(&view, &ui::TimelineView::dataShown);

        view.setData(live.snapshot(), activityOf(*live.snapshot()));
        QVERIFY(live.add(syntheticFlush(2, kStart + 1'000'000'000, 100, 9)).ok());
        QVERIFY(live.add(syntheticFlush(3, kStart + 2'000'000'000, 100, 7)).ok());
        const auto newest = live.snapshot();
        const auto activity = activityOf(*newest);
        view.setData(newest, activity);

        QVERIFY(shown.wait(5000));
        QTest::qWait(100); // room for a second, wrong dataShown()
        QCOMPARE(shown.count(), 1);
        QCOMPARE(samplesLine(view)->count(), 3);
        QVERIFY(view.activityStrip()->activity() == activity);
        QCOMPARE(view.threadModel()->rowCount(), 2);
    }
};

QTEST_MAIN(TestTimelineView)
#include "tst_timeline_view.moc"
