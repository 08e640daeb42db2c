// The live timeline's geometry without a screen: time ↔ pixels, clamping, drags into ordered ranges, and the
// thread colours the charts, strip and list share.

#include "ui/timeline/time_axis.h"

#include <QTest>

using emberline::ui::TimeAxis;

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
