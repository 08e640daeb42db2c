// The sub-second heatmap widget offscreen: its geometry (hit-testing, visible columns, range rectangles), drags
// that select range A and, with Shift, range B (the signals' time ranges), Esc, tooltips; the live session view's
// heatmap growing with flushes from a real live stage and driving the stage's range; and an opened file whose
// samples carry timestamps, filtered to the range dragged on its heatmap.

#include "tests/engine/live/synthetic_flush.h"
#include "tests/ui/views/explorer_test_support.h"

#include "engine/pprof/pprof_writer.h"
#include "engine/session/profiling_session.h"
#include "engine/stage/live_stage.h"
#include "ui/flamegraph/diff_flame_graph_view.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/timeline/heatmap_layout.h"
#include "ui/timeline/heatmap_panel.h"
#include "ui/timeline/heatmap_view.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"
#include "ui/views/live/live_session_view.h"

#include <QApplication>
#include <QDir>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <mutex>

using namespace emberline;
using engine::Heatmap;
using engine::HeatmapCell;
using engine::TimeRange;

namespace {

constexpr int64_t kStart = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;

// `columns` seconds, a sample every 10 ms (two per cell), one more in the cell (1, 7).
std::shared_ptr<const Heatmap> evenHeatmap(size_t columns)
{
    auto h = std::make_shared<Heatmap>(kStart);
    for (int64_t t = 0; t < static_cast<int64_t>(columns) * kSecond; t += 10 * kMs)
        h->add(kStart + t, 1);
    h->add(kStart + kSecond + kMs * 7 * 20, 1);
    return h;
}

QPoint centreOf(const ui::HeatmapView &view, HeatmapCell cell)
{
    return view.layout().cellRect(cell).center().toPoint();
}

// A press at one cell, moves to another and a release there, as a user's drag delivers them.
void drag(ui::HeatmapView &view, HeatmapCell from, HeatmapCell to, Qt::KeyboardModifiers modifiers = {})
{
    const QPointF a = centreOf(view, from);
    const QPointF b = centreOf(view, to);
    const QPointF global = view.mapToGlobal(QPoint(0, 0));
    QMouseEvent press(QEvent::MouseButtonPress, a, a + global, Qt::LeftButton, Qt::LeftButton, modifiers);
    QApplication::sendEvent(&view, &press);
    const QPointF mid = (a + b) / 2;
    QMouseEvent move1(QEvent::MouseMove, mid, mid + global, Qt::NoButton, Qt::LeftButton, modifiers);
    QApplication::sendEvent(&view, &move1);
    QMouseEvent move2(QEvent::MouseMove, b, b + global, Qt::NoButton, Qt::LeftButton, modifiers);
    QApplication::sendEvent(&view, &move2);
    QMouseEvent release(QEvent::MouseButtonRelease, b, b + global, Qt::LeftButton, Qt::NoButton, modifiers);
    QApplication::sendEvent(&view, &release);
}

TimeRange rangeArg(const QList<QVariant> &args, int first)
{
    return {args.at(first).value<int64_t>(), args.at(first + 1).value<int64_t>()};
}

// A profile over three seconds: "early" ten times in the first 200 ms, "late" five times in second 2, each
// sample with its end_timestamp_ns, written as a real pprof file.
// Ten samples of "early" in the first 200 ms and five of "late" in the third second, each with its timestamp
// (`timed`) or without; `early` and `late` choose which of the two are in.
engine::Profile timedProfile(bool early = true, bool late = true, bool timed = true)
{
    engine::Profile p;
    p.sampleTypes().push_back({p.intern("cpu-samples"), p.intern("count")});
    for (const char *name : {"early", "late"}) {
        engine::Function f;
        f.id = p.functions().size() + 1;
        f.name = p.intern(name);
        p.functions().push_back(f);
        engine::Location loc;
        loc.id = p.locations().size() + 1;
        loc.address = 0x1000 + loc.id;
        loc.lines.push_back({static_cast<uint32_t>(p.functions().size() - 1), 0, 0});
        p.locations().push_back(loc);
    }
    const engine::StringId timeKey = timed ? p.intern("end_timestamp_ns") : 0;
    const int64_t one[] = {1};
    const auto add = [&](uint32_t location, int64_t timeNs) {
        const engine::Label label{timeKey, 0, timeNs, 0};
        p.addSample(std::vector<uint32_t>{location}, one, {&label, timed ? size_t(1) : size_t(0)});
    };
    for (int i = 0; early && i < 10; ++i)
        add(0, kStart + kMs * 20 * i);
    for (int i = 0; late && i < 5; ++i)
        add(1, kStart + 2 * kSecond + kMs * 100 * i);
    p.timeNanos = kStart;
    p.durationNanos = 3 * kSecond;
    return p;
}

QString writeTimedProfile(const QTemporaryDir &dir)
{
    const QString path = dir.filePath(QStringLiteral("timed.pprof"));
    const auto written = engine::writePprofFile(timedProfile(), path.toStdString());
    return written.ok() ? path : QString();
}

// A session folder as a recording leaves it: two flush files whose samples carry their times (the early samples,
// then the late ones) and profile.pprof, the whole session without them.
QString writeTimedSessionFolder(const QTemporaryDir &dir)
{
    QString folder = dir.filePath(QStringLiteral("session"));
    if (!QDir().mkpath(folder))
        return {};
    const std::pair<const char *, engine::Profile> files[] = {
        {"flush-0001.pprof", timedProfile(true, false)},
        {"flush-0002.pprof", timedProfile(false, true)},
        {"profile.pprof", timedProfile(true, true, false)},
    };
    for (const auto &[name, profile] : files) {
        if (!engine::writePprofFile(profile, QDir(folder).filePath(QLatin1String(name)).toStdString()).ok())
            return {};
    }
    return folder;
}

} // namespace

class TestHeatmapView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The cell under each cell's centre is that cell; points outside the grid hit nothing; a scrolled grid shows
    // the columns under its window; a range over three columns is three rectangles (the first column's tail,
    // the whole middle, the last column's head). If this fails, the mouse picks other cells than it points at.
    void layoutHitTesting()
    {
        ui::HeatmapLayout layout;
        layout.setGrid(300, 50);
        layout.setSize(QSizeF(ui::HeatmapLayout::kLeftMargin + ui::HeatmapLayout::kRightMargin + 600,
                              ui::HeatmapLayout::kTopMargin + ui::HeatmapLayout::kBottomMargin + 250));
        QCOMPARE(layout.cellWidth(), ui::HeatmapLayout::kMinCellWidth); // 300 seconds do not fit in 600 px
        QCOMPARE(layout.cellHeight(), 5.0);
        QCOMPARE(layout.maxScroll(), 300 * 6.0 - 600);
        for (const HeatmapCell cell : {HeatmapCell{0, 0}, HeatmapCell{7, 13}, HeatmapCell{99, 49}}) {
            const auto hit = layout.cellAt(layout.cellRect(cell).center());
            QVERIFY(hit.has_value());
            QCOMPARE(*hit, cell);
        }
        QVERIFY(!layout.cellAt(QPointF(2, 100)).has_value()); // on the row labels
        QVERIFY(!layout.cellAt(QPointF(100, 2)).has_value()); // on the second labels
        QCOMPARE(layout.visibleColumns(), (std::pair<size_t, size_t>(0, 100)));

        layout.setScroll(6 * 150 + 3); // half a cell into column 150
        QCOMPARE(layout.visibleColumns(), (std::pair<size_t, size_t>(150, 251)));
        QCOMPARE(*layout.cellAt(QPointF(ui::HeatmapLayout::kLeftMargin + 1, 30)), (HeatmapCell{150, 2}));
        QCOMPARE(layout.nearestCell(QPointF(5000, 5000)), (HeatmapCell{250, 49}));
        layout.setScroll(1e9);
        QCOMPARE(layout.scroll(), layout.maxScroll());

        layout.setScroll(0);
        QCOMPARE(layout.rangeRects({3, 40}, {3, 45}).size(), size_t(1));
        QCOMPARE(layout.rangeRects({4, 0}, {3, 45}).size(), size_t(2));
        const auto three = layout.rangeRects({5, 10}, {2, 40});
        QCOMPARE(three.size(), size_t(3));
        QCOMPARE(three[0], layout.cellRect({2, 40}).united(layout.cellRect({2, 49})));
        QCOMPARE(three[1], layout.cellRect({3, 0}).united(layout.cellRect({4, 49})));
        QCOMPARE(three[2], layout.cellRect({5, 0}).united(layout.cellRect({5, 10})));
    }

    // The colour scale: nothing is white, the maximum deep red, and more is never lighter.
    void colourScale()
    {
        QCOMPARE(ui::heatColor(0, 10), qRgb(255, 255, 255));
        QCOMPARE(ui::heatColor(10, 10), qRgb(178, 24, 10));
        QVERIFY(ui::heatColor(1, 1000) != qRgb(255, 255, 255));
        int previous = 255 * 3;
        for (int v = 1; v <= 100; ++v) {
            const QRgb c = ui::heatColor(v, 100);
            const int lightness = qRed(c) + qGreen(c) + qBlue(c);
            QVERIFY2(lightness <= previous, qPrintable(QString::number(v)));
            previous = lightness;
        }
    }

    // Dragging from one cell back to an earlier one selects from the earlier cell's start to the later one's end;
    // Shift+drag then selects range B and reports both; the panel says both totals; Esc clears. If this fails, the
    // views show another span of time than the one highlighted, or the comparison gets the wrong ranges.
    void dragSelectsRangesAndShiftCompares()
    {
        ui::HeatmapPanel panel;
        panel.resize(900, 340);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const auto heatmap = evenHeatmap(6);
        panel.setHeatmap(heatmap);
        ui::HeatmapView &view = *panel.view();
        QSignalSpy selected(&panel, &ui::HeatmapPanel::rangeSelected);
        QSignalSpy compared(&panel, &ui::HeatmapPanel::rangesCompared);
        QSignalSpy cleared(&panel, &ui::HeatmapPanel::selectionCleared);

        drag(view, {2, 10}, {1, 45});
        QCOMPARE(selected.count(), 1);
        const TimeRange a = rangeArg(selected.takeFirst(), 0);
        QCOMPARE(a.startNs, kStart + kSecond + kMs * 45 * 20);
        QCOMPARE(a.endNs, kStart + 2 * kSecond + kMs * 11 * 20);
        QCOMPARE(heatmap->sumIn(a), int64_t(2 * 16));
        QVERIFY2(panel.summary().contains(QStringLiteral("32 samples")), qPrintable(panel.summary()));

        drag(view, {1, 0}, {1, 9}, Qt::ShiftModifier);
        QCOMPARE(selected.count(), 0);
        QCOMPARE(compared.count(), 1);
        const auto args = compared.takeFirst();
        QCOMPARE(args.at(0).value<TimeRange>(), a);
        const TimeRange b = args.at(1).value<TimeRange>();
        QCOMPARE(b.startNs, kStart + kSecond);
        QCOMPARE(b.endNs, kStart + kSecond + 200 * kMs);
        QVERIFY(view.selectionB().has_value());
        // B holds 20 samples plus the extra one in (1, 7): 21 against A's 32.
        QVERIFY2(panel.summary().contains(QStringLiteral("21 samples")) &&
                     panel.summary().contains(QStringLiteral("-34.4%")),
                 qPrintable(panel.summary()));

        // A plain drag starts over: a new range A, no B.
        drag(view, {4, 0}, {4, 49});
        QCOMPARE(rangeArg(selected.takeFirst(), 0), (TimeRange{kStart + 4 * kSecond, kStart + 5 * kSecond}));
        QVERIFY(!view.selectionB().has_value());

        view.setFocus();
        QTest::keyClick(&view, Qt::Key_Escape);
        QCOMPARE(cleared.count(), 1);
        QVERIFY(!view.selectionA().has_value());
    }

    // A tooltip names the cell's second, its milliseconds and its samples.
    void tooltipPerCell()
    {
        ui::HeatmapView view;
        view.resize(900, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setHeatmap(evenHeatmap(3));
        QCOMPARE(view.toolTipAt(centreOf(view, {1, 7})), QStringLiteral("1 s + 140–160 ms\n3 samples"));
        QCOMPARE(view.toolTipAt(QPointF(1, 1)), QString());
    }

    // The live view: each flush's update from a real live stage grows its heatmap by a second of samples, and a
    // range dragged on it becomes the stage's selected range. If this fails, the heatmap stands still while the
    // session runs, or its selection does not reach the views.
    void liveViewHeatmapGrowsWithFlushes()
    {
        engine::SessionConfig config;
        config.command = {"/bin/true"};
        auto *session = new engine::ProfilingSession(config);
        ui::LiveSessionView view(session);
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));

        std::mutex mutex;
        std::vector<std::shared_ptr<const engine::LiveUpdate>> published;
        engine::LiveStage stage({}, [&](std::shared_ptr<const engine::LiveUpdate> update) {
            std::lock_guard lock(mutex);
            published.push_back(std::move(update));
        });
        ui::HeatmapView *heatmap = view.heatmap()->view();
        for (uint32_t flush = 1; flush <= 3; ++flush) {
            stage.addFlush(test::syntheticFlush(flush, kStart + (flush - 1) * kSecond, 100, 7));
            stage.waitUntilIdle();
            std::shared_ptr<const engine::LiveUpdate> update;
            {
                std::lock_guard lock(mutex);
                update = published.back();
            }
            Q_EMIT session->liveUpdated(update); // as the session delivers its stage's updates
            QVERIFY(heatmap->heatmap());
            // The flush's last sample is taken at its end, the first instant of the next second.
            QCOMPARE(heatmap->heatmap()->columns(), size_t(flush + 1));
            QCOMPARE(heatmap->heatmap()->total(), int64_t(100 * flush));
            QCOMPARE(heatmap->heatmap()->column(flush - 1)[25], int64_t(2)); // 10 ms apart: two per cell
        }

        auto *tabs = view.findChild<QTabWidget *>(QStringLiteral("timelineTabs"));
        QVERIFY(tabs);
        tabs->setCurrentWidget(view.heatmap());
        QTRY_VERIFY(heatmap->isVisible());
        QSignalSpy compared(&view, &ui::LiveSessionView::rangesCompared);
        drag(*heatmap, {1, 0}, {1, 24});
        QCOMPARE(view.scope(), engine::LiveScope::SelectedRange);
        // The request the stage gets: the stage's ranges include their end, the heatmap's do not.
        QCOMPARE(view.request().scope, engine::LiveScope::SelectedRange);
        QCOMPARE(view.request().rangeStartNs, kStart + kSecond);
        QCOMPARE(view.request().rangeEndNs, kStart + kSecond + 500 * kMs - 1);
        drag(*heatmap, {2, 0}, {2, 24}, Qt::ShiftModifier);
        QCOMPARE(compared.count(), 1);
        QCOMPARE(compared.first().at(1).value<TimeRange>(),
                 (TimeRange{kStart + 2 * kSecond, kStart + 2 * kSecond + 500 * kMs}));
        // The live view compares range B (its scope) with range A (a pinned range baseline).
        QCOMPARE(view.request().scope, engine::LiveScope::SelectedRange);
        QCOMPARE(view.request().rangeStartNs, kStart + 2 * kSecond);
        QCOMPARE(view.request().rangeEndNs, kStart + 2 * kSecond + 500 * kMs - 1);
        QCOMPARE(view.request().compare.mode, engine::LiveCompareMode::Baseline);
        QCOMPARE(view.request().compare.baseline.kind, engine::LiveBaseline::Kind::TimeRange);
        QCOMPARE(view.request().compare.baseline.startNs, kStart + kSecond);
        QCOMPARE(view.request().compare.baseline.endNs, kStart + kSecond + 500 * kMs - 1);
        heatmap->setFocus();
        QTest::keyClick(heatmap, Qt::Key_Escape);
        QCOMPARE(view.scope(), engine::LiveScope::WholeSession);
        QCOMPARE(view.request().compare.mode, engine::LiveCompareMode::Off);
    }

    // An opened file whose samples carry timestamps shows its heatmap; dragging over the first second filters the
    // flame graph and tables to it (the "late" samples of second 2 drop out); Esc shows everything again.
    void openedProfileFilteredByRange()
    {
        QTemporaryDir dir;
        const QString path = writeTimedProfile(dir);
        QVERIFY(!path.isEmpty());
        ui::ProfileView view(path);
        ui::HeatmapView *heatmap = test::openWithHeatmap(view);
        QVERIFY2(heatmap, qPrintable(view.errorMessage()));
        QCOMPARE(heatmap->heatmap()->columns(), size_t(3));
        QCOMPARE(heatmap->heatmap()->total(), int64_t(15));
        QVERIFY2(heatmap->height() >= 150, qPrintable(QString::number(heatmap->height()))); // room to drag in
        ui::ProfileExplorer *explorer = view.explorer();
        QTRY_VERIFY(explorer->analysis() && !explorer->isAnalysing());
        const auto &layout = explorer->flameGraph()->layout();
        QVERIFY(layout.largestNodeNamed("late") != engine::kNoIndex);

        drag(*heatmap, {0, 0}, {0, 49});
        QTRY_VERIFY(!explorer->isAnalysing() && explorer->analysis()->filter.startNs == kStart);
        QCOMPARE(explorer->analysis()->keptSamples, size_t(10));
        QCOMPARE(explorer->flameGraph()->layout().largestNodeNamed("late"), engine::kNoIndex);
        QVERIFY(explorer->flameGraph()->layout().largestNodeNamed("early") != engine::kNoIndex);

        heatmap->setFocus();
        QTest::keyClick(heatmap, Qt::Key_Escape);
        QTRY_VERIFY(!explorer->isAnalysing() && explorer->analysis()->filter.isEmpty());
        QVERIFY(explorer->flameGraph()->layout().largestNodeNamed("late") != engine::kNoIndex);
    }

    // An opened session folder shows the heatmap from its flush files' timestamps (its profile.pprof keeps none),
    // with the same cells as the profile they add up to, and a range dragged on it filters the views. If this
    // fails, a finished session opened from disk has no heatmap although every sample's time is on disk.
    void sessionFolderShowsTheHeatmap()
    {
        QTemporaryDir dir;
        const QString folder = writeTimedSessionFolder(dir);
        QVERIFY(!folder.isEmpty());
        ui::ProfileView view(folder);
        ui::HeatmapView *heatmap = test::openWithHeatmap(view);
        QVERIFY2(heatmap, qPrintable(view.errorMessage()));
        QVERIFY2(view.notice().isEmpty(), qPrintable(view.notice()));
        QCOMPARE(heatmap->heatmap()->columns(), size_t(3));
        QCOMPARE(heatmap->heatmap()->total(), int64_t(15));
        QCOMPARE(heatmap->heatmap()->value(0, 0), int64_t(1));
        QCOMPARE(heatmap->heatmap()->value(2, 0), int64_t(1));

        ui::ProfileExplorer *explorer = view.explorer();
        QTRY_VERIFY(explorer->analysis() && !explorer->isAnalysing());
        drag(*heatmap, {2, 0}, {2, 49});
        QTRY_VERIFY(!explorer->isAnalysing() && explorer->analysis()->filter.startNs == kStart + 2 * kSecond);
        QCOMPARE(explorer->analysis()->keptSamples, size_t(5));
        QCOMPARE(explorer->flameGraph()->layout().largestNodeNamed("early"), engine::kNoIndex);
    }

    // On an opened file, range A then a Shift+drag for range B compares B with A in the tab: the differential
    // views show "early" (only in second 0) as gone and "late" (only in second 2) as new, with the ranges' own
    // totals, never as "the same file"; a new drag shows the profile's explorer again, filtered to it. If this
    // fails, a file's two ranges cannot be compared the way a live session's can.
    void openedProfileComparesTwoRanges()
    {
        QTemporaryDir dir;
        const QString path = writeTimedProfile(dir);
        QVERIFY(!path.isEmpty());
        ui::ProfileView view(path);
        ui::HeatmapView *heatmap = test::openWithHeatmap(view);
        QVERIFY2(heatmap, qPrintable(view.errorMessage()));
        QVERIFY(!view.isComparingRanges());

        drag(*heatmap, {0, 0}, {0, 49});
        drag(*heatmap, {2, 0}, {2, 49}, Qt::ShiftModifier);
        QVERIFY(view.isComparingRanges());
        ui::CompareExplorer *compare = view.rangeCompare();
        QVERIFY(compare && compare->isVisible());
        QVERIFY(!view.explorer()->isVisible());
        QTRY_VERIFY(compare->comparison() && !compare->isComparing());
        const engine::Comparison &c = *compare->comparison();
        QCOMPARE(c.baseTotal, int64_t(10));
        QCOMPARE(c.newTotal, int64_t(5));
        QVERIFY(!c.sameFile);
        const auto row = [&](const char *name) {
            for (const engine::DiffFunction &r : c.functions)
                if (c.frames->frame(r.frame).name == name)
                    return r;
            return engine::DiffFunction{0, -1, -1, -1, -1};
        };
        QCOMPARE(row("early").baseSelf, int64_t(10));
        QCOMPARE(row("early").newSelf, int64_t(0));
        QCOMPARE(row("late").baseSelf, int64_t(0));
        QCOMPARE(row("late").newSelf, int64_t(5));
        const auto &layout = compare->diffFlameGraph()->flameGraph()->layout();
        QVERIFY(layout.largestNodeNamed("late") != engine::kNoIndex);
        QVERIFY(compare->message().isEmpty() || !compare->message().contains(QStringLiteral("same file")));
        QVERIFY2(compare->findChild<QWidget *>(QStringLiteral("compareStatusLine")) != nullptr, "status line");

        // A new range A: the explorer again, filtered to it.
        drag(*heatmap, {2, 0}, {2, 49});
        QVERIFY(!view.isComparingRanges());
        QVERIFY(view.explorer()->isVisible());
        QTRY_VERIFY(!view.explorer()->isAnalysing() &&
                    view.explorer()->analysis()->filter.startNs == kStart + 2 * kSecond);
        QCOMPARE(view.explorer()->analysis()->keptSamples, size_t(5));
    }
};

QTEST_MAIN(TestHeatmapView)
#include "tst_heatmap_view.moc"
