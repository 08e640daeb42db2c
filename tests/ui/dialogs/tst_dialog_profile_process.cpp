// The Profile Process dialog driven by objectName, offscreen: what it refuses itself (never reaching the
// engine), what it shows when the engine refuses (and that it stays open), the upload toggle and its settings, the
// remembered settings, and the attach page's process list under QAbstractItemModelTester.

#include "tests/engine/process/child_process.h"
#include "tests/ui/live_test_support.h"
#include "tests/ui/test_settings.h"

#include "ui/dialogs/attach_page.h"
#include "ui/dialogs/launch_page.h"
#include "ui/dialogs/profile_process_dialog.h"
#include "ui/models/process_list_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>
#include <unistd.h>

using namespace emberline::ui;
using namespace emberline::ui::test;

class TestProfileProcessDialog : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    void pressStart(ProfileProcessDialog &dialog)
    {
        QTest::mouseClick(child<QPushButton>(&dialog, "startButton"), Qt::LeftButton);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        emberline::ui::test::isolateSettings(m_dir, "tst_dialog_profile_process");
    }

    // An empty program, a program that does not exist, a bad environment line, no pid, and a pid that has
    // vanished are each refused with a message and no session is started. If this fails, bad values reach the
    // engine (or nothing tells the user what is wrong).
    void refusesBadValuesItself()
    {
        ProfileProcessDialog dialog;
        dialog.show();
        auto *message = child<QLabel>(&dialog, "dialogMessage");
        child<QTabWidget>(&dialog, "modeTabs")->setCurrentIndex(0);
        child<QLineEdit>(&dialog, "programEdit")->clear();
        pressStart(dialog);
        QVERIFY(!dialog.isStarting());
        QVERIFY(message->isVisible() && message->text().contains(QStringLiteral("Choose a program")));

        child<QLineEdit>(&dialog, "programEdit")->setText(QStringLiteral("/no/such/program"));
        pressStart(dialog);
        QVERIFY(!dialog.isStarting());
        QVERIFY(message->text().contains(QStringLiteral("/no/such/program")));

        child<QLineEdit>(&dialog, "programEdit")->setText(targetPath("cpu_split"));
        child<QPlainTextEdit>(&dialog, "environmentEdit")->setPlainText(QStringLiteral("not an assignment"));
        pressStart(dialog);
        QVERIFY(!dialog.isStarting());
        QVERIFY(message->text().contains(QStringLiteral("NAME=value")));
        child<QPlainTextEdit>(&dialog, "environmentEdit")->clear();

        child<QTabWidget>(&dialog, "modeTabs")->setCurrentIndex(1);
        child<QLineEdit>(&dialog, "pidEdit")->clear();
        pressStart(dialog);
        QVERIFY(!dialog.isStarting());
        QVERIFY(message->text().contains(QStringLiteral("pid")));

        QProcess gone;
        gone.start(targetPath("cpu_split"), {QStringLiteral("30")});
        QVERIFY(gone.waitForStarted());
        const qint64 pid = gone.processId();
        gone.kill();
        gone.waitForFinished();
        child<QLineEdit>(&dialog, "pidEdit")->setText(QString::number(pid));
        pressStart(dialog);
        QVERIFY(!dialog.isStarting());
        QVERIFY2(message->text().contains(QStringLiteral("no longer exists")), qPrintable(message->text()));
        QVERIFY(dialog.isVisible());
    }

    // A process already traced by strace cannot be attached to by the ptrace sampler: the engine refuses, and
    // the dialog shows the engine's explanation and stays open for another try. If this fails, a refused
    // attach closes the dialog or hides why.
    void engineRefusalKeepsDialogOpen()
    {
        const QString strace = QStandardPaths::findExecutable(QStringLiteral("strace"));
        if (strace.isEmpty())
            QSKIP("strace is not installed: no way to make a process untraceable here");
        QProcess tracer;
        tracer.start(strace, {QStringLiteral("-o"), QStringLiteral("/dev/null"), targetPath("named_threads"),
                              QStringLiteral("20")});
        QVERIFY(tracer.waitForStarted());
        QString traced;
        QVERIFY(QTest::qWaitFor(
            [&] {
                QFile children(QStringLiteral("/proc/%1/task/%1/children").arg(tracer.processId()));
                if (children.open(QIODevice::ReadOnly))
                    traced = QString::fromLatin1(children.readAll()).trimmed().section(QLatin1Char(' '), 0, 0);
                // The traced child has exec'd the target (before that it is strace's own fork).
                return !traced.isEmpty() && QFileInfo(QStringLiteral("/proc/%1/exe").arg(traced))
                                                .symLinkTarget()
                                                .endsWith(QStringLiteral("named_threads"));
            },
            5000));
        ProfileProcessDialog dialog;
        dialog.show();
        child<QTabWidget>(&dialog, "modeTabs")->setCurrentIndex(1);
        child<QLineEdit>(&dialog, "pidEdit")->setText(traced);
        auto *sampler = child<QComboBox>(&dialog, "samplerCombo");
        sampler->setCurrentIndex(sampler->findData(QStringLiteral("ptrace")));
        QSignalSpy started(&dialog, &ProfileProcessDialog::sessionStarted);
        pressStart(dialog);
        QVERIFY(QTest::qWaitFor([&] { return !dialog.isStarting(); }, 10000));
        const QString message = child<QLabel>(&dialog, "dialogMessage")->text();
        QVERIFY2(message.contains(QStringLiteral("could not start profiling")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("trace")), qPrintable(message));
        QVERIFY(dialog.isVisible());
        QCOMPARE(started.count(), 0);
        QVERIFY(child<QPushButton>(&dialog, "startButton")->isEnabled());
        tracer.kill();
        tracer.waitForFinished();
    }

    // The upload toggle is offered, and the upload settings show only while it is on (tst_live_upload drives
    // it end to end). If this fails, the dialog offers no upload, or shows settings that do not apply.
    void uploadToggleShowsItsSettings()
    {
        ProfileProcessDialog dialog;
        dialog.show();
        auto *upload = child<QCheckBox>(&dialog, "uploadToggle");
        QVERIFY(upload);
        QVERIFY(upload->isEnabled());
        upload->setChecked(false);
        QVERIFY(!child<QWidget>(&dialog, "uploadSettings")->isVisible());
        upload->setChecked(true);
        QVERIFY(child<QWidget>(&dialog, "uploadSettings")->isVisible());
        upload->setChecked(false);
    }

    // Wall time is on by default, as Datadog records it, even for a user whose settings hold the old default
    // (off) from before; unticking the switch turns it off in the configuration the dialog starts. If this fails,
    // sessions from the window record CPU time only unless the user finds the switch.
    void wallTimeOnByDefault()
    {
        {
            QSettings settings;
            settings.setValue(QStringLiteral("profileDialog/wallTime"), false);
        }
        ProfileProcessDialog dialog;
        child<QTabWidget>(&dialog, "modeTabs")->setCurrentIndex(0);
        child<QLineEdit>(&dialog, "programEdit")->setText(targetPath("cpu_split"));
        auto *wallTime = child<QCheckBox>(&dialog, "wallTimeCheck");
        QVERIFY(wallTime->isChecked());
        emberline::engine::SessionConfig config;
        config.wallTime = false;
        QVERIFY2(dialog.buildConfig(config).isEmpty(), qPrintable(dialog.buildConfig(config)));
        QVERIFY(config.wallTime);
        wallTime->setChecked(false);
        QVERIFY(dialog.buildConfig(config).isEmpty());
        QVERIFY(!config.wallTime);
    }

    // The memory switch is on both pages (the agent preloaded into a program Emberline starts, or loaded into a
    // running one), off by default, with its interval at 512 KiB and chosen only while the switch is on; it sets the
    // configuration's memory and interval, and both come back in the next dialog, each page's its own. If this
    // fails, a session profiles memory the user did not ask for, at another interval.
    void memorySwitchOnTheLaunchPage()
    {
        {
            ProfileProcessDialog dialog;
            auto *attachMemory = child<QCheckBox>(dialog.attachPage(), "memoryCheck");
            QVERIFY(attachMemory);
            QVERIFY(!attachMemory->isChecked());
            child<QTabWidget>(&dialog, "modeTabs")->setCurrentIndex(0);
            child<QLineEdit>(&dialog, "programEdit")->setText(targetPath("cpu_split"));
            child<QLineEdit>(&dialog, "argumentsEdit")->setText(QStringLiteral("0.2"));
            auto *memory = child<QCheckBox>(dialog.launchPage(), "memoryCheck");
            auto *interval = child<QComboBox>(dialog.launchPage(), "allocIntervalCombo");
            QVERIFY(memory && interval);
            QVERIFY(!memory->isChecked());
            QVERIFY(!interval->isEnabled());
            QCOMPARE(interval->currentData().toULongLong(), 524288ull);
            QCOMPARE(interval->currentText(), QStringLiteral("every 512 KiB"));
            emberline::engine::SessionConfig config;
            QVERIFY(dialog.buildConfig(config).isEmpty());
            QVERIFY(!config.memory);

            QTest::mouseClick(memory, Qt::LeftButton);
            QVERIFY(memory->isChecked());
            QVERIFY(interval->isEnabled());
            QVERIFY(dialog.buildConfig(config).isEmpty());
            QVERIFY(config.memory);
            QCOMPARE(config.allocInterval, uint64_t(524288));
            interval->setCurrentIndex(interval->findText(QStringLiteral("every allocation (exact, slower)")));
            QVERIFY(dialog.buildConfig(config).isEmpty());
            QCOMPARE(config.allocInterval, uint64_t(1));
            // A CPython's objects at its own allocators: a launched program's switch alone, set only with memory.
            QVERIFY(!child<QCheckBox>(dialog.attachPage(), "pythonAllocatorsCheck"));
            auto *pythonAllocators = child<QCheckBox>(dialog.launchPage(), "pythonAllocatorsCheck");
            QVERIFY(pythonAllocators && pythonAllocators->isEnabled());
            QVERIFY(!config.pythonAllocators);
            pythonAllocators->setChecked(true);
            QVERIFY(dialog.buildConfig(config).isEmpty());
            QVERIFY(config.pythonAllocators);
            pressStart(dialog); // remembers the settings, whether or not the engine then starts the session
            QVERIFY(QTest::qWaitFor([&] { return !dialog.isStarting(); }, 10000));
        }
        ProfileProcessDialog again;
        QVERIFY(child<QCheckBox>(again.launchPage(), "memoryCheck")->isChecked());
        QCOMPARE(child<QComboBox>(again.launchPage(), "allocIntervalCombo")->currentData().toULongLong(), 1ull);
        QVERIFY(child<QCheckBox>(again.launchPage(), "pythonAllocatorsCheck")->isChecked());
        QVERIFY(!child<QCheckBox>(again.attachPage(), "memoryCheck")->isChecked()); // the attach page's own
        child<QCheckBox>(again.launchPage(), "pythonAllocatorsCheck")->setChecked(false);
        child<QCheckBox>(again.launchPage(), "memoryCheck")->setChecked(false);
        child<QComboBox>(again.launchPage(), "allocIntervalCombo")->setCurrentIndex(3);
        pressStart(again);
        QVERIFY(QTest::qWaitFor([&] { return !again.isStarting(); }, 10000));
    }

    // Frequency, flush period, sampler, mode and program come back in the next dialog. If this fails, the user
    // retypes everything for every session.
    void remembersTheLastSettings()
    {
        {
            ProfileProcessDialog dialog;
            child<QTabWidget>(&dialog, "modeTabs")->setCurrentIndex(0);
            child<QLineEdit>(&dialog, "programEdit")->setText(targetPath("cpu_split"));
            child<QLineEdit>(&dialog, "argumentsEdit")->setText(QStringLiteral("0.2"));
            child<QSpinBox>(&dialog, "frequencySpin")->setValue(333);
            child<QSpinBox>(&dialog, "flushPeriodSpin")->setValue(7);
            auto *sampler = child<QComboBox>(&dialog, "samplerCombo");
            sampler->setCurrentIndex(sampler->findData(QStringLiteral("perf")));
            child<QCheckBox>(&dialog, "wallTimeCheck")->setChecked(false);
            pressStart(dialog);
            QVERIFY(QTest::qWaitFor([&] { return !dialog.isStarting(); }, 10000));
        }
        ProfileProcessDialog again;
        QCOMPARE(child<QLineEdit>(&again, "programEdit")->text(), targetPath("cpu_split"));
        QCOMPARE(child<QLineEdit>(&again, "argumentsEdit")->text(), QStringLiteral("0.2"));
        QCOMPARE(child<QSpinBox>(&again, "frequencySpin")->value(), 333);
        QCOMPARE(child<QSpinBox>(&again, "flushPeriodSpin")->value(), 7);
        QCOMPARE(child<QComboBox>(&again, "samplerCombo")->currentData().toString(), QStringLiteral("perf"));
        QVERIFY(!child<QCheckBox>(&again, "wallTimeCheck")->isChecked()); // the user's choice, not the default
    }

    // The attach page lists this very process, greyed out (not selectable) as Emberline itself, and the user's
    // own processes come first; the model passes QAbstractItemModelTester through a refresh. If this fails, the
    // list offers processes that cannot be profiled or breaks its views.
    void processListGreysOutWhatCannotBeTraced()
    {
        AttachPage page;
        QAbstractItemModelTester tester(page.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy refreshed(&page, &AttachPage::refreshed);
        page.refresh();
        QVERIFY(refreshed.wait(10000));
        ProcessListModel *model = page.model();
        const int self = model->rowOfPid(static_cast<int>(getpid()));
        QVERIFY(self >= 0);
        QVERIFY(!(model->flags(model->index(self, 0)) & Qt::ItemIsEnabled));
        QVERIFY(model->index(self, ProcessListModel::Note).data().toString().contains(QStringLiteral("Emberline")));
        QVERIFY(
            model->index(self, 0).data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("Cannot be profiled")));
        bool seenOther = false;
        for (int row = 0; row < model->rowCount(); ++row) {
            const bool own = model->processAt(row)->own;
            QVERIFY2(!(own && seenOther), "own processes come first");
            seenOther |= !own;
        }
        page.refresh();
        QVERIFY(refreshed.wait(10000));
    }

    // The attach page's memory switch asks the session to load the agent into the chosen process, at the interval
    // chosen. If this fails, the window cannot profile a running program's memory.
    void attachPageAsksForMemory()
    {
        QProcess sleeper;
        sleeper.start(QStringLiteral("sleep"), {QStringLiteral("30")});
        QVERIFY(sleeper.waitForStarted());
        AttachPage page;
        page.setPid(static_cast<int>(sleeper.processId()));
        auto *memory = child<QCheckBox>(&page, "memoryCheck");
        auto *interval = child<QComboBox>(&page, "allocIntervalCombo");
        QVERIFY(memory && interval && !interval->isEnabled());
        emberline::engine::SessionConfig config;
        QVERIFY2(page.fillConfig(config).isEmpty(), qPrintable(page.fillConfig(config)));
        QCOMPARE(config.pid, static_cast<int>(sleeper.processId()));
        QVERIFY(!config.memory);
        memory->setChecked(true);
        QVERIFY(interval->isEnabled());
        interval->setCurrentIndex(interval->findData(qulonglong{65536}));
        QVERIFY(page.fillConfig(config).isEmpty());
        QVERIFY(config.memory);
        QCOMPARE(config.allocInterval, uint64_t(65536));
        sleeper.kill();
        sleeper.waitForFinished();
    }

    // A shell that waits for the command it runs is said to, with the child to choose instead, once the list has
    // scanned it; a process at work (this one) gets no such note. If this fails, a user attaching to a wrapper script
    // profiles a shell that does nothing, unwarned.
    void attachPageNamesTheChildAShellWaitsFor()
    {
        QProcess shell;
        shell.start(QStringLiteral("bash"), {QStringLiteral("-c"), QStringLiteral("sleep 30; :")});
        QVERIFY(shell.waitForStarted());
        const int pid = static_cast<int>(shell.processId());
        const QString childPid = emberline::test::firstChildOf(shell.processId());
        QVERIFY2(!childPid.isEmpty(), "the shell started no child");
        AttachPage page;
        QSignalSpy refreshed(&page, &AttachPage::refreshed);
        page.setPid(pid);
        page.refresh();
        QVERIFY(refreshed.wait(10000));
        auto *waiting = child<QLabel>(&page, "attachWaitingLabel");
        QVERIFY(waiting);
        QVERIFY2(waiting->text().contains(QStringLiteral("(bash) is waiting for its child %1 (sleep)").arg(childPid)),
                 qPrintable(waiting->text()));
        QVERIFY(!waiting->isHidden());
        // The list's note says it of the shell's row too.
        ProcessListModel *model = page.model();
        const QString note = model->index(model->rowOfPid(pid), ProcessListModel::Note).data().toString();
        QVERIFY2(note.contains(QStringLiteral("waiting for its child %1 (sleep)").arg(childPid)), qPrintable(note));
        page.setPid(static_cast<int>(getpid()));
        QVERIFY(waiting->isHidden());
        ::kill(childPid.toInt(), SIGKILL);
        shell.waitForFinished(5000);
    }
};

QTEST_MAIN(TestProfileProcessDialog)
#include "tst_dialog_profile_process.moc"
