// The memory summary panel, offscreen: a Go heap profile opened from disk (its leaks and allocations, no peak), a
// live session's hand-made flushes (the peak flush's contributors), the Memory tab a memory profile gets in the
// explorer and a CPU profile does not, and the summary in a live session's Memory tab.

#include "tests/engine/live/synthetic_memory_flush.h"
#include "tests/ui/test_settings.h"

#include "engine/live/live_profile.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/session/profiling_session.h"
#include "engine/stage/live_stage.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/live/live_session_view.h"
#include "ui/views/memory/memory_summary_view.h"

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
        QVERIFY(view.headline().startsWith(QStringLiteral("Allocated 90.9 MiB")));
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
        view.showLive(snapshot, std::make_shared<const engine::FrameTable>(*snapshot->profile));
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
        QVERIFY2(view.headline().contains(QStringLiteral("Peak: 930 B at the end of flush 2")),
                 qPrintable(view.headline()));
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
        QCOMPARE(view.memorySummary()->summary()->peakAt->flushSequence, 2u);
        QCOMPARE(view.memorySummary()->list(MemorySummaryView::Peak)->topLevelItem(0)->text(0), QStringLiteral("c"));
    }
};

QTEST_MAIN(TestMemorySummaryView)
#include "tst_memory_summary_view.moc"
