// The GUI thread's request for prompt wakeups: the calling thread gets the short slice, its nice value stays,
// and a thread it starts afterwards gets the kernel's default slice back (the request is not inherited by
// workers, the engine thread or a launched program).

#include "ui/views/thread_scheduling.h"

#include <QtTest>

#include <cstdint>
#include <thread>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace emberline;

namespace {

struct Attr {
    uint32_t size;
    uint32_t policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime;
    uint64_t deadline;
    uint64_t period;
    uint32_t utilMin;
    uint32_t utilMax;
};

bool readAttr(Attr &attr)
{
    attr = Attr{};
    attr.size = sizeof(attr);
    return ::syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) == 0;
}

} // namespace

class TestThreadScheduling : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shortSliceForTheCallerOnly()
    {
        // Run on a thread of its own so the test process's main thread keeps its scheduling.
        Attr before{}, after{}, child{};
        bool readBefore = false, requested = false, readAfter = false, readChild = false;
        std::thread([&] {
            readBefore = readAttr(before);
            ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 3);
            requested = ui::requestPromptWakeups();
            readAfter = readAttr(after);
            std::thread([&] { readChild = readAttr(child); }).join();
        }).join();
        QVERIFY(readBefore);
        if (before.runtime == 0)
            QSKIP("this kernel reports no time slice for normal threads (custom slices came with Linux 6.12)");
        QVERIFY(requested);
        QVERIFY(readAfter);
        QCOMPARE(after.runtime, uint64_t(500'000));
        QCOMPARE(after.nice, 3);
        QCOMPARE(after.policy, uint32_t(0)); // SCHED_OTHER
        QVERIFY(readChild);
        QCOMPARE(child.runtime, before.runtime);
    }
};

QTEST_GUILESS_MAIN(TestThreadScheduling)
#include "tst_thread_scheduling.moc"
