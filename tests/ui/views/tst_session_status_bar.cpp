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
