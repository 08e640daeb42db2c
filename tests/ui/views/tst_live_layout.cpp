// A live session's layout, offscreen, fed by a real live stage on synthetic flushes (no target runs): the flame
// graph's share of the tab, the timelines' charts kept apart in their short room, the timelines collapsed to a
// strip and back, the live splitter remembered for the next session, and a flush's timelines shown before its
// analysis.

#include "tests/engine/live/synthetic_flush.h"
#include "tests/ui/live_test_support.h"
#include "tests/ui/test_settings.h"

#include "engine/session/profiling_session.h"
#include "engine/stage/live_stage.h"
#include "ui/models/top_functions_model.h"
#include "ui/timeline/activity_strip.h"
#include "ui/timeline/timeline_chart_view.h"
#include "ui/timeline/timeline_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/live/live_session_view.h"

#include <QApplication>
#include <QMouseEvent>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QSplitterHandle>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

#include <memory>
#include <mutex>

using namespace emberline;
using namespace emberline::ui;
using namespace emberline::ui::test;

namespace {

constexpr int64_t kStart = 1'700'000'000'000'000'000;
constexpr int64_t kSecond = 1'000'000'000;

// A live view of a session that never starts, shown at `size`, its updates coming from a live stage.
struct LiveTab {
    std::unique_ptr<LiveSessionView> view;
    std::unique_ptr<engine::LiveStage> stage;
    std::mutex mutex;
    std::shared_ptr<const engine::LiveUpdate> latest;
    std::vector<std::shared_ptr<const engine::LiveUpdate>> all;

    explicit LiveTab(QSize size)
    {
        engine::SessionConfig config;
        config.command = {"/bin/true"};
        view = std::make_unique<LiveSessionView>(new engine::ProfilingSession(config));
        view->resize(size);
        view->show();
        stage = std::make_unique<engine::LiveStage>(engine::LiveStage::Options{},
                                                    [this](std::shared_ptr<const engine::LiveUpdate> update) {
                                                        std::lock_guard lock(mutex);
                                                        all.push_back(update);
                                                        latest = std::move(update);
                                                    });
    }

    // Four flushes, one per thread, of shallow stacks (two frames): the flame graph's rows alone would ask for
    // little room.
    bool feed()
    {
        for (uint32_t flush = 1; flush <= 4; ++flush) {
            stage->addFlush(emberline::test::syntheticFlush(flush, kStart + (flush - 1) * kSecond, 100, 6 + flush));
            stage->waitUntilIdle();
            std::shared_ptr<const engine::LiveUpdate> update;
            {
                std::lock_guard lock(mutex);
                update = latest;
            }
            Q_EMIT view->session()->liveUpdated(update); // as the session delivers its stage's updates
        }
        return waitSettled(view.get()) &&
               QTest::qWaitFor([&] { return view->explorer()->flamePaneHeight() >= view->height() / 2 - 2; });
    }

    QSplitter *splitter() const { return view->findChild<QSplitter *>(QStringLiteral("liveSplitter")); }
    QTabWidget *timelineTabs() const { return view->findChild<QTabWidget *>(QStringLiteral("timelineTabs")); }
};

// Drags a splitter's first handle by `delta` pixels down.
void dragHandle(QSplitter *splitter, int delta)
{
    QSplitterHandle *handle = splitter->handle(1);
    const QPoint from = handle->rect().center();
    const QPoint to = from + QPoint(0, delta);
    QTest::mousePress(handle, Qt::LeftButton, {}, from);
    QMouseEvent move(QEvent::MouseMove, QPointF(to), handle->mapToGlobal(QPointF(to)), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    QApplication::sendEvent(handle, &move);
    QTest::mouseRelease(handle, Qt::LeftButton, {}, to);
}

// The CPU chart, the activity strip and (when shown) the flush chart are stacked without overlapping, the CPU
// chart at least its minimum height.
bool chartsApart(TimelineView *timeline, QString &why)
{
    const QRect cpu = timeline->cpuChart()->geometry();
    const QRect strip = timeline->activityStrip()->geometry();
    const QRect flush = timeline->flushChart()->geometry();
    why = QStringLiteral("timeline %1 px: cpu %2–%3, strip %4–%5, flush %6 %7–%8")
              .arg(timeline->height())
              .arg(cpu.top())
              .arg(cpu.bottom())
              .arg(strip.top())
              .arg(strip.bottom())
              .arg(timeline->flushChart()->isVisible() ? QStringLiteral("shown") : QStringLiteral("hidden"))
              .arg(flush.top())
              .arg(flush.bottom());
    if (cpu.height() < timeline->cpuChart()->minimumHeight() || cpu.bottom() >= strip.top())
        return false;
    if (timeline->flushChart()->isVisible() &&
        (strip.bottom() >= flush.top() || flush.height() < timeline->flushChart()->minimumHeight()))
        return false;
    return true;
}

} // namespace

class TestLiveLayout : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_settings;

private Q_SLOTS:
    void init()
    {
        m_settings = std::make_unique<QTemporaryDir>();
        isolateSettings(*m_settings, "tst_live_layout");
    }

    // If this fails, a live session's flame graph is squeezed again: it got about 130 pixels under the timelines,
    // the least room of any part of the window, or the timelines' charts overlap in the room they have left.
    void flameGraphTakesHalfTheTab_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1400×900") << QSize(1400, 900);
        QTest::newRow("1600×1000") << QSize(1600, 1000);
    }
    void flameGraphTakesHalfTheTab()
    {
        QFETCH(QSize, size);
        LiveTab tab(size);
        QVERIFY(QTest::qWaitForWindowExposed(tab.view.get()));
        QVERIFY(tab.feed());
        ProfileExplorer *explorer = tab.view->explorer();
        QVERIFY2(explorer->flamePaneHeight() >= tab.view->height() / 2 - 2,
                 qPrintable(QStringLiteral("flame graph %1 px of a %2 px tab")
                                .arg(explorer->flamePaneHeight())
                                .arg(tab.view->height())));
        // Shallow as it is, its rows are all in view: the pane is not a scrolled window onto them.
        QVERIFY(explorer->flameGraph()->height() >= explorer->flameGraph()->contentHeightHint());
        // The timelines keep room to be read beside it, their charts apart.
        QString why;
        QTRY_VERIFY2(chartsApart(tab.view->timeline(), why), qPrintable(why));
        // Given more room, the timelines show the flush chart again, still apart.
        if (size.height() >= 900) {
            dragHandle(tab.splitter(), 250);
            QTRY_VERIFY(tab.view->timeline()->flushChart()->isVisible());
            QTRY_VERIFY2(chartsApart(tab.view->timeline(), why), qPrintable(why));
        }
    }

    // If this fails, the timelines cannot be shrunk to a strip to give the flame graph their room, or do not
    // come back as they were.
    // A flush's timelines are shown from the first part of its update, before its call tree is derived; the second
    // part brings the analysis alone, and the flush counts as shown once both are.
    void timelinesShownBeforeTheAnalysis()
    {
        LiveTab tab(QSize(1200, 800));
        QSignalSpy timelineShown(tab.view->timeline(), &TimelineView::dataShown);
        QSignalSpy viewsUpdated(tab.view.get(), &LiveSessionView::viewsUpdated);
        tab.stage->addFlush(emberline::test::syntheticFlush(1, kStart, 100, 7));
        tab.stage->waitUntilIdle();
        std::vector<std::shared_ptr<const engine::LiveUpdate>> updates;
        {
            std::lock_guard lock(tab.mutex);
            updates = tab.all;
        }
        QCOMPARE(updates.size(), size_t(2));
        QVERIFY(updates[0]->analysisFollows);
        Q_EMIT tab.view->session()->liveUpdated(updates[0]);
        QTRY_COMPARE(timelineShown.count(), 1);
        QVERIFY(!tab.view->explorer()); // no analysis yet: the first flush's explorer is not shown
        QCOMPARE(viewsUpdated.count(), 0);
        Q_EMIT tab.view->session()->liveUpdated(updates[1]);
        QTRY_COMPARE(viewsUpdated.count(), 1);
        QCOMPARE(viewsUpdated.at(0).at(0).toUInt(), 1u);
        QVERIFY(tab.view->explorer() && tab.view->explorer()->analysis());
        QCOMPARE(tab.view->explorer()->analysis()->loaded, updates[1]->loaded);
        QTest::qWait(50);
        QCOMPARE(timelineShown.count(), 1); // the timelines were not laid out again
    }

    void collapsingTheTimelines()
    {
        LiveTab tab(QSize(1400, 900));
        QVERIFY(QTest::qWaitForWindowExposed(tab.view.get()));
        QVERIFY(tab.feed());
        const QList<int> expanded = tab.splitter()->sizes();
        const int flameBefore = tab.view->explorer()->flamePaneHeight();
        auto *button = tab.view->findChild<QPushButton *>(QStringLiteral("collapseTimelinesButton"));
        QVERIFY(button);
        QTest::mouseClick(button, Qt::LeftButton);
        QTRY_VERIFY(tab.view->timelinesCollapsed());
        const int strip = tab.timelineTabs()->tabBar()->sizeHint().height();
        QTRY_COMPARE(tab.timelineTabs()->height(), strip);
        QTRY_VERIFY(tab.splitter()->sizes().value(1) >= expanded.value(1) + expanded.value(0) - strip - 2);
        // The room goes to the explorer; the flame graph keeps at least what it had.
        QTRY_VERIFY(tab.view->explorer()->flamePaneHeight() >= flameBefore);
        // A click on a tab of the strip opens the timelines on it, as they were.
        QTest::mouseClick(tab.timelineTabs()->tabBar(), Qt::LeftButton, {},
                          tab.timelineTabs()->tabBar()->tabRect(1).center());
        QVERIFY(!tab.view->timelinesCollapsed());
        QCOMPARE(tab.timelineTabs()->currentIndex(), 1);
        QTRY_COMPARE(tab.splitter()->sizes(), expanded);
    }

    // If this fails, a short window (1600×1000 at 2× scale) opens a live session with the timelines taking the
    // room the flame graph and the tables need, or makes that collapse the user's choice for larger windows.
    void shortTabStartsCollapsed()
    {
        {
            LiveTab tab(QSize(800, 500));
            QVERIFY(QTest::qWaitForWindowExposed(tab.view.get()));
            QTRY_VERIFY(tab.view->timelinesCollapsed());
            QTRY_COMPARE(tab.timelineTabs()->height(), tab.timelineTabs()->tabBar()->sizeHint().height());
            tab.feed(); // half of so short a tab is more than the explorer's room: the flame graph takes its share
            QTRY_VERIFY(!tab.view->isUpdating());
            const int flame = tab.view->explorer()->flamePaneHeight();
            auto *tables = tab.view->explorer()->findChild<QSplitter *>(QStringLiteral("tablesSplitter"));
            QVERIFY2(flame >= tables->height(),
                     qPrintable(QStringLiteral("flame graph %1 px, tables %2 px").arg(flame).arg(tables->height())));
        }
        QVERIFY(!QSettings().value(QStringLiteral("live/timelinesCollapsed"), false).toBool());
        LiveTab tall(QSize(1400, 900));
        QVERIFY(QTest::qWaitForWindowExposed(tall.view.get()));
        QTest::qWait(50);
        QVERIFY(!tall.view->timelinesCollapsed());
        QVERIFY(tall.feed());
        auto *table = tall.view->explorer()->findChild<QTreeView *>(QStringLiteral("topFunctionsTable"));
        QTRY_VERIFY(!table->isColumnHidden(TopFunctionsModel::SelfColumn));
    }

    // If this fails, the user's split between timelines and flame graph, or the collapsed timelines, are lost at
    // the next session.
    void liveSplitterRemembered()
    {
        QList<int> dragged;
        {
            LiveTab first(QSize(1400, 900));
            QVERIFY(QTest::qWaitForWindowExposed(first.view.get()));
            QVERIFY(first.feed());
            const QList<int> before = first.splitter()->sizes();
            dragHandle(first.splitter(), 120);
            dragged = first.splitter()->sizes();
            QVERIFY(dragged.value(0) >= before.value(0) + 100);
        }
        {
            LiveTab second(QSize(1400, 900));
            QVERIFY(QTest::qWaitForWindowExposed(second.view.get()));
            QTRY_COMPARE(second.splitter()->sizes(), dragged);
            second.view->setTimelinesCollapsed(true);
        }
        LiveTab third(QSize(1400, 900));
        QVERIFY(QTest::qWaitForWindowExposed(third.view.get()));
        QTRY_VERIFY(third.view->timelinesCollapsed());
        QTRY_COMPARE(third.timelineTabs()->height(), third.timelineTabs()->tabBar()->sizeHint().height());
        // Expanded, it comes back to the split the user chose.
        third.view->setTimelinesCollapsed(false);
        QTRY_COMPARE(third.splitter()->sizes(), dragged);
    }
};

QTEST_MAIN(TestLiveLayout)
#include "tst_live_layout.moc"
