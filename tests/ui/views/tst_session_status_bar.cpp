// The session status bar, offscreen: the live numbers and the closing summary each land in their own label,
// the count of other processes' samples dropped included. If this fails, the user cannot see that samples of
// other processes were delivered and left out, or sees the wrong number.

#include "ui/views/live/session_status_bar.h"

#include <QLabel>
#include <QLayout>

#include <QTest>
#include <algorithm>

using namespace emberline;
using namespace emberline::ui;

class TestSessionStatusBar : public QObject {
    Q_OBJECT

    static QString text(const SessionStatusBar &bar, const char *name)
    {
        auto *label = bar.findChild<QLabel *>(QLatin1String(name));
        return label ? label->text() : QStringLiteral("<no label %1>").arg(QLatin1String(name));
    }

private Q_SLOTS:
    void liveNumbers()
    {
        SessionStatusBar bar;
        bar.show();
        engine::SessionStats stats;
        stats.elapsedNs = 75'000'000'000;
        stats.samples = 4000;
        stats.lost = 7;
        stats.incomplete = 40;
        stats.foreignDropped = 1234;
        stats.samplerDescription = "perf cpu-clock at 999 Hz";
        bar.setStats(stats);
        QCOMPARE(text(bar, "elapsedLabel"), QStringLiteral("Elapsed 01:15"));
        QCOMPARE(text(bar, "lostLabel"), QStringLiteral("7 lost"));
        QCOMPARE(text(bar, "foreignLabel"), QStringLiteral("1234 foreign dropped"));
        QCOMPARE(text(bar, "incompleteLabel"), QStringLiteral("1.00% incomplete"));
        QVERIFY(!bar.findChild<QLabel *>(QStringLiteral("foreignLabel"))->toolTip().isEmpty());
    }

    // Which sampler runs and why is in the sampler label's tooltip, and at the end what kept it from sampling all.
    void samplerChoiceInTooltip()
    {
        SessionStatusBar bar;
        bar.resize(1600, bar.sizeHint().height());
        bar.show();
        engine::SessionStats stats;
        stats.samplerDescription = "in-process sampler (each thread's CPU clock at 999 Hz)";
        stats.samplerChoice = "in-process sampler (auto: perf_event_open is refused by a seccomp filter)";
        bar.setStats(stats);
        const auto *label = bar.findChild<QLabel *>(QStringLiteral("samplerLabel"));
        QVERIFY(label->toolTip().contains(QLatin1String("CPU clock at 999 Hz")));
        QVERIFY(label->toolTip().contains(QLatin1String("seccomp filter")));
        engine::SessionSummary summary;
        summary.samplerDescription = stats.samplerDescription;
        summary.samplerChoice = stats.samplerChoice;
        summary.samplerProblems = {"the program installed a handler for the in-process sampler's signal"};
        bar.setSummary(summary);
        QVERIFY(label->toolTip().contains(QLatin1String("seccomp filter")));
        QVERIFY(label->toolTip().contains(QLatin1String("installed a handler")));
    }

    // A session that profiles memory shows its live heap; another shows nothing of it.
    void memory()
    {
        SessionStatusBar bar;
        bar.resize(1600, bar.sizeHint().height());
        bar.show();
        engine::SessionStats stats;
        stats.samples = 10;
        bar.setStats(stats);
        QVERIFY(!bar.findChild<QLabel *>(QStringLiteral("heapLabel"))->isVisible());
        stats.memory = true;
        stats.liveBytes = 3.0 * 1024 * 1024;
        stats.allocatedBytes = 2.0 * 1024 * 1024 * 1024;
        bar.setStats(stats);
        QVERIFY(bar.findChild<QLabel *>(QStringLiteral("heapLabel"))->isVisible());
        QCOMPARE(text(bar, "heapLabel"), QStringLiteral("heap 3.00 MiB live, 2.00 GiB allocated"));
        engine::SessionSummary summary;
        auto m = std::make_shared<engine::MemorySummary>();
        m->highWaterBytes = 5.0 * 1024 * 1024;
        m->leakedBytes = 1024;
        m->problems.push_back("a library was opened with RTLD_DEEPBIND");
        summary.memory = m;
        bar.setSummary(summary);
        QCOMPARE(text(bar, "heapLabel"), QStringLiteral("heap peak 5.00 MiB, 1.00 KiB still live at the end"));
        QVERIFY(bar.findChild<QLabel *>(QStringLiteral("heapLabel"))->toolTip().contains(QLatin1String("DEEPBIND")));
    }

    // A narrow bar (a window at 2× scale) keeps the state and the most important numbers whole, in order, drops
    // the rest and elides the sampler's description; widened, it shows them again. If this fails, the labels
    // overlap or cut each other off in a narrow window.
    void narrowBarDropsLessImportantLabels()
    {
        SessionStatusBar bar;
        engine::SessionStats stats;
        stats.elapsedNs = 75'000'000'000;
        stats.samples = 4000;
        stats.memory = true;
        stats.samplerDescription = "perf cpu-clock at 999 Hz + context switches (wall time), user and kernel stacks";
        bar.resize(520, bar.sizeHint().height());
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        bar.setStateText(QStringLiteral("Recording"));
        bar.setStats(stats);
        const auto shown = [&](const char *name) { return bar.findChild<QLabel *>(QLatin1String(name))->isVisible(); };
        QTRY_VERIFY(!shown("foreignLabel"));
        QVERIFY(shown("sessionStateLabel") && shown("elapsedLabel") && shown("samplesLabel"));
        QVERIFY(!shown("heapLabel"));
        bar.layout()->activate(); // the labels hidden, the row is laid out again
        // What is shown is whole and apart, inside the bar.
        QList<QLabel *> labels;
        for (QLabel *label : bar.findChildren<QLabel *>()) {
            if (label->isVisible() && label->objectName() != QLatin1String("samplerLabel"))
                labels << label;
        }
        std::sort(labels.begin(), labels.end(), [](QLabel *a, QLabel *b) { return a->x() < b->x(); });
        for (int i = 0; i < labels.size(); ++i) {
            QVERIFY2(labels[i]->width() >= labels[i]->sizeHint().width(), qPrintable(labels[i]->objectName()));
            QVERIFY2(labels[i]->geometry().right() < bar.width(), qPrintable(labels[i]->objectName()));
            if (i > 0)
                QVERIFY2(labels[i - 1]->geometry().right() < labels[i]->x(), qPrintable(labels[i]->objectName()));
        }
        const QString sampler = text(bar, "samplerLabel");
        QVERIFY(sampler.isEmpty() || sampler.endsWith(QChar(0x2026)));
        QCOMPARE(bar.findChild<QLabel *>(QStringLiteral("samplerLabel"))->toolTip(),
                 QString::fromStdString(stats.samplerDescription));
        QVERIFY(bar.minimumSizeHint().width() < 300);

        bar.resize(1800, bar.height());
        QTRY_VERIFY(shown("foreignLabel"));
        QVERIFY(shown("heapLabel") && shown("profilerCpuLabel") && shown("incompleteLabel"));
        QCOMPARE(text(bar, "samplerLabel"), QString::fromStdString(stats.samplerDescription));
    }

    // If this fails, the closing numbers set Emberline's CPU against a mostly idle target's (a few milliseconds),
    // which reads as hundreds of per cent, or leave out the comparison where the target's CPU is a fair base.
    void profilerCpuAsAShareOfACore()
    {
        SessionStatusBar bar;
        bar.resize(1800, bar.sizeHint().height());
        bar.show();
        engine::SessionSummary summary;
        summary.durationNs = 40'000'000'000;
        summary.samples = 100;
        summary.profilerCpuNs = 800'000'000; // 2% of a core over 40 s
        summary.targetCpuNs = 90'000'000;    // an idle target: 0.2% of a core
        bar.setSummary(summary);
        const auto *label = bar.findChild<QLabel *>(QStringLiteral("profilerCpuLabel"));
        QCOMPARE(label->text(), QStringLiteral("profiler CPU 2.0% of a core"));
        QVERIFY2(label->toolTip().contains(QLatin1String("too little")), qPrintable(label->toolTip()));
        QVERIFY(label->isVisible());
        QVERIFY(label->width() >= label->sizeHint().width()); // whole, not cut to "of the target'"

        summary.targetCpuNs = 32'000'000'000; // a busy target: 80% of a core
        bar.setSummary(summary);
        QCOMPARE(label->text(), QStringLiteral("profiler CPU 2.0% of a core (2.5% of the target's)"));
        QVERIFY(label->width() >= label->sizeHint().width());

        // Live, the share of a core over the last second.
        engine::SessionStats stats;
        stats.profilerCpuPercent = 3.4;
        bar.setStats(stats);
        QCOMPARE(label->text(), QStringLiteral("profiler CPU 3.4% of a core"));
    }

    void summary()
    {
        SessionStatusBar bar;
        engine::SessionSummary summary;
        summary.durationNs = 3'000'000'000;
        summary.samples = 100;
        summary.foreignDropped = 56;
        bar.setSummary(summary);
        QCOMPARE(text(bar, "foreignLabel"), QStringLiteral("56 foreign dropped"));
        QCOMPARE(text(bar, "elapsedLabel"), QStringLiteral("Lasted 00:03"));
    }
};

QTEST_MAIN(TestSessionStatusBar)
#include "tst_session_status_bar.moc"
