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
#include <QGraphicsScene>
#include <QGraphicsTextItem>
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

// The x-axis labels a chart draws ("0 s", "1 s"...): the text items of its scene that end in " s".
QList<QGraphicsTextItem *> timeLabels(const ui::TimelineChartView *view)
{
    QList<QGraphicsTextItem *> out;
    for (QGraphicsItem *item : view->scene()->items()) {
        auto *text = dynamic_cast<QGraphicsTextItem *>(item);
        if (text && text->isVisible() && text->toPlainText().endsWith(QLatin1String(" s")))
            out << text;
    }
    return out;
}

// Why a chart's time labels are not whole, below its plot area and inside the view ("" when they are).
QString labelProblem(const ui::TimelineChartView *view)
{
    const QList<QGraphicsTextItem *> labels = timeLabels(view);
    if (labels.size() < 2)
        return QStringLiteral("%1 time labels").arg(labels.size());
    const QRectF plot = view->chart()->plotArea();
    const QRect inside = view->viewport()->rect();
    for (const QGraphicsTextItem *label : labels) {
        // The text's own box, without the document margin around it.
        const QFontMetricsF metrics(label->font());
        QRectF box(0, 0, metrics.horizontalAdvance(label->toPlainText()), metrics.height());
        box.moveCenter(label->mapRectToScene(label->boundingRect()).center());
        const QRect shown = view->mapFromScene(box).boundingRect();
        if (box.top() < plot.bottom() || !inside.contains(shown))
            return QStringLiteral("label %1 at %2,%3 %4x%5; plot bottom %6, view %7 high")
                .arg(label->toPlainText())
                .arg(shown.x())
                .arg(shown.y())
                .arg(shown.width())
                .arg(shown.height())
                .arg(plot.bottom())
                .arg(inside.height());
    }
    return {};
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

    // The pane made tall (the flush chart joins the CPU chart) and short again. If this fails, a chart's time
    // labels are drawn where its plot area was before the resize: cut off at the bottom of the chart, hidden under
    // the activity strip, or over the plot.
    void timeLabelsWholeAtAnyHeight()
    {
        engine::LiveProfile live;
        for (uint32_t i = 0; i < 6; ++i)
            QVERIFY(live.add(syntheticFlush(i + 1, kStart + int64_t(i) * 1'000'000'000, 100, 7)).ok());
        ui::TimelineView view;
        view.resize(900, 200);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy shown(&view, &ui::TimelineView::dataShown);
        view.setData(live.snapshot(), activityOf(*live.snapshot()));
        QVERIFY(shown.wait(5000));
        for (int height : {200, 700, 420, 900, 150}) {
            view.resize(900, height);
            QTest::qWait(50); // the layout, the charts' own layouts and a paint
            QVERIFY2(labelProblem(view.cpuChart()).isEmpty(),
                     qPrintable(QStringLiteral("%1 px: CPU chart: %2").arg(height).arg(labelProblem(view.cpuChart()))));
            if (view.flushChart()->isVisible())
                QVERIFY2(
                    labelProblem(view.flushChart()).isEmpty(),
                    qPrintable(
                        QStringLiteral("%1 px: flush chart: %2").arg(height).arg(labelProblem(view.flushChart()))));
        }
    }
};

QTEST_MAIN(TestTimelineView)
#include "tst_timeline_view.moc"
