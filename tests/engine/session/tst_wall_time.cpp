// Wall time and off-CPU stacks: real threads that sleep, hold a lock or wait for it, sampled by the perf
// backend at CPU ticks and context switches; their wall and CPU time are known by construction.

#include "tests/engine/session/session_test_support.h"

#include "engine/symbols/kernel_symbols.h"

#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

struct ThreadTimes {
    int64_t cpu = 0;
    int64_t wall = 0;
    std::map<std::string, int64_t> wallThrough; // wall time of the samples passing through each function
    std::map<std::string, int64_t> wallByState;
};

std::map<std::string, ThreadTimes> timesByThread(const Profile &p)
{
    const FrameTable frames(p);
    const ThreadIndex threads(p);
    const int cpu = p.sampleTypeIndex("cpu-time");
    const int wall = p.sampleTypeIndex("wall-time");
    const StringId stateKey = p.findString("thread state");
    std::map<std::string, ThreadTimes> out;
    std::vector<uint32_t> path;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        const uint32_t t = threads.threadOf(i);
        if (t == kNoIndex)
            continue;
        ThreadTimes &times = out[threads.threads()[t].name];
        const auto values = p.sampleValues(i);
        times.cpu += values[cpu];
        times.wall += values[wall];
        path.clear();
        frames.expandRootFirst(p.sample(i).locations, path);
        std::set<std::string> seen;
        for (uint32_t f : path) {
            if (seen.insert(frames.frame(f).name).second)
                times.wallThrough[frames.frame(f).name] += values[wall];
        }
        for (const Label &l : p.sampleLabels(i)) {
            if (l.key == stateKey)
                times.wallByState[p.str(l.str)] += values[wall];
        }
    }
    return out;
}

} // namespace

class TestWallTime : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { REQUIRE_PERF_EVENTS(); }

    // The target runs 3 s: "sleeper" only sleeps, "lock-waiter" waits for a mutex "lock-holder" keeps 40 ms of every
    // 50 ms. If wall time were wrong, the sleeper would not span the session, or the lock wait would not
    // show its 80% share in the waiter's wall time.
    void sleepAndLockWait()
    {
        QTemporaryDir dir;
        SessionConfig c = launch({targetPath("waiter"), QStringLiteral("3")}, 199);
        c.wallTime = true;
        const Recorded r = record(c, dir.path());
        QVERIFY2(r.summary.wallTime, r.summary.wallTimeProblem.c_str());
        QVERIFY(r.profile.sampleTypeIndex("wall-time") == 2);
        const auto times = timesByThread(r.profile);

        const ThreadTimes &sleeper = times.at("sleeper");
        const double seconds = static_cast<double>(sleeper.wall) / 1e9;
        QVERIFY2(seconds > 2.7 && seconds < 3.3, qPrintable(QString::number(seconds)));
        QVERIFY2(sleeper.cpu < sleeper.wall / 20, qPrintable(QString::number(sleeper.cpu)));
        QVERIFY(sleeper.wallThrough.at("sleep_forever") >= sleeper.wall * 95 / 100);
        QVERIFY(sleeper.wallByState.at("sleeping") >= sleeper.wall * 90 / 100);

        const ThreadTimes &waiter = times.at("lock-waiter");
        // glibc's lock wait is __lll_lock_wait (__GI___lll_lock_wait with glibc's debug info installed).
        int64_t lockWait = 0;
        for (const auto &[name, wall] : waiter.wallThrough) {
            if (name.find("lll_lock_wait") != std::string::npos)
                lockWait = std::max(lockWait, wall);
        }
        const double waitShare = static_cast<double>(lockWait) / static_cast<double>(waiter.wall);
        QString detail = QString::number(waitShare);
        for (const auto &[name, wall] : waiter.wallThrough)
            detail += QStringLiteral(", %1 %2").arg(QString::fromStdString(name)).arg(wall / 1e9);
        for (const auto &[state, wall] : waiter.wallByState)
            detail += QStringLiteral(", [%1] %2").arg(QString::fromStdString(state)).arg(wall / 1e9);
        QVERIFY2(std::abs(waitShare - 0.8) < 0.1, qPrintable(detail));
        QVERIFY(waiter.wallThrough.at("wait_for_lock") >= waiter.wall * 95 / 100);

        const ThreadTimes &holder = times.at("lock-holder");
        QVERIFY(holder.wallThrough.at("hold_lock") >= holder.wall * 95 / 100);
        QVERIFY2(holder.wall > 2'700'000'000, qPrintable(QString::number(holder.wall)));

        // CPU numbers are unchanged by wall time: cpu-samples still counts only CPU ticks.
        QCOMPARE(static_cast<uint64_t>(r.profile.totals()[0]), r.summary.samples);

        // Where the kernel's addresses can be read, an off-CPU stack goes on into the kernel: the scheduler and
        // the system call the thread waits in, from the context switch's own callchain.
        if (const std::string problem = KernelSymbols::problem(); !problem.empty()) {
            if (qEnvironmentVariable("CI") == QLatin1String("true"))
                QFAIL(problem.c_str());
            qInfo("kernel frames of off-CPU stacks not checked: %s", problem.c_str());
            return;
        }
        const auto through = [](const ThreadTimes &t, const char *name) {
            auto it = t.wallThrough.find(name);
            return it == t.wallThrough.end() ? 0.0 : static_cast<double>(it->second) / static_cast<double>(t.wall);
        };
        QString kernelDetail;
        for (const auto &[name, wall] : sleeper.wallThrough)
            kernelDetail += QStringLiteral("%1 %2, ").arg(QString::fromStdString(name)).arg(wall / 1e9);
        QVERIFY2(through(sleeper, "schedule") > 0.9, qPrintable(kernelDetail));
        QVERIFY2(through(sleeper, "do_syscall_64") > 0.9, qPrintable(kernelDetail));
        QVERIFY2(through(waiter, "schedule") > 0.6, qPrintable(detail)); // its lock wait: about 80%
    }

    // Wall time is on by default (as Datadog records it); turned off, profiles keep the two CPU sample types only.
    void onByDefaultOffWhenAsked()
    {
        QTemporaryDir dir;
        // A CPU-bound target: a mostly sleeping one may give no CPU sample at all, and so no profile.
        SessionConfig c = launch({targetPath("cpu_split"), QStringLiteral("0.5")}, 99);
        QVERIFY(c.wallTime);
        c.wallTime = false;
        const Recorded r = record(c, dir.path());
        QVERIFY(!r.summary.wallTime);
        QCOMPARE(r.profile.sampleTypes().size(), size_t(2));
        QVERIFY(r.profile.findString("thread state") != kNoIndex);
    }
};

QTEST_GUILESS_MAIN(TestWallTime)
#include "tst_wall_time.moc"
