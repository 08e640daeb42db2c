// The host's steal as /proc/stat counts it, read from files written as the kernel writes it: the share is the most
// any one CPU lost over the span (not the machine's total, not the average), and the span moves on once it passes
// its length. A wrong share makes the in-process sampler call a loaded host's steal a sleep, or a sleep runnable.

#include "engine/sampler/host_steal.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

#include <vector>

using namespace emberline::engine;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

// /proc/stat with the given steal ticks (USER_HZ) per CPU, the other counts as a real machine has them.
void writeStat(const QString &path, const std::vector<unsigned> &steal)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    unsigned total = 0;
    for (unsigned s : steal)
        total += s;
    QByteArray text = QByteArrayLiteral("cpu  7573827 202546 637148 7297385 15803 0 13096 ") +
                      QByteArray::number(total) + QByteArrayLiteral(" 0 0\n");
    for (size_t i = 0; i < steal.size(); ++i)
        text += "cpu" + QByteArray::number(qulonglong(i)) + " 3786913 101273 318574 3648692 7901 0 6548 " +
                QByteArray::number(steal[i]) + " 0 0\n";
    text += "intr 123456 0 9 0 0\nctxt 998877\nbtime 1764700000\nprocesses 4242\nprocs_running 2\n";
    f.write(text);
}

} // namespace

class TestHostSteal : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void mostStolenCpu()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("stat"));
        const double tickNs = 1e9 / double(::sysconf(_SC_CLK_TCK));
        writeStat(path, {100, 50});
        HostSteal steal(0, path.toUtf8().constData());
        // Over half a second the first CPU lost 10 ticks, the second 20: the second's share counts.
        writeStat(path, {110, 70});
        QCOMPARE(steal.share(kSecond / 2), 20 * tickNs / (kSecond / 2.0));
        // Nothing more stolen: the share over the whole span falls.
        QCOMPARE(steal.share(kSecond), 20 * tickNs / double(kSecond));
    }

    void spanMovesOn()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("stat"));
        const double tickNs = 1e9 / double(::sysconf(_SC_CLK_TCK));
        writeStat(path, {0, 0});
        HostSteal steal(0, path.toUtf8().constData());
        writeStat(path, {30, 0});
        // The reading at one second becomes the span's start once another second has passed.
        QCOMPARE(steal.share(kSecond), 30 * tickNs / double(kSecond));
        writeStat(path, {30, 0});
        QCOMPARE(steal.share(3 * kSecond / 2), 30 * tickNs / (1.5 * kSecond));
        writeStat(path, {30, 10});
        // Past two seconds: the span from the first second on holds the second CPU's 10 ticks, the first's none.
        QCOMPARE(steal.share(2 * kSecond), 30 * tickNs / double(2 * kSecond));
        QCOMPARE(steal.share(5 * kSecond / 2), 10 * tickNs / (1.5 * kSecond));
    }

    void unreadable()
    {
        HostSteal steal(0, "/nonexistent/stat");
        QCOMPARE(steal.share(kSecond), 0.0);
    }
};

QTEST_GUILESS_MAIN(TestHostSteal)
#include "tst_host_steal.moc"
