// Upload in the live GUI, offscreen and end to end: the Profile Process dialog driven by objectName with the
// upload toggle on and the agent URL pointing at a loopback receiver started here; cpu_split sampled by the
// real sampler with a 1 s flush period; the receiver's requests taken apart independently (pprof decoded with
// the engine's reader); the live session's Upload tab listing every flush; Profile > Upload Flushes pausing
// and resuming; a refusing agent shown in words while sampling goes on; invalid tags holding Start back.

#include "tests/engine/session/perf_guard.h"
#include "tests/engine/upload/loopback_server.h"
#include "tests/engine/upload/upload_checks.h"
#include "tests/ui/live_test_support.h"
#include "tests/ui/test_settings.h"

#include "ui/dialogs/profile_process_dialog.h"
#include "ui/upload/session_upload.h"
#include "ui/upload/upload_panel.h"
#include "ui/upload/upload_panel_model.h"
#include "ui/upload/upload_settings_widget.h"
#include "ui/window/main_window.h"

#include <QAction>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline;
using namespace emberline::ui;
using namespace emberline::ui::test;
using emberline::test::LoopbackServer;

class TestLiveUpload : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    static void typeInto(QLineEdit *edit, const QString &text)
    {
        edit->selectAll();
        QTest::keyClick(edit, Qt::Key_Delete);
        QTest::keyClicks(edit, text);
    }

    // Fills the dialog for cpu_split (seconds of work) with a 1 s flush period and upload on to `agentUrl`.
    static void fillDialog(ProfileProcessDialog *dialog, const QString &agentUrl, const char *seconds)
    {
        child<QTabWidget>(dialog, "modeTabs")->setCurrentIndex(0);
        typeInto(child<QLineEdit>(dialog, "programEdit"), targetPath("cpu_split"));
        typeInto(child<QLineEdit>(dialog, "argumentsEdit"), QLatin1String(seconds));
        child<QSpinBox>(dialog, "flushPeriodSpin")->setValue(1);
        auto *toggle = child<QCheckBox>(dialog, "uploadToggle");
        if (!toggle->isChecked())
            QTest::mouseClick(toggle, Qt::LeftButton, {}, QPoint(8, toggle->height() / 2));
        typeInto(child<QLineEdit>(dialog, "uploadAgentUrl"), agentUrl);
        typeInto(child<QLineEdit>(dialog, "uploadService"), QStringLiteral("checkout"));
        typeInto(child<QLineEdit>(dialog, "uploadTags"), QStringLiteral("team:payments"));
    }

    // Starts through the dialog; the live view of the new session, or nullptr.
    static LiveSessionView *startThroughDialog(MainWindow &window, const QString &agentUrl, const char *seconds)
    {
        ProfileProcessDialog *dialog = window.showProfileDialog();
        fillDialog(dialog, agentUrl, seconds);
        auto *start = child<QPushButton>(dialog, "startButton");
        if (!start->isEnabled()) {
            qWarning() << "Start is disabled:" << dialog->uploadSettingsWidget()->validationMessage();
            return nullptr;
        }
        QTest::mouseClick(start, Qt::LeftButton);
        if (!QTest::qWaitFor([&] { return window.currentLiveView() != nullptr; }, 15000)) {
            qWarning() << "no session started:" << dialog->message();
            return nullptr;
        }
        return window.currentLiveView();
    }

    static UploadPanelModel *panelModel(LiveSessionView *view)
    {
        auto *panel = child<UploadPanel>(view, "uploadPanel");
        return panel ? panel->model() : nullptr;
    }

    static void endSession(LiveSessionView *view)
    {
        view->stop();
        QVERIFY(QTest::qWaitFor([&] { return !view->isActive(); }, 20000));
        // The uploader drains on a pool thread; the GUI keeps running meanwhile.
        QVERIFY(QTest::qWaitFor([&] { return view->upload()->isFinished(); }, 10000));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        emberline::ui::test::isolateSettings(m_dir, "tst_live_upload");
        for (const char *name : {"DD_TRACE_AGENT_URL", "DD_AGENT_HOST", "DD_TRACE_AGENT_PORT", "DD_SERVICE", "DD_ENV",
                                 "DD_VERSION", "DD_TAGS", "DD_API_KEY", "DD_SITE", "DD_PROFILING_AGENTLESS"})
            qunsetenv(name);
    }

    // Every flush of a session started from the dialog with upload on reaches the agent as a profile holding
    // cpu_split's hot function, and the Upload tab lists each with its HTTP status; Profile > Upload Flushes
    // stops and restarts submitting. If this fails, the GUI's upload toggle does not upload (or uploads
    // something Datadog cannot read), the panel hides what happened, or the main window's toggle does nothing.
    void everyFlushIsUploadedAndListed()
    {
        REQUIRE_PERF_EVENTS();
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        MainWindow window;
        window.show();
        LiveSessionView *view = startThroughDialog(window, QString::fromStdString(server.url()), "12");
        QVERIFY(view);
        QVERIFY2(view->upload(), "the session started from the dialog with upload on has no uploader");
        auto *action = window.findChild<QAction *>(QStringLiteral("uploadAction"));
        QVERIFY(action && action->isEnabled() && action->isChecked());

        QVERIFY2(QTest::qWaitFor([&] { return server.requests().size() >= 2; }, 15000),
                 "fewer than 2 flushes reached the agent");
        for (const emberline::test::CapturedRequest &r : server.requests()) {
            const emberline::test::Received got = emberline::test::checkRequest(r);
            QVERIFY2(got.failures.isEmpty(), qPrintable(got.failures.join(QStringLiteral("; "))));
            QCOMPARE(got.tag(QStringLiteral("service")), QStringLiteral("checkout"));
            QCOMPARE(got.tag(QStringLiteral("team")), QStringLiteral("payments"));
            QVERIFY(got.profile.has_value());
            QVERIFY2(got.profile->findString("hot_sixty") != 0, "hot_sixty is not in the uploaded profile");
        }
        UploadPanelModel *model = panelModel(view);
        QVERIFY2(model, "the live session shows no Upload panel");
        QVERIFY(QTest::qWaitFor([&] { return model->rowCount() >= 2; }, 5000));
        for (int row = 0; row < model->rowCount(); ++row) {
            const QString status = model->index(row, UploadPanelModel::StatusColumn).data().toString();
            QVERIFY2(status.contains(QStringLiteral("HTTP 202")), qPrintable(status));
        }
        QVERIFY2(child<QLabel>(view, "uploadCounts")->text().contains(QStringLiteral("0 dropped")),
                 qPrintable(child<QLabel>(view, "uploadCounts")->text()));

        // Paused: flushes keep coming (and are kept on disk) but none is submitted.
        action->trigger();
        QVERIFY(!view->upload()->isSubmitting());
        const uint64_t submitted = view->upload()->counters().submitted;
        const uint32_t flushes = view->session()->flushesReceived();
        QVERIFY(QTest::qWaitFor([&] { return view->session()->flushesReceived() >= flushes + 2; }, 10000));
        QCOMPARE(view->upload()->counters().submitted, submitted);
        action->trigger();
        QVERIFY(view->upload()->isSubmitting());
        QVERIFY2(QTest::qWaitFor([&] { return view->upload()->counters().submitted > submitted; }, 10000),
                 "submitting did not resume");
        endSession(view);
        QVERIFY(!QTest::currentTestFailed());
        QVERIFY(view->upload()->counters().sent >= 3);
        QCOMPARE(view->upload()->counters().dropped, uint64_t(0));

        // The next dialog remembers the toggle and the agent.
        ProfileProcessDialog again;
        QVERIFY(child<QCheckBox>(&again, "uploadToggle")->isChecked());
        QCOMPARE(child<QLineEdit>(&again, "uploadAgentUrl")->text(), QString::fromStdString(server.url()));
    }

    // An agent answering 403 is shown in the panel with the words that say what to fix, and sampling goes on:
    // flushes keep arriving and each is still tried. If this fails, a refusal is silent or stalls the session.
    void refusalIsShownAndSamplingGoesOn()
    {
        REQUIRE_PERF_EVENTS();
        LoopbackServer server;
        server.setStatuses({403});
        QVERIFY(server.listenTcp());
        MainWindow window;
        window.show();
        LiveSessionView *view = startThroughDialog(window, QString::fromStdString(server.url()), "8");
        QVERIFY(view && view->upload());
        UploadPanelModel *model = panelModel(view);
        QVERIFY(model);
        QVERIFY(QTest::qWaitFor([&] { return model->rowCount() >= 1; }, 15000));
        const QString message = child<QLabel>(view, "uploadMessage")->text();
        QVERIFY2(message.contains(QStringLiteral("403")) && message.contains(QStringLiteral("API key")),
                 qPrintable(message));
        const uint32_t flushes = view->session()->flushesReceived();
        QVERIFY2(QTest::qWaitFor([&] { return view->session()->flushesReceived() >= flushes + 2; }, 10000),
                 "sampling stopped after the refusal");
        QVERIFY(QTest::qWaitFor([&] { return model->rowCount() >= 3; }, 10000));
        QVERIFY(view->isActive());
        const QString counts = child<QLabel>(view, "uploadCounts")->text();
        QVERIFY2(counts.contains(QStringLiteral("API key")), qPrintable(counts));
        QCOMPARE(view->upload()->counters().sent, uint64_t(0));
        QVERIFY(server.requests().size() >= 3);
        endSession(view);
    }

    // A session from the command line (--record, --attach) runs without upload, and the main window's upload
    // toggle is disabled for it. If this fails, sessions without upload settings claim to upload.
    void commandLineSessionHasNoUpload()
    {
        REQUIRE_PERF_EVENTS();
        MainWindow window;
        window.show();
        auto *action = window.findChild<QAction *>(QStringLiteral("uploadAction"));
        QVERIFY(action && !action->isEnabled());
        engine::SessionConfig config;
        config.command = {targetPath("cpu_split").toStdString(), "1"};
        config.flushPeriodNs = 1'000'000'000;
        LiveSessionView *view = window.startSession(std::move(config));
        QVERIFY(view);
        QVERIFY(!view->upload());
        QVERIFY(!action->isEnabled());
        QVERIFY(!child<UploadPanel>(view, "uploadPanel"));
        QVERIFY(QTest::qWaitFor([&] { return !view->isActive(); }, 20000));
        QVERIFY(view->session()->flushesReceived() >= 1);
    }

    // Invalid tags keep Start disabled, with the validation message naming the tag; fixing them enables it;
    // the settings show only while the toggle is on. If this fails, a session could start with settings the
    // uploader refuses, or nothing tells the user why Start does nothing.
    void invalidTagsHoldStartBack()
    {
        ProfileProcessDialog dialog;
        dialog.show();
        fillDialog(&dialog, QStringLiteral("http://127.0.0.1:9"), "1");
        auto *start = child<QPushButton>(&dialog, "startButton");
        auto *toggle = child<QCheckBox>(&dialog, "uploadToggle");
        QVERIFY(toggle->isEnabled());
        QVERIFY(start->isEnabled());
        QVERIFY(dialog.uploadSettingsWidget()->isVisible());
        typeInto(child<QLineEdit>(&dialog, "uploadTags"), QStringLiteral("team:payments, profile_seq:7"));
        QVERIFY(!start->isEnabled());
        const QString shown = child<QLabel>(&dialog, "uploadValidation")->text();
        QVERIFY2(shown.contains(QStringLiteral("profile_seq")), qPrintable(shown));
        QVERIFY2(start->toolTip().contains(QStringLiteral("profile_seq")), qPrintable(start->toolTip()));
        // Upload off: the settings no longer matter.
        QTest::mouseClick(toggle, Qt::LeftButton, {}, QPoint(8, toggle->height() / 2));
        QVERIFY(!dialog.uploadSettingsWidget()->isVisible());
        QVERIFY(start->isEnabled());
        QTest::mouseClick(toggle, Qt::LeftButton, {}, QPoint(8, toggle->height() / 2));
        QVERIFY(!start->isEnabled());
        typeInto(child<QLineEdit>(&dialog, "uploadTags"), QStringLiteral("team:payments"));
        QVERIFY(start->isEnabled());
    }
};

QTEST_MAIN(TestLiveUpload)
#include "tst_live_upload.moc"
