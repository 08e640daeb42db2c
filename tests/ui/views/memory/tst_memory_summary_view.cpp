// The memory summary panel, offscreen: a Go heap profile opened from disk (its leaks and allocations, no peak), a
// live session's hand-made flushes (the peak flush's contributors), the Memory tab a memory profile gets in the
// explorer and a CPU profile does not, a memory recording without CPU samples opened on its memory, and the summary
// in a live session's Memory tab.

#include "tests/engine/live/synthetic_memory_flush.h"
#include "tests/ui/test_settings.h"

#include "engine/live/live_profile.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/pprof_writer.h"
#include "engine/session/profiling_session.h"
#include "engine/stage/live_stage.h"
#include "ui/common/sample_types.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/live/live_session_view.h"
#include "ui/views/memory/functions_over_time.h"
#include "ui/views/memory/memory_chart.h"
#include "ui/views/memory/memory_summary_view.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <mutex>

using namespace emberline;
using namespace emberline::ui;
using emberline::test::syntheticMemoryFlush;

namespace memory_summary_view_test {

std::shared_ptr<const engine::LoadedProfile> openFile(const char *name)
{
    auto read = engine::readPprofFile(std::string(EMBERLINE_TEST_DATA "/pprof/") + name);
    return read ? engine::makeLoadedProfile(std::move(read).value(), QString::fromLatin1(name)) : nullptr;
}

// Flush 1: a 200 B, b 100 B in use. Flush 2 (the peak): a 30 B, c 900 B. Flush 3: a 30 B, d 100 B.
std::vector<std::shared_ptr<const engine::Flush>> flushes()
{
    return {syntheticMemoryFlush(1, 1'000'000'000, {{"a", 2, 200, 2, 200}, {"b", 1, 100, 1, 100}}),
            syntheticMemoryFlush(2, 2'000'000'000, {{"a", 0, 0, 1, 30}, {"c", 9, 900, 9, 900}}),
            syntheticMemoryFlush(3, 3'000'000'000, {{"a", 0, 0, 1, 30}, {"d", 1, 100, 1, 100}})};
}

// The views' scope over the whole session, as a live update holds it.
std::shared_ptr<const engine::LoadedProfile> wholeSession(const std::shared_ptr<const engine::LiveSnapshot> &snapshot)
{
    auto loaded = std::make_shared<engine::LoadedProfile>();
    loaded->profile = snapshot->profile;
    loaded->frames = std::make_shared<const engine::FrameTable>(*snapshot->profile);
    loaded->live = snapshot;
    loaded->totals = snapshot->totals;
    loaded->aggregated = true;
    return loaded;
}

// The live stage's last update after `flushes` under `request` (a whole session, a range...).
std::shared_ptr<const engine::LiveUpdate> stageUpdate(const std::vector<std::shared_ptr<const engine::Flush>> &flushes,
                                                      const engine::LiveViewRequest &request = {})
{
    std::mutex mutex;
    std::shared_ptr<const engine::LiveUpdate> last;
    engine::LiveStage stage({}, [&](std::shared_ptr<const engine::LiveUpdate> u) {
        std::lock_guard lock(mutex);
        last = std::move(u);
    });
    for (const auto &flush : flushes)
        stage.addFlush(flush);
    stage.setView(request);
    stage.waitUntilIdle();
    std::lock_guard lock(mutex);
    return last;
}

// The three flushes, then a fourth (4–5 s) in which e was allocated and everything was freed.
std::vector<std::shared_ptr<const engine::Flush>> fourFlushes()
{
    auto out = flushes();
    out.push_back(syntheticMemoryFlush(4, 4'000'000'000, {{"e", 5, 50, 0, 0}}));
    return out;
}

// The three flushes, then the session's last (4–5 s), after the program ended: it allocated e, and its in-use values
// are the leaks, what the program still held when it ended: a's 30 B on thread 7 and d's 100 B on thread 8 (the
// thread that allocated d: hidden, the leaks are a's alone).
std::vector<std::shared_ptr<const engine::Flush>> endedSession()
{
    auto out = flushes();
    auto last = std::make_shared<engine::Flush>(
        *syntheticMemoryFlush(4, 4'000'000'000, {{"e", 5, 50, 0, 0}, {"a", 0, 0, 1, 30}, {"d", 0, 0, 1, 100, 8}}));
    last->final = true;
    out.push_back(std::move(last));
    return out;
}

QStringList column(QTreeWidget *list, int c)
{
    QStringList out;
    for (int i = 0; i < list->topLevelItemCount(); ++i)
        out << list->topLevelItem(i)->text(c);
    return out;
}

} // namespace memory_summary_view_test

using namespace memory_summary_view_test;

class TestMemorySummaryView : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        emberline::ui::test::isolateSettings(m_dir, "tst_memory_summary_view");
        engine::registerSessionMetaTypes();
    }

    // If this fails, an opened heap profile's summary shows other functions or values than the engine computed,
    // or offers a peak that a single snapshot cannot know.
    void openedHeapProfile()
    {
        const auto loaded = openFile("go-heap.pprof");
        QVERIFY(loaded);
        MemorySummaryView view;
        view.show();
        QSignalSpy shown(&view, &MemorySummaryView::summaryShown);
        view.showProfile(loaded);
        QVERIFY(shown.wait(10000));
        const engine::HeapSummary &s = *view.summary();
        QVERIFY(!s.leaks.empty() && !s.allocations.empty());
        QTreeWidget *leaks = view.list(MemorySummaryView::Leaks);
        QCOMPARE(leaks->topLevelItemCount(), static_cast<int>(s.leaks.size()));
        QCOMPARE(leaks->topLevelItem(0)->text(0), QString::fromStdString(s.leaks.front().function));
        QVERIFY(leaks->topLevelItem(0)->text(1).endsWith(QStringLiteral("MiB")));
        QVERIFY(leaks->topLevelItem(0)->toolTip(0).contains(QString::fromStdString(s.leaks.front().function)));
        QCOMPARE(view.list(MemorySummaryView::Allocations)->topLevelItem(0)->text(0),
                 QString::fromStdString(s.allocations.front().function));
        auto *tabs = view.findChild<QTabWidget *>(QStringLiteral("memorySummaryTabs"));
        QVERIFY(!tabs->isTabEnabled(MemorySummaryView::Peak));
        QVERIFY(!tabs->isTabEnabled(MemorySummaryView::kOverTimeTab)); // one moment: nothing over time
        QVERIFY(view.headline().startsWith(QStringLiteral("Allocated 90.9 MiB")));
        // Sizes: Go's `bytes` labels in power-of-two classes, smallest first; 33 to 64 bytes is the busiest class
        // (252,770 of 479,064 allocations, as `go tool pprof -tags` counts 48-byte blocks).
        QVERIFY(tabs->isTabEnabled(MemorySummaryView::Sizes));
        QTreeWidget *sizes = view.list(MemorySummaryView::Sizes);
        QCOMPARE(sizes->topLevelItemCount(), 15);
        QCOMPARE(sizes->topLevelItem(0)->text(0), QStringLiteral("\u2264 16 B"));
        QCOMPARE(sizes->topLevelItem(2)->text(0), QStringLiteral("\u2264 64 B"));
        QCOMPARE(sizes->topLevelItem(2)->text(1), QStringLiteral("252770"));
        QCOMPARE(sizes->topLevelItem(2)->text(2), QStringLiteral("52.8%"));
        QCOMPARE(sizes->topLevelItem(2)->toolTip(0), QStringLiteral("Blocks of 33 to 64 bytes"));
        QCOMPARE(sizes->topLevelItem(14)->text(0), QStringLiteral("\u2264 512 KiB"));
        QVERIFY(sizes->isColumnHidden(5)); // Go's profiles do not tell lifetimes
    }

    // If this fails, a live session's Sizes list does not follow the scope as the other lists do: the whole
    // session sums every flush's allocations by size class; a range, the flushes that end in it.
    void liveSizesFollowTheScope()
    {
        const std::vector<std::shared_ptr<const engine::Flush>> sized = {
            syntheticMemoryFlush(1, 1'000'000'000, {{"a", 4, 96, 0, 0, 7, 24}, {"b", 1, 1000, 1, 1000, 7, 1000}}),
            syntheticMemoryFlush(2, 2'000'000'000, {{"a", 2, 48, 0, 0, 7, 24}, {"c", 3, 30, 0, 0, 7, 10}})};
        const auto sizesOf = [](const std::shared_ptr<const engine::LiveUpdate> &update) {
            MemorySummaryView view;
            QSignalSpy shown(&view, &MemorySummaryView::summaryShown);
            view.showLive(update->loaded, update->selection);
            if (!shown.wait(10000))
                return QStringList{QStringLiteral("no summary")};
            QStringList out;
            QTreeWidget *list = view.list(MemorySummaryView::Sizes);
            for (int i = 0; i < list->topLevelItemCount(); ++i)
                out << list->topLevelItem(i)->text(0) + QLatin1Char(' ') + list->topLevelItem(i)->text(1) +
                           QLatin1Char(' ') + list->topLevelItem(i)->text(3);
            return out;
        };
        QCOMPARE(sizesOf(stageUpdate(sized)),
                 (QStringList{QStringLiteral("\u2264 16 B 3 30 B"), QStringLiteral("\u2264 32 B 6 144 B"),
                              QStringLiteral("\u2264 1 KiB 1 1000 B")}));
        engine::LiveViewRequest request;
        request.scope = engine::LiveScope::SelectedRange;
        request.rangeStartNs = 2'500'000'000; // flush 2 alone ends in it (at 3 s)
        request.rangeEndNs = 3'000'000'000;
        QCOMPARE(sizesOf(stageUpdate(sized, request)),
                 (QStringList{QStringLiteral("\u2264 16 B 3 30 B"), QStringLiteral("\u2264 32 B 2 48 B")}));
    }

    // A live session's peak is its second flush: c held 900 B then, and the peak list says so while the leaks are
    // the newest flush's. If this fails, the panel shows the end as the peak, or sums the flushes.
    void livePeakContributors()
    {
        engine::LiveProfile live;
        for (const auto &flush : flushes())
            QVERIFY(live.add(flush));
        const auto snapshot = live.snapshot();
        MemorySummaryView view;
        QSignalSpy shown(&view, &MemorySummaryView::summaryShown);
        view.showLive(wholeSession(snapshot), {});
        QVERIFY(shown.wait(10000));
        QTreeWidget *peak = view.list(MemorySummaryView::Peak);
        QCOMPARE(column(peak, 0), (QStringList{QStringLiteral("c"), QStringLiteral("a")}));
        QCOMPARE(peak->topLevelItem(0)->text(1), QStringLiteral("900 B"));
        QCOMPARE(column(view.list(MemorySummaryView::Leaks), 0),
                 (QStringList{QStringLiteral("d"), QStringLiteral("a")}));
        // c allocated 9 and keeps none; a and b each one (in frame order when equal).
        QCOMPARE(column(view.list(MemorySummaryView::ShortLived), 0),
                 (QStringList{QStringLiteral("c"), QStringLiteral("a"), QStringLiteral("b")}));
        QVERIFY(peak->topLevelItem(0)->toolTip(0).contains(QStringLiteral("c\n  ← main")));
        // These flushes tell no block size: no Sizes list.
        auto *tabs = view.findChild<QTabWidget *>(QStringLiteral("memorySummaryTabs"));
        QVERIFY(!tabs->isTabEnabled(MemorySummaryView::Sizes));
        // Over time: the largest holders at the end (d, then a), what each held at each flush's end.
        QVERIFY(tabs->isTabEnabled(MemorySummaryView::kOverTimeTab));
        QCOMPARE(view.overTime()->functions(), (QStringList{QStringLiteral("d"), QStringLiteral("a")}));
        const QList<QAbstractSeries *> lines = view.overTime()->chartView()->chart()->series();
        const auto *d = qobject_cast<QLineSeries *>(lines.at(0));
        const auto *a = qobject_cast<QLineSeries *>(lines.at(1));
        QVERIFY(d && a);
        QCOMPARE(d->points(), (QList<QPointF>{{1, 0}, {2, 0}, {3, 100}}));
        QCOMPARE(a->points(), (QList<QPointF>{{1, 200}, {2, 30}, {3, 30}}));
        QVERIFY2(view.headline().contains(QStringLiteral("Largest at a flush's end: 930 B, flush 2")),
                 qPrintable(view.headline()));
    }

    // If this fails, the summary ignores the selected range (it shows the whole session's peak and allocations),
    // as the flame graph's memory types do not.
    void liveRangeSelected()
    {
        engine::LiveViewRequest request;
        request.scope = engine::LiveScope::SelectedRange;
        request.rangeStartNs = 3'500'000'000; // flush 3 (ends at 4 s) and 4 (ends at 5 s) end in it
        request.rangeEndNs = 5'000'000'000;
        const auto update = stageUpdate(fourFlushes(), request);
        QVERIFY(update && update->loaded);
        MemorySummaryView view;
        QSignalSpy shown(&view, &MemorySummaryView::summaryShown);
        view.showLive(update->loaded, update->selection);
        QVERIFY(shown.wait(10000));
        // Flush 3, the range's fullest (a 30 B, d 100 B), not the session's (flush 2, 930 B); what flushes 3 and 4
        // allocated.
        QCOMPARE(view.summary()->fullestFlush->flushSequence, 3u);
        QCOMPARE(column(view.list(MemorySummaryView::Peak), 0),
                 (QStringList{QStringLiteral("d"), QStringLiteral("a")}));
        QCOMPARE(column(view.list(MemorySummaryView::Allocations), 0),
                 (QStringList{QStringLiteral("e"), QStringLiteral("d")}));
        QVERIFY2(view.headline().startsWith(QStringLiteral("Between 2.5 s and 4.0 s: allocated 150 B in 6 allocations; "
                                                           "0 B in 0 objects in use at the end of flush 4.")),
                 qPrintable(view.headline()));
    }

    // The last flush of a session holds the leaks as its in-use values, in the live update like every other sample:
    // no file is read. If this fails, the ended session's summary says 0 B in use while the status bar says what
    // was still live at the end, a range before the end takes the leaks for its own, or a hidden thread's leaks
    // are shown.
    void endedSessionShowsItsLeaks()
    {
        const auto update = stageUpdate(endedSession());
        MemorySummaryView view;
        QSignalSpy shown(&view, &MemorySummaryView::summaryShown);
        view.showLive(update->loaded, update->selection);
        QVERIFY(shown.wait(10000));
        QVERIFY2(view.headline().contains(
                     QStringLiteral("130 B in 2 objects still in use when the program ended (its leaks)")),
                 qPrintable(view.headline()));
        QCOMPARE(column(view.list(MemorySummaryView::Leaks), 0),
                 (QStringList{QStringLiteral("d"), QStringLiteral("a")}));
        QCOMPARE(view.list(MemorySummaryView::Leaks)->topLevelItem(0)->text(1), QStringLiteral("100 B"));
        QCOMPARE(view.summary()->fullestFlush->flushSequence, 2u);

        // The last flush alone: the leaks too. A range that ends before: its own last flush.
        engine::LiveViewRequest last;
        last.scope = engine::LiveScope::LastFlush;
        const auto lastFlush = stageUpdate(endedSession(), last);
        view.showLive(lastFlush->loaded, lastFlush->selection);
        QVERIFY(shown.wait(10000));
        QVERIFY2(view.headline().contains(QStringLiteral("130 B in 2 objects still in use when the program ended")),
                 qPrintable(view.headline()));
        engine::LiveViewRequest early;
        early.scope = engine::LiveScope::SelectedRange;
        early.rangeStartNs = 1'000'000'000;
        early.rangeEndNs = 3'200'000'000;
        const auto earlyRange = stageUpdate(endedSession(), early);
        view.showLive(earlyRange->loaded, earlyRange->selection);
        QVERIFY(shown.wait(10000));
        QVERIFY2(view.headline().contains(QStringLiteral("930 B in 10 objects in use at the end of flush 2")),
                 qPrintable(view.headline()));

        // Thread 8 hidden (the second thread the session saw): its leak is not shown, thread 7's is.
        engine::LiveViewRequest hidden;
        hidden.hiddenThreads = {1};
        const auto without8 = stageUpdate(endedSession(), hidden);
        QCOMPARE(without8->snapshot->threads.at(1).tid, int64_t(8));
        view.showLive(without8->loaded, without8->selection);
        QVERIFY(shown.wait(10000));
        QVERIFY2(view.headline().contains(
                     QStringLiteral("30 B in 1 objects still in use when the program ended (its leaks)")),
                 qPrintable(view.headline()));
        QCOMPARE(column(view.list(MemorySummaryView::Leaks), 0), (QStringList{QStringLiteral("a")}));
    }

    // The explorer of an opened memory profile has a Memory tab with the summary; a CPU profile's has none.
    void explorerHasAMemoryTabForMemoryProfiles()
    {
        ProfileExplorer heap(openFile("go-heap.pprof"));
        auto *details = heap.findChild<QTabWidget *>(QStringLiteral("detailTabs"));
        QVERIFY(heap.memorySummary());
        QCOMPARE(details->tabText(details->indexOf(heap.memorySummary())), QStringLiteral("Memory"));
        QTRY_VERIFY(heap.memorySummary()->summary());
        ProfileExplorer cpu(openFile("go-cpu.pprof"));
        QVERIFY(!cpu.memorySummary());
    }

    // A memory recording without a CPU sample (a program too short for one) opens on the in-use bytes, not on an
    // empty CPU view, default type or not; with CPU samples it opens on CPU time.
    void memoryOnlyProfileOpensOnMemory()
    {
        const auto memoryOnly = syntheticMemoryFlush(1, 1'000'000'000, {{"a", 2, 200, 2, 200}});
        engine::Profile withDefault = *memoryOnly->profile;
        withDefault.defaultSampleType = withDefault.intern("cpu-time");
        const int inuse = withDefault.sampleTypeIndex("inuse-space");
        QCOMPARE(initialSampleType(*memoryOnly->profile), inuse);
        QCOMPARE(initialSampleType(withDefault), inuse);
        const auto withCpu = syntheticMemoryFlush(1, 1'000'000'000, {{"a", 2, 200, 2, 200}}, 3);
        QCOMPARE(initialSampleType(*withCpu->profile), withCpu->profile->sampleTypeIndex("cpu-time"));
        // Freed all of it: nothing in use, but allocations made.
        const auto freed = syntheticMemoryFlush(1, 1'000'000'000, {{"a", 2, 200, 0, 0}});
        QCOMPARE(initialSampleType(*freed->profile), freed->profile->sampleTypeIndex("alloc-space"));

        ProfileExplorer explorer(engine::makeLoadedProfile(std::move(withDefault), QStringLiteral("memory.pprof")));
        auto *combo = explorer.findChild<QComboBox *>(QStringLiteral("sampleTypeCombo"));
        QVERIFY(combo);
        QCOMPARE(combo->currentIndex(), inuse);
    }

    // A live session that profiles memory sums it up beside its chart, from the updates the stage publishes.
    void liveSessionMemoryTab()
    {
        engine::SessionConfig config;
        config.command = {"/bin/true"};
        config.memory = true;
        auto *session = new engine::ProfilingSession(config);
        LiveSessionView view(session);
        QVERIFY(view.memorySummary());
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
        QSignalSpy shown(view.memorySummary(), &MemorySummaryView::summaryShown);
        Q_EMIT session->liveUpdated(last);
        QVERIFY(shown.wait(10000));
        QCOMPARE(view.memorySummary()->summary()->fullestFlush->flushSequence, 2u);
        QCOMPARE(view.memorySummary()->list(MemorySummaryView::Peak)->topLevelItem(0)->text(0), QStringLiteral("c"));
    }

    // The end of a live session that profiled memory: the summary takes the leaks from the last update (its last
    // flush's in-use values), the chart marks them at the end; the end summary adds nothing to the tab. If this fails,
    // the window's last word is 0 B in use while the status bar says what was still live.
    void liveSessionEndShowsTheLeaks()
    {
        engine::SessionConfig config;
        config.command = {"/bin/true"};
        config.memory = true;
        auto *session = new engine::ProfilingSession(config);
        LiveSessionView view(session);
        QSignalSpy shown(view.memorySummary(), &MemorySummaryView::summaryShown);
        Q_EMIT session->liveUpdated(stageUpdate(endedSession()));
        QVERIFY(shown.wait(10000));
        QVERIFY2(view.memorySummary()->headline().contains(QStringLiteral("130 B in 2 objects still in use when")),
                 qPrintable(view.memorySummary()->headline()));
        QScatterSeries *leaked = view.memoryChart()->leakedSeries();
        QVERIFY(leaked && leaked->count() == 1);
        QCOMPARE(leaked->at(0).y(), 130.0); // bytes, the axis' unit for a peak under 1 KiB
    }
};

QTEST_MAIN(TestMemorySummaryView)
#include "tst_memory_summary_view.moc"
