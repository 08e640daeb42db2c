// The session status bar, offscreen: the live numbers and the closing summary each land in their own label,
// the count of other processes' samples dropped included. If this fails, the user cannot see that samples of
// other processes were delivered and left out, or sees the wrong number.

#include "ui/views/live/session_status_bar.h"

#include <QLabel>
#include <QTest>

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

    // A session that profiles memory shows its live heap; another shows nothing of it.
    void memory()
    {
        SessionStatusBar bar;
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
        m->peakLiveBytes = 5.0 * 1024 * 1024;
        m->leakedBytes = 1024;
        m->problems.push_back("a library was opened with RTLD_DEEPBIND");
        summary.memory = m;
        bar.setSummary(summary);
        QCOMPARE(text(bar, "heapLabel"), QStringLiteral("heap peak 5.00 MiB, 1.00 KiB still live at the end"));
        QVERIFY(bar.findChild<QLabel *>(QStringLiteral("heapLabel"))->toolTip().contains(QLatin1String("DEEPBIND")));
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
