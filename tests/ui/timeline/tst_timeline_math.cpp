// The live timeline's geometry without a screen: time ↔ pixels, clamping, drags into ordered ranges, and the
// thread colours the charts, strip and list share.

#include "ui/timeline/time_axis.h"
#include "ui/timeline/timeline_view.h"

#include <QTest>

using emberline::ui::TimeAxis;
using emberline::ui::TimelineView;

class TestTimelineMath : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // 10 s over 500 px from x=60: 2.5 s lands at 185 px and back. If this fails, a dragged range selects other
    // times than the ones under the mouse.
    void timeToPixelsAndBack()
    {
        TimeAxis axis;
        axis.setTimeRange(1'000'000'000'000, 1'010'000'000'000);
        axis.setPixelRange(60, 500);
        QVERIFY(axis.isValid());
        QCOMPARE(axis.toPixel(1'002'500'000'000), 185.0);
        QCOMPARE(axis.toTime(185), int64_t(1'002'500'000'000));
        QCOMPARE(axis.toSeconds(1'002'500'000'000), 2.5);
        QCOMPARE(axis.fromSeconds(2.5), int64_t(1'002'500'000'000));
    }

    // Outside the plot area times clamp to the span's ends. If this fails, dragging past the chart's edge
    // selects times the session never had.
    void clampsOutsideTheSpan()
    {
        TimeAxis axis;
        axis.setTimeRange(0, 1'000'000'000);
        axis.setPixelRange(10, 100);
        QCOMPARE(axis.toTime(-50), int64_t(0));
        QCOMPARE(axis.toTime(500), int64_t(1'000'000'000));
        QCOMPARE(axis.toPixel(-5), 10.0);
        QCOMPARE(axis.toPixel(5'000'000'000), 110.0);
    }

    // A right-to-left drag gives the same ordered range as left-to-right; a 2-pixel jitter is a click. If this
    // fails, selections come out reversed or clicks select slivers.
    void dragsBecomeOrderedRanges()
    {
        TimeAxis axis;
        axis.setTimeRange(0, 1'000'000'000);
        axis.setPixelRange(0, 1000);
        const auto forward = axis.rangeBetween(200, 700);
        const auto backward = axis.rangeBetween(700, 200);
        QCOMPARE(forward, backward);
        QCOMPARE(forward.first, int64_t(200'000'000));
        QCOMPARE(forward.second, int64_t(700'000'000));
        QVERIFY(!TimeAxis::isDrag(100, 102));
        QVERIFY(TimeAxis::isDrag(100, 110));
        QVERIFY(TimeAxis::isDrag(110, 100));
    }

    // An empty span or no pixels is not a usable axis and maps everything to its start. If this fails, the first
    // paint before any flush divides by zero.
    void degenerateAxes()
    {
        TimeAxis axis;
        QVERIFY(!axis.isValid());
        QCOMPARE(axis.toTime(50), int64_t(0));
        axis.setTimeRange(5, 5);
        axis.setPixelRange(0, 100);
        QVERIFY(!axis.isValid());
        QCOMPARE(axis.toPixel(5), 0.0);
    }

    // A CPU line with more buckets than half its pixels keeps, per four-pixel column, its lowest and highest
    // bucket in time order; with no more buckets than that, every bucket. If this fails, a long session's CPU
    // chart loses a peak or a dip, shows points out of time order, or draws thousands of points a refresh.
    void cpuLineKeepsEveryPeakWhenThinned()
    {
        emberline::engine::ThreadActivity a;
        a.startNs = 1'000'000'000'000;
        a.bucketNs = 1'000'000'000;
        a.bucketCount = 3000;
        a.cpuNs.assign(1, std::vector<int64_t>(a.bucketCount, 500'000'000)); // 50% throughout
        a.cpuNs[0][1234] = 1'000'000'000;                                    // one second at 100%
        a.cpuNs[0][2500] = 0;                                                // one idle second
        TimeAxis axis;
        axis.setTimeRange(a.startNs, a.startNs + 3000 * a.bucketNs);
        axis.setPixelRange(0, 500);
        double peak = 0;
        const QList<QPointF> thin = TimelineView::cpuPoints(a, 0, axis, peak);
        QVERIFY(thin.size() <= 252); // two per column, and the first and last bucket
        QVERIFY(thin.size() >= 125);
        QCOMPARE(peak, 100.0);
        double highest = 0, lowest = 100;
        for (qsizetype i = 0; i < thin.size(); ++i) {
            highest = std::max(highest, thin[i].y());
            lowest = std::min(lowest, thin[i].y());
            if (i > 0)
                QVERIFY(thin[i].x() > thin[i - 1].x());
        }
        QCOMPARE(highest, 100.0);
        QCOMPARE(lowest, 0.0);
        QCOMPARE(thin.front().x(), 0.5); // bucket centres, in seconds from the span's start
        QCOMPARE(thin.back().x(), 2999.5);

        a.bucketCount = 250; // one per two pixels: every bucket
        a.cpuNs[0].resize(250);
        peak = 0;
        const QList<QPointF> all = TimelineView::cpuPoints(a, 0, axis, peak);
        QCOMPARE(all.size(), qsizetype(250));
        QCOMPARE(all[10].y(), 50.0);
    }

    // Thread colours are stable per ordinal and differ between neighbours. If this fails, a thread changes
    // colour between the chart, the strip and the list.
    void threadColours()
    {
        QCOMPARE(emberline::ui::threadColor(3), emberline::ui::threadColor(3));
        QVERIFY(emberline::ui::threadColor(0) != emberline::ui::threadColor(1));
    }
};

QTEST_GUILESS_MAIN(TestTimelineMath)
#include "tst_timeline_math.moc"
