// The GUI thread's request for prompt wakeups: the calling thread gets the short slice, its nice value stays,
// and a thread it starts afterwards gets the kernel's default slice back (the request is not inherited by
// workers, the engine thread or a launched program). The kernel's view is read from /proc/thread-self/sched.

#include "ui/jobs/thread_scheduling.h"

#include <QFile>
#include <QTest>

#include <optional>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

using namespace emberline;

// Named rather than anonymous: the unity build includes this file, and a test class with members of an
// anonymous namespace's types would then warn (-Wsubobject-linkage).
namespace thread_scheduling_test {

struct Scheduling {
    qint64 sliceNs = -1; // -1: the kernel does not report one
    int policy = -1;
    int prio = -1; // 120 + nice for a normal thread
};

// The calling thread's scheduling as /proc/thread-self/sched reports it.
std::optional<Scheduling> readScheduling()
{
    QFile file(QStringLiteral("/proc/thread-self/sched"));
    if (!file.open(QIODevice::ReadOnly))
        return std::nullopt;
    Scheduling out;
    for (const QByteArray &line : file.readAll().split('\n')) {
        const qsizetype colon = line.indexOf(':');
        if (colon < 0)
            continue;
        const QByteArray key = line.left(colon).trimmed();
        const qint64 value = line.mid(colon + 1).trimmed().toLongLong();
        if (key == "se.slice")
            out.sliceNs = value;
        else if (key == "policy")
            out.policy = static_cast<int>(value);
        else if (key == "prio")
            out.prio = static_cast<int>(value);
    }
    return out;
}

} // namespace thread_scheduling_test
using namespace thread_scheduling_test;

class TestThreadScheduling : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shortSliceForTheCallerOnly()
    {
        // On a thread of its own, so that the test's main thread keeps its scheduling.
        std::optional<Scheduling> before, after, child;
        bool requested = false;
        std::thread([&] {
            ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 3);
            before = readScheduling();
            requested = ui::requestPromptWakeups();
            after = readScheduling();
            std::thread([&] { child = readScheduling(); }).join();
        }).join();
        if (!before || before->sliceNs < 0)
            QSKIP("the kernel does not report a thread's time slice (/proc/thread-self/sched, se.slice)");
        QVERIFY(requested);
        QVERIFY(after && child);
        QCOMPARE(after->sliceNs, qint64(500'000));
        QCOMPARE(after->policy, 0); // SCHED_OTHER
        QCOMPARE(after->prio, 123); // nice 3 kept
        QCOMPARE(child->sliceNs, before->sliceNs);
        QVERIFY(child->sliceNs != after->sliceNs);
    }
};

QTEST_GUILESS_MAIN(TestThreadScheduling)
#include "tst_thread_scheduling.moc"
