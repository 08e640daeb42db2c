// Live profiling as a user drives it, offscreen: the Profile Process dialog launches a real target (by
// objectName), flushes arrive every second, the flame graph and tables refresh in place without losing zoom or
// search, a time range dragged across the timeline filters them, an attach shows a running program's threads,
// and a crash ends the session with a message while the views keep their data.

#include "tests/engine/session/perf_guard.h"
#include "tests/ui/live_test_support.h"
#include "tests/ui/test_settings.h"

#include "engine/pprof/pprof_reader.h"
#include "ui/dialogs/attach_page.h"
#include "ui/dialogs/profile_process_dialog.h"
#include "ui/models/unwind_health_model.h"
#include "ui/timeline/live_thread_model.h"
#include "ui/timeline/time_axis.h"
#include "ui/timeline/timeline_chart_view.h"
#include "ui/timeline/timeline_view.h"
#include "ui/views/live/health_view.h"
#include "ui/window/main_window.h"

#include <QComboBox>
#include <QDir>
#include <QIcon>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace emberline;
using namespace emberline::ui;
using namespace emberline::ui::test;

class TestLiveSession : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        emberline::ui::test::isolateSettings(m_dir, "tst_live_session");
    }

    // cpu_split launched from the dialog with 1 s flushes: two flushes arrive, the flame graph holds hot_sixty,
    // the status bar counts samples. The user zooms into hot_sixty and searches "warm"; after the next flush
    // the zoom and the search are still there and the totals grew. Stop ends it with a message, and the views
    // keep the data. If this fails, the live GUI does not show what the target does, or a refresh throws
    // away the user's place.
    void launchShowsLiveFlameGraphAndKeepsZoom()
    {
        REQUIRE_PERF_EVENTS();
        MainWindow window;
        window.show();
        LiveSessionView *view = launchFromDialog(window, targetPath("cpu_split"), QStringLiteral("30"));
        QVERIFY(view);
        QAbstractItemModelTester threadTester(view->timeline()->threadModel(),
                                              QAbstractItemModelTester::FailureReportingMode::QtTest);
        QTRY_VERIFY_WITH_TIMEOUT(view->session()->flushesReceived() >= 2, 15000);
        QVERIFY(waitSettled(view));
        QVERIFY(flameTotal(view, "hot_sixty") > 0);
        QVERIFY(tableHas(view, QStringLiteral("hot_sixty")));
        QVERIFY(child<QLabel>(view, "samplesLabel")->text().contains(QStringLiteral("samples")));
        QVERIFY(!child<QLabel>(view, "samplerLabel")->text().isEmpty());

        FlameGraphView *flame = view->explorer()->flameGraph();
        flame->zoomTo(flame->layout().largestNodeNamed("hot_sixty"));
        flame->setSearch(QStringLiteral("warm"));
        const int64_t rootBefore = flame->layout().tree()->total();
        const uint32_t seen = view->session()->flushesReceived();
        QTRY_VERIFY_WITH_TIMEOUT(view->session()->flushesReceived() > seen, 5000);
        QVERIFY(QTest::qWaitFor([&] { return settled(view) && flame->layout().tree()->total() > rootBefore; }, 15000));
        QCOMPARE(flame->layout().nodeName(flame->layout().zoomNode()), QStringLiteral("hot_sixty"));
        QCOMPARE(flame->layout().search(), QStringLiteral("warm"));
        QVERIFY(flame->layout().matchedFrameCount() > 0);

        QSignalSpy ended(view, &LiveSessionView::sessionEnded);
        QTest::mouseClick(child<QPushButton>(view, "stopButton"), Qt::LeftButton);
        QVERIFY(ended.wait(15000));
        QVERIFY(view->message().contains(QStringLiteral("ended")));
        QVERIFY(flameTotal(view, "warm_thirty") > 0);
        QVERIFY(child<QPushButton>(view, "openProfileButton")->isEnabled());
    }

    // deep_stack's ~40 KiB stack, copied 32 KiB at a time until the learned copy grows (the dialog's sessions use
    // the default copy): the Health tab warns about the stacks cut before that, and its first row names the
    // program, "stack copy too small" and the --stack-size that would have held them from the start. If this
    // fails, the health does not reach the live window with the flushes. The warning lasts while the cut stacks
    // are more than 2% of the samples: a few seconds, once the learned copy holds the rest whole (a check 8 s in
    // found it gone). It is watched from the session's start, so that a slow machine's late first flush does not
    // miss it.
    void healthTabNamesStackCopyTooSmall()
    {
        REQUIRE_PERF_EVENTS();
        MainWindow window;
        window.show();
        LiveSessionView *view = launchFromDialog(window, targetPath("deep_stack"), QStringLiteral("30"));
        QVERIFY(view);
        auto *tabs = child<QTabWidget>(view, "timelineTabs");
        bool warned = false;
        QTimer watch;
        connect(&watch, &QTimer::timeout, this,
                [&] { warned = warned || tabs->tabText(tabs->indexOf(view->health())) == QStringLiteral("Health ⚠"); });
        watch.start(5);
        QTRY_VERIFY_WITH_TIMEOUT(view->session()->flushesReceived() >= 1, 15000);
        QVERIFY(waitSettled(view));
        UnwindHealthModel *model = view->health()->model();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 5000);
        tabs->setCurrentWidget(view->health());
        QTRY_VERIFY_WITH_TIMEOUT(warned, 5000);
        watch.stop();
        QCOMPARE(model->index(0, UnwindHealthModel::ModuleColumn).data().toString(), QStringLiteral("deep_stack"));
        QCOMPARE(model->index(0, UnwindHealthModel::CauseColumn).data().toString(),
                 QStringLiteral("stack copy too small"));
        QVERIFY(
            model->index(0, UnwindHealthModel::FixColumn).data().toString().contains(QStringLiteral("--stack-size ")));
        QSignalSpy ended(view, &LiveSessionView::sessionEnded);
        QTest::mouseClick(child<QPushButton>(view, "stopButton"), Qt::LeftButton);
        QVERIFY(ended.wait(15000));
        QVERIFY(model->rowCount() > 0);
    }

    // phases spends its first half in phase_one and its second in phase_two. Dragging across the first part of
    // the CPU timeline leaves phase_one alone in the flame graph and the table, the last part phase_two alone,
    // and "Whole session" both. If this fails, time-range selection filters nothing or the wrong times.
    void timeRangeFiltersFlameGraphAndTable()
    {
        REQUIRE_PERF_EVENTS();
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        LiveSessionView *view = launchFromDialog(window, targetPath("phases"), QStringLiteral("4"));
        QVERIFY(view);
        QSignalSpy ended(view, &LiveSessionView::sessionEnded);
        QVERIFY(ended.wait(20000));
        QVERIFY(waitSettled(view));
        QVERIFY(flameTotal(view, "phase_one") > 0 && flameTotal(view, "phase_two") > 0);
        const int64_t wholeTotal = view->explorer()->flameGraph()->layout().tree()->total();

        dragAcross(view, 0.05, 0.35);
        QCOMPARE(view->scope(), LiveScope::SelectedRange);
        QVERIFY(waitSettled(view));
        QVERIFY(flameTotal(view, "phase_one") > 0);
        QCOMPARE(flameTotal(view, "phase_two"), int64_t(0));
        QVERIFY(tableHas(view, QStringLiteral("phase_one")));
        QVERIFY(!tableHas(view, QStringLiteral("phase_two")));
        QVERIFY(view->explorer()->flameGraph()->layout().tree()->total() < wholeTotal);

        dragAcross(view, 0.65, 0.95);
        QVERIFY(waitSettled(view));
        QCOMPARE(flameTotal(view, "phase_one"), int64_t(0));
        QVERIFY(flameTotal(view, "phase_two") > 0);
        QVERIFY(tableHas(view, QStringLiteral("phase_two")));

        view->setScope(LiveScope::WholeSession);
        QVERIFY(waitSettled(view));
        QVERIFY(flameTotal(view, "phase_one") > 0 && flameTotal(view, "phase_two") > 0);
        QCOMPARE(view->explorer()->flameGraph()->layout().tree()->total(), wholeTotal);
    }

    // A transform chosen while the session runs stays through the flushes that follow and combines with a time
    // range afterwards: focusing on phase_one leaves it alone over the whole session and over the first part; over
    // the last part (phase_two only) nothing is left, which the explorer says instead of an empty picture.
    // If this fails, a live session refuses transforms, drops them at the next flush, or loses the time range.
    void transformsFollowFlushesAndTimeRanges()
    {
        REQUIRE_PERF_EVENTS();
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        LiveSessionView *view = launchFromDialog(window, targetPath("phases"), QStringLiteral("4"));
        QVERIFY(view);
        QSignalSpy ended(view, &LiveSessionView::sessionEnded);
        QTRY_VERIFY_WITH_TIMEOUT(view->session()->flushesReceived() >= 1, 15000);
        ProfileExplorer *explorer = view->explorer();
        explorer->addTransform({engine::Transform::Kind::Focus, "^phase_one$"});
        QVERIFY(ended.wait(20000));
        QVERIFY(waitSettled(view));
        QVERIFY2(view->session()->flushesReceived() >= 3,
                 qPrintable(QString::number(view->session()->flushesReceived())));
        QCOMPARE(explorer->shape().transforms.size(), size_t(1));
        QVERIFY(explorer->message().isEmpty());
        QVERIFY(explorer->analysis()->loaded->original); // drawn from the transformed profile
        QVERIFY(flameTotal(view, "phase_one") > 0);
        QCOMPARE(flameTotal(view, "phase_two"), int64_t(0));
        QVERIFY(!tableHas(view, QStringLiteral("phase_two")));

        dragAcross(view, 0.05, 0.35);
        QCOMPARE(view->scope(), LiveScope::SelectedRange);
        QVERIFY(waitSettled(view));
        QVERIFY(explorer->message().isEmpty());
        QVERIFY(flameTotal(view, "phase_one") > 0);
        QCOMPARE(flameTotal(view, "phase_two"), int64_t(0));

        dragAcross(view, 0.7, 0.95);
        QTRY_VERIFY2_WITH_TIMEOUT(explorer->message().contains(QStringLiteral("no sample of the selected time range")),
                                  qPrintable(explorer->message()), 20000);

        explorer->clearTransforms();
        QVERIFY(waitSettled(view));
        QVERIFY(explorer->message().isEmpty());
        QVERIFY(flameTotal(view, "phase_two") > 0);
    }

    // named_threads started outside Emberline, attached to from the dialog's Attach page: the flame graph
    // shows alpha_work and the thread list its named threads; Stop leaves the program running. If this fails,
    // attaching from the GUI does not work or harms the target.
    void attachShowsNamedThreads()
    {
        REQUIRE_PERF_EVENTS();
        QProcess target;
        target.start(targetPath("named_threads"), {QStringLiteral("20")});
        QVERIFY(target.waitForStarted());
        MainWindow window;
        window.show();
        ProfileProcessDialog *dialog = window.showProfileDialog();
        child<QTabWidget>(dialog, "modeTabs")->setCurrentIndex(1);
        child<QLineEdit>(dialog, "pidEdit")->setText(QString::number(target.processId()));
        child<QSpinBox>(dialog, "flushPeriodSpin")->setValue(1);
        QTest::mouseClick(child<QPushButton>(dialog, "startButton"), Qt::LeftButton);
        QVERIFY(QTest::qWaitFor([&] { return !dialog->isVisible(); }, 10000));
        LiveSessionView *view = window.currentLiveView();
        QVERIFY(view);
        QTRY_VERIFY_WITH_TIMEOUT(view->session()->flushesReceived() >= 2, 15000);
        QVERIFY(waitSettled(view));
        QVERIFY(flameTotal(view, "alpha_work") > 0);
        LiveThreadModel *threads = view->timeline()->threadModel();
        bool alpha = false;
        for (int row = 0; row < threads->rowCount(); ++row)
            alpha |= threads->index(row).data().toString().contains(QStringLiteral("alpha-worker"));
        QVERIFY(alpha);
        // Each row's swatch is its thread's colour, and the same icon at every call: a repaint of the list makes
        // no new pixmap (new pixmaps filled Qt's pixmap cache, 10 MB, in long sessions).
        for (int row = 0; row < threads->rowCount(); ++row) {
            const auto swatch = threads->index(row).data(Qt::DecorationRole).value<QIcon>();
            QVERIFY(!swatch.isNull());
            QCOMPARE(threads->index(row).data(Qt::DecorationRole).value<QIcon>().cacheKey(), swatch.cacheKey());
            QCOMPARE(swatch.pixmap(16, 16).toImage().pixelColor(8, 8), threadColor(static_cast<uint32_t>(row)));
        }

        QSignalSpy ended(view, &LiveSessionView::sessionEnded);
        view->stop();
        QVERIFY(ended.wait(15000));
        QCOMPARE(target.state(), QProcess::Running);
        target.kill();
        target.waitForFinished();
    }

    // crasher segfaults after 1.2 s: the session ends by itself, the message names the signal, and the flame
    // graph keeps before_crash. If this fails, a crashing target loses the user's data or ends silently.
    void crashEndsSessionAndKeepsData()
    {
        REQUIRE_PERF_EVENTS();
        MainWindow window;
        window.show();
        LiveSessionView *view = launchFromDialog(window, targetPath("crasher"), QStringLiteral("1.2 segv"));
        QVERIFY(view);
        QSignalSpy ended(view, &LiveSessionView::sessionEnded);
        QVERIFY(ended.wait(20000));
        QVERIFY(waitSettled(view));
        QVERIFY2(view->message().contains(QStringLiteral("signal 11")), qPrintable(view->message()));
        QVERIFY(flameTotal(view, "before_crash") > 0);
        QVERIFY(!child<QPushButton>(view, "stopButton")->isEnabled());
    }

    // Closing the window during a session closes it at once: the close returns while the session is still
    // ending (its target ignores SIGTERM, so the end takes the launcher's two-second grace), and once the
    // session's thread is done its profile.pprof holds every flush. If this fails, quitting mid-session either
    // waits on the GUI thread for the end-of-session merge, or loses the end of the session.
    void closingTheWindowDoesNotWaitForTheSessionsEnd()
    {
        REQUIRE_PERF_EVENTS();
        auto *window = new MainWindow;
        window->show();
        engine::SessionConfig config;
        config.command = {QStringLiteral("/bin/sh").toStdString(), "-c", "trap '' TERM; while :; do :; done"};
        config.frequency = 199;
        config.flushPeriodNs = 1'000'000'000;
        window->startSession(config);
        LiveSessionView *view = window->currentLiveView();
        QVERIFY(view);
        QTRY_VERIFY_WITH_TIMEOUT(view->session()->flushesReceived() >= 2, 15000);
        const QString folder = view->sessionDirectory();

        QVERIFY(window->close());
        QVERIFY(!window->isVisible());
        delete window; // the session's facade goes with it, without waiting for the session thread
        QCOMPARE(engine::ProfilingSession::endingSessions(), size_t(1));
        QVERIFY(!QFile::exists(folder + QStringLiteral("/profile.pprof")));

        engine::ProfilingSession::waitForEndingSessions(); // what the application does at exit
        QCOMPARE(engine::ProfilingSession::endingSessions(), size_t(0));
        auto merged = engine::readPprofFile((folder + QStringLiteral("/profile.pprof")).toStdString());
        QVERIFY2(merged.ok(), merged.ok() ? "" : merged.error().message.c_str());
        int64_t inFlushes = 0;
        const QStringList files = QDir(folder).entryList({QStringLiteral("flush-*.pprof")}, QDir::Files);
        QVERIFY(files.size() >= 3); // the final flush too
        for (const QString &file : files) {
            auto flush = engine::readPprofFile(QDir(folder).filePath(file).toStdString());
            QVERIFY2(flush.ok(), flush.ok() ? "" : flush.error().message.c_str());
            inFlushes += flush->totals().at(0);
        }
        QVERIFY(inFlushes > 0);
        QCOMPARE(merged->totals().at(0), inFlushes);
    }
};

QTEST_MAIN(TestLiveSession)
#include "tst_live_session.moc"
