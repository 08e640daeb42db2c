// The Memory chart of a live session, offscreen, on hand-made flushes: one live-heap point per flush at its end with
// the flush's in-use bytes, the RSS readings beside it on the same axis labelled in MiB, a drag across it that
// selects the range as the thread timelines do (in a live session's view too). (The RSS readings come in the session's
// stats: tst_memory_session reads a real program's.)

#include "tests/engine/live/synthetic_memory_flush.h"
#include "tests/ui/test_settings.h"

#include "engine/live/live_profile.h"
#include "engine/session/profiling_session.h"
#include "engine/stage/live_stage.h"
#include "ui/timeline/timeline_chart_view.h"
#include "ui/timeline/timeline_view.h"
#include "ui/views/live/live_session_view.h"
#include "ui/views/memory/memory_chart.h"

#include <QAreaSeries>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

#include <mutex>

using namespace emberline;
using namespace emberline::ui;
using emberline::test::MemoryRow;
using emberline::test::syntheticMemoryFlush;

namespace memory_chart_test {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMiB = 1 << 20;

// Three 1 s flushes from 10 s: 2 MiB in use at the first's end, 5 MiB at the second's, 3 MiB at the third's.
std::vector<std::shared_ptr<const engine::Flush>> flushes()
{
    return {syntheticMemoryFlush(1, 10 * kSecond, {{"a", 2, 2 * kMiB, 2, 2 * kMiB}}, 5),
            syntheticMemoryFlush(2, 11 * kSecond, {{"a", 1, kMiB, 2, 2 * kMiB}, {"b", 3, 3 * kMiB, 3, 3 * kMiB}}, 5),
            syntheticMemoryFlush(3, 12 * kSecond, {{"a", 0, 0, 2, 2 * kMiB}, {"c", 1, kMiB, 1, kMiB}}, 5)};
}

// The same flushes, each with the in-use margin a sampled session gives it: 0.5, 3 and 1 MiB.
std::vector<std::shared_ptr<const engine::Flush>> rangedFlushes()
{
    std::vector<std::shared_ptr<const engine::Flush>> ranged;
    const double margins[] = {kMiB / 2.0, 3.0 * kMiB, kMiB};
    int n = 0;
    for (const auto &flush : flushes()) {
        auto copy = std::make_shared<engine::Flush>(*flush);
        copy->inUseBytesMargin = margins[n++];
        ranged.push_back(copy);
    }
    return ranged;
}

std::shared_ptr<const engine::LiveSnapshot> snapshotOf(const std::vector<std::shared_ptr<const engine::Flush>> &all)
{
    engine::LiveProfile live;
    for (const auto &flush : all)
        if (!live.add(flush))
            qWarning("a flush could not be added");
    return live.snapshot();
}

// Drags across a chart from one fraction of its plot area to another.
void drag(TimelineChartView *view, double from, double to)
{
    const TimeAxis &axis = view->axis();
    const int y = view->height() / 2;
    const auto x = [&](double f) { return static_cast<int>(axis.left() + f * axis.width()); };
    QTest::mousePress(view->viewport(), Qt::LeftButton, {}, QPoint(x(from), y));
    QTest::mouseMove(view->viewport(), QPoint(x(to), y));
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, QPoint(x(to), y));
}

} // namespace memory_chart_test

using namespace memory_chart_test;

class TestMemoryChart : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        emberline::ui::test::isolateSettings(m_dir, "tst_memory_chart");
        engine::registerSessionMetaTypes();
    }

    // If this fails, the chart shows another heap than the flushes' in-use space (a sum over flushes, say), at
    // another time than each flush's end, or on an axis whose labels do not say the unit.
    void heapPointsAtFlushEndsAndResidentOnTheSameAxis()
    {
        const auto snap = snapshotOf(flushes());
        const auto points = MemoryChart::heapPoints(*snap);
        QCOMPARE(points.size(), size_t(3));
        QCOMPARE(points[0], std::pair(11 * kSecond, 2 * kMiB));
        QCOMPARE(points[1], std::pair(12 * kSecond, 5 * kMiB));
        QCOMPARE(points[2], std::pair(13 * kSecond, 3 * kMiB));

        MemoryChart chart;
        chart.resize(800, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setSnapshot(snap);
        QCOMPARE(chart.heapSeries()->count(), 3);
        QCOMPARE(chart.heapSeries()->at(0), QPointF(1.0, 2.0)); // 1 s after the session's start, 2 MiB
        QCOMPARE(chart.heapSeries()->at(1).y(), 5.0);
        QVERIFY(chart.bytesAxis()->labelFormat().endsWith(QStringLiteral("MiB")));

        // RSS readings, one every 250 ms, run past the last flush: the chart stretches to the newest.
        for (int i = 0; i <= 16; ++i)
            chart.addResident(10 * kSecond + i * 250'000'000LL, 8 * kMiB + i * kMiB / 4);
        QTRY_COMPARE(chart.residentSeries()->count(), 17);
        QCOMPARE(chart.residentSeries()->at(0), QPointF(0.0, 8.0));
        QCOMPARE(chart.chartView()->axis().endNs(), 14 * kSecond);
        QVERIFY(chart.bytesAxis()->max() >= 12.0); // the highest reading, 12 MiB, fits
        const QString tip = chart.toolTipAt(12 * kSecond + 100'000'000);
        QVERIFY2(tip.contains(QStringLiteral("Live heap: 5")) && tip.contains(QStringLiteral("MiB")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("Resident: 10")), qPrintable(tip));

        // Small values: the labels say KiB.
        MemoryChart small;
        small.resize(400, 200);
        small.setSnapshot(snapshotOf({syntheticMemoryFlush(1, kSecond, {{"a", 1, 4096, 1, 4096}})}));
        QVERIFY(small.bytesAxis()->labelFormat().endsWith(QStringLiteral("KiB")));
    }

    // If this fails, the live heap stands still between flushes (the session's live numbers, a reading every quarter
    // second, are not drawn beside the flushes' points), or a heap that rose and fell within one flush leaves no
    // trace once the flush is in.
    void readingsBetweenFlushes()
    {
        auto all = flushes();
        const std::vector<std::shared_ptr<const engine::Flush>> firstTwo(all.begin(), all.begin() + 2);
        MemoryChart chart;
        chart.resize(800, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setSnapshot(snapshotOf(firstTwo)); // points at 11 s (2 MiB) and 12 s (5 MiB)
        for (int i = 1; i <= 3; ++i)
            chart.addHeapReading(12 * kSecond + i * 250'000'000LL, (5 + i) * kMiB);
        chart.addHeapReading(12 * kSecond, kMiB); // older than the newest: dropped
        QTRY_COMPARE(chart.heapReadingSeries()->count(), 3);
        QCOMPARE(chart.heapReadingSeries()->at(2), QPointF(2.75, 8.0));
        QCOMPARE(chart.heapSeries()->count(), 2);
        QVERIFY(chart.bytesAxis()->max() >= 8.0);
        QVERIFY(chart.chartView()->axis().endNs() >= 12 * kSecond + 750'000'000LL);
        const QString tip = chart.toolTipAt(12 * kSecond + 600'000'000);
        QVERIFY2(tip.contains(QStringLiteral("quarter second: 7")), qPrintable(tip));

        // The next flush comes in (3 MiB at 13 s): the 8 MiB reading between stays drawn.
        chart.setSnapshot(snapshotOf(all));
        QCOMPARE(chart.heapSeries()->count(), 3);
        QCOMPARE(chart.heapReadingSeries()->count(), 3);
        QVERIFY(chart.bytesAxis()->max() >= 8.0);
    }

    // An attached program: a line at the attach from the axis' foot to its top, in the legend, and the hover says the
    // heap from before is not in the live heap. If this fails, an attached session's heap reads as the program's
    // whole heap, below an RSS that holds more.
    void attachMarked()
    {
        MemoryChart chart;
        chart.resize(800, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QVERIFY(!chart.attachSeries());
        chart.setSnapshot(snapshotOf(flushes())); // the session from 10 s, points at 11, 12 and 13 s
        chart.setAttachedAt(10 * kSecond + 500'000'000LL);
        QVERIFY(chart.attachSeries());
        QCOMPARE(chart.attachSeries()->count(), 2);
        QCOMPARE(chart.attachSeries()->at(0), QPointF(0.5, 0.0));
        QCOMPARE(chart.attachSeries()->at(1).x(), 0.5);
        QVERIFY(chart.attachSeries()->at(1).y() >= 5.0); // up to the top: above the highest heap point
        const QString tip = chart.toolTipAt(12 * kSecond);
        QVERIFY2(tip.contains(QStringLiteral("Attached 0.5 s")), qPrintable(tip));
    }

    // If this fails, the live heap's sampling range is not drawn around it (flush by flush, under the lines, in the
    // legend), is drawn for an exact session, or the hover does not tell it.
    void samplingRangeAroundTheHeap()
    {
        const auto snap = snapshotOf(rangedFlushes());
        QCOMPARE(MemoryChart::heapMargins(*snap), (std::vector<double>{kMiB / 2.0, 3.0 * kMiB, kMiB}));

        MemoryChart chart;
        chart.resize(800, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setSnapshot(snap);
        QAreaSeries *range = chart.rangeSeries();
        QVERIFY(range->isVisible());
        QVERIFY(chart.chartView()->chart()->legend()->markers(range).first()->isVisible());
        QCOMPARE(chart.chartView()->chart()->series().first(), range); // drawn first: under the lines
        QCOMPARE(range->upperSeries()->count(), 3);
        QCOMPARE(range->upperSeries()->at(1), QPointF(2.0, 8.0)); // 5 MiB + 3 MiB
        QCOMPARE(range->lowerSeries()->at(1), QPointF(2.0, 2.0));
        QCOMPARE(range->lowerSeries()->at(0), QPointF(1.0, 1.5));
        QVERIFY(chart.bytesAxis()->max() >= 8.0); // the band's top fits
        const QString tip = chart.toolTipAt(12 * kSecond + 100'000'000);
        QVERIFY2(tip.contains(QStringLiteral("Live heap: 5")) && tip.contains(QStringLiteral("\u00b13")),
                 qPrintable(tip));

        // Exact sessions (margin 0) and flushes read back from files (margin unknown) draw no band.
        MemoryChart exact;
        exact.resize(800, 300);
        exact.setSnapshot(snapshotOf(flushes()));
        QVERIFY(!exact.rangeSeries()->isVisible());
        QVERIFY(!exact.chartView()->chart()->legend()->markers(exact.rangeSeries()).first()->isVisible());
        QVERIFY(!exact.toolTipAt(12 * kSecond + 100'000'000).contains(QStringLiteral("\u00b1")));
    }

    // If this fails, a short chart (the timelines' pane at a fifth of a window) elides every label of its bytes
    // axis or its legend (every line a sampled session draws) to "...", or a tall one stops labelling its ticks.
    void bytesLabelsReadableInAShortPane()
    {
        for (int height : {110, 400}) {
            MemoryChart chart;
            chart.resize(700, height);
            chart.show();
            QVERIFY(QTest::qWaitForWindowExposed(&chart));
            chart.setSnapshot(snapshotOf(rangedFlushes()));
            chart.addHeapReading(12 * kSecond + 500'000'000LL, 4 * kMiB);
            chart.addResident(12 * kSecond, 9 * kMiB);
            QTest::qWait(600); // the readings' relayout
            // The bytes axis' labels: numbers, or what QtCharts elided ("..."); not the time labels or the legend.
            QStringList labels;
            for (QGraphicsItem *item : chart.chartView()->scene()->items()) {
                auto *text = dynamic_cast<QGraphicsTextItem *>(item);
                const QString label = text && text->isVisible() ? text->toPlainText() : QString();
                if (!label.isEmpty() && !label.endsWith(QLatin1String(" s")) &&
                    (label.front().isDigit() || label.contains(QLatin1String("..."))))
                    labels << label;
            }
            QVERIFY2(labels.size() >= 2, qPrintable(labels.join(QLatin1Char('|'))));
            for (const QString &label : labels)
                QVERIFY2(label.endsWith(QStringLiteral("MiB")),
                         qPrintable(QStringLiteral("%1 px: %2").arg(height).arg(label)));
            if (height > 300)
                QVERIFY2(labels.size() >= 4, qPrintable(labels.join(QLatin1Char('|'))));
        }
    }

    // A drag across the chart reports the range under it, in the session's time. If this fails, the memory chart
    // cannot select what the flame graph shows.
    void dragSelectsARange()
    {
        MemoryChart chart;
        chart.resize(800, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setSnapshot(snapshotOf(flushes()));
        QSignalSpy selected(&chart, &MemoryChart::rangeSelected);
        drag(chart.chartView(), 0.25, 0.75);
        QCOMPARE(selected.count(), 1);
        const auto start = selected.at(0).at(0).toLongLong();
        const auto end = selected.at(0).at(1).toLongLong();
        QVERIFY2(std::abs(start - 10'750'000'000) < 50'000'000, qPrintable(QString::number(start)));
        QVERIFY2(std::abs(end - 12'250'000'000) < 50'000'000, qPrintable(QString::number(end)));
    }

    // A live session that profiles memory has a Memory tab; a flush's update reaches its chart, and a range dragged on
    // it becomes the view's selected range, shown on the thread timelines too. If this fails, the chart is missing,
    // stale, or its selection goes nowhere.
    void liveViewHasAMemoryTabThatSelects()
    {
        engine::SessionConfig config;
        config.command = {"/bin/true"};
        config.memory = true;
        auto *session = new engine::ProfilingSession(config);
        LiveSessionView view(session);
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto *tabs = view.findChild<QTabWidget *>(QStringLiteral("timelineTabs"));
        QVERIFY(view.memoryChart());
        QWidget *memoryTab = view.memoryChart()->parentWidget(); // the chart beside the summary
        QCOMPARE(tabs->tabText(tabs->indexOf(memoryTab)), QStringLiteral("Memory"));
        tabs->setCurrentWidget(memoryTab);

        std::mutex mutex;
        std::shared_ptr<const engine::LiveUpdate> last;
        {
            engine::LiveStage stage({}, [&](std::shared_ptr<const engine::LiveUpdate> u) {
                std::lock_guard lock(mutex);
                last = std::move(u);
            });
            for (const auto &flush : flushes())
                stage.addFlush(flush);
            stage.waitUntilIdle();
        }
        QVERIFY(last);
        Q_EMIT session->liveUpdated(last);
        QCOMPARE(view.memoryChart()->heapSeries()->count(), 3);
        drag(view.memoryChart()->chartView(), 0.0, 0.5);
        QCOMPARE(view.scope(), engine::LiveScope::SelectedRange);
        QVERIFY(view.request().rangeEndNs > 11 * kSecond && view.request().rangeEndNs < 12 * kSecond);

        // A CPU session has no Memory tab.
        engine::SessionConfig cpu;
        cpu.command = {"/bin/true"};
        LiveSessionView cpuView(new engine::ProfilingSession(cpu));
        QVERIFY(!cpuView.memoryChart());
    }
};

QTEST_MAIN(TestMemoryChart)
#include "tst_memory_chart.moc"
