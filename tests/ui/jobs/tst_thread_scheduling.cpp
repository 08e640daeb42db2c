// The GUI thread's request for prompt wakeups: the calling thread gets the short slice, its nice value stays,
// and a thread it starts afterwards gets the kernel's default slice back (the request is not inherited by
// workers, the engine thread or a launched program). The GUI thread's raise: nice -10 where allowed, not inherited
// either, and nothing changed where refused. The kernel's view is read from /proc/thread-self/sched.

#include "ui/jobs/thread_scheduling.h"

#include <QFile>
#include <QTest>

#include <optional>
#include <thread>

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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

// Takes CAP_SYS_NICE out of the calling thread's effective capabilities (a thread's own: the others keep theirs).
// False where it could not.
bool dropNiceCapability()
{
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &header, data) != 0)
        return false;
    data[CAP_SYS_NICE / 32].effective &= ~(1U << (CAP_SYS_NICE % 32));
    return ::syscall(SYS_capset, &header, data) == 0;
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

    // Where the system allows it, the GUI thread is raised to nice -10 and a thread it starts afterwards is not; where
    // it does not, nothing changes and the call says so.
    void raisedForTheCallerOnly()
    {
        std::optional<Scheduling> before, after, child;
        bool raised = false;
        std::thread([&] {
            ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 3);
            before = readScheduling();
            raised = ui::raiseGuiThread();
            after = readScheduling();
            std::thread([&] { child = readScheduling(); }).join();
        }).join();
        QVERIFY(before && after && child);
        QCOMPARE(before->prio, 123);
        if (!raised) {
            if (::geteuid() == 0)
                QFAIL("root may raise a thread's priority, yet the GUI thread was not raised");
            QCOMPARE(after->prio, 123);
            QSKIP("not privileged to raise a thread's priority: the refusal left it as it was");
        }
        QCOMPARE(after->prio, 110); // nice -10
        QCOMPARE(after->policy, 0);
        QCOMPARE(child->prio, 120); // the raise is not inherited: nice 0
    }

    void refusedRaiseChangesNothing()
    {
        std::optional<Scheduling> after;
        bool dropped = false, raised = true;
        std::thread([&] {
            ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 3);
            dropped = ::geteuid() != 0 || dropNiceCapability();
            raised = ui::raiseGuiThread();
            after = readScheduling();
        }).join();
        QVERIFY(dropped);
        struct rlimit limit {};
        QVERIFY(::getrlimit(RLIMIT_NICE, &limit) == 0);
        if (limit.rlim_cur >= 30) // nice -10 is 20 - 30
            QSKIP("RLIMIT_NICE lets any thread of this process lower its nice value: no refusal to test");
        QVERIFY(!raised);
        QVERIFY(after);
        QCOMPARE(after->prio, 123);
    }
};

QTEST_GUILESS_MAIN(TestThreadScheduling)
#include "tst_thread_scheduling.moc"
