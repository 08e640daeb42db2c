// The ptrace sampler on real targets: the CPU split and wall times it measures, its throttle, and that it
// never leaves a target stopped, whatever the target does meanwhile (exits, crashes, creates and ends
// threads, receives signals).

#include "tests/engine/session/session_test_support.h"

#include "engine/sampler/replay_sampler.h"
#include "engine/sampler/sample_log.h"
#include "engine/session/sampler_factory.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>
#include <unistd.h>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

SessionConfig ptraceLaunch(std::initializer_list<QString> argv, int frequency = 199)
{
    SessionConfig c = launch(argv, frequency);
    c.sampler = "ptrace";
    return c;
}

// For the tests of what the samples say (shares, wall time, states) rather than of the budget (which
// throttlesWithManyThreads and tst_overhead_budget test): a 10% budget keeps a few hundred samples even when
// this VM makes rounds several times dearer than usual (at 2%, one clean CI run got 59 samples in 10 s).
SessionConfig ptraceMeasuring(std::initializer_list<QString> argv, int frequency)
{
    SessionConfig c = ptraceLaunch(argv, frequency);
    c.ptraceMaxOverheadPercent = 10;
    return c;
}

// The state letter of a process from /proc/PID/stat ('t' or 'T' when stopped).
char processState(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return '?';
    const QByteArray stat = f.readAll();
    const int close = stat.lastIndexOf(')');
    return close > 0 && close + 2 < stat.size() ? stat[close + 2] : '?';
}

// The length of every stack copy a sample log holds, by thread.
class StackSizes final : public SampleSink {
public:
    std::vector<size_t> sizes;
    void onSample(const RawSample &sample) override
    {
        if (!sample.sameStack && !sample.regs.empty())
            sizes.push_back(sample.stack.size());
    }
    void onMmap(uint32_t, uint64_t, uint64_t, uint64_t, bool, uint64_t, std::string_view) override {}
    void onComm(uint32_t, uint32_t, std::string_view, bool) override {}
    void onFork(uint32_t, uint32_t, uint32_t) override {}
    void onExit(uint32_t, uint32_t) override {}
    void onLost(uint64_t) override {}
};

bool ptraceAllowed()
{
    return ::geteuid() == 0; // attaching to processes that are not our children needs CAP_SYS_PTRACE here
}

} // namespace

class TestPtraceSampler : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The 60/30/10 split of the engine tests, measured by stopping the thread at intervals instead of perf
    // events. A biased interval (aliasing with the work) or wrong CPU deltas would move the shares.
    void cpuSplit()
    {
        QTemporaryDir dir;
        // Unwinding without frame pointers is the dearest part of a round, so the budget allows fewer rounds:
        // 10 s gives the shares enough samples even when the throttle holds the rate near 10 Hz.
        const Recorded r =
            record(ptraceMeasuring({targetPath("cpu_split_nofp"), QStringLiteral("10")}, 199), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        // The throttle decides the rate (a busy machine makes rounds dearer); enough samples remain either way.
        QVERIFY2(r.summary.samples > 120, qPrintable(QString::number(r.summary.samples)));
        const double hot = share(r.profile, "hot_sixty"), warm = share(r.profile, "warm_thirty"),
                     cool = share(r.profile, "cool_ten");
        const QString shares = QStringLiteral("%1 / %2 / %3").arg(hot).arg(warm).arg(cool);
        // At least 120 samples: binomial noise of at most 4.5 points.
        QVERIFY2(std::abs(hot - 0.60) < 0.11, qPrintable(shares));
        QVERIFY2(std::abs(warm - 0.30) < 0.10, qPrintable(shares));
        QVERIFY2(std::abs(cool - 0.10) < 0.07, qPrintable(shares));
        // Each sample weighs the CPU time since the thread's previous one, so evenly spaced rounds give even
        // weights; bursts of rounds followed by long pauses would hand a few samples most of the profile (and
        // make the shares above a matter of luck). No sample may carry more than 4% of the CPU time.
        int64_t heaviest = 0, total = 0;
        for (const auto &f : r.flushes) {
            const int cpu = f->profile->sampleTypeIndex("cpu-time");
            for (size_t i = 0; i < f->profile->sampleCount(); ++i) {
                heaviest = std::max(heaviest, f->profile->sampleValues(i)[cpu]);
                total += f->profile->sampleValues(i)[cpu];
            }
        }
        QVERIFY2(heaviest * 25 < total, qPrintable(QStringLiteral("%1 of %2 ms").arg(heaviest / 1e6).arg(total / 1e6)));
        VERIFY_COMPLETE(r.profile, "main", "_start");
        QVERIFY(r.profile.sampleTypeIndex("wall-time") == 2);
        QVERIFY2(QString::fromStdString(r.summary.samplerDescription).contains(QLatin1String("Hz effective")),
                 r.summary.samplerDescription.c_str());
    }

    // A stop copies the stack from the stack pointer to the end of the thread's stack mapping, not the whole
    // limit: deep_stack's 40 KiB stack under a 64,000-byte limit unwinds whole to _start, from copies that stay
    // shorter than the limit. The copies are read back from the session's sample log.
    void copiesOnlyTheStackInUse()
    {
        QTemporaryDir dir;
        const std::string log = dir.filePath(QStringLiteral("samples.log")).toStdString();
        SessionConfig config = ptraceMeasuring({targetPath("deep_stack"), QStringLiteral("2")}, 199);
        config.stackBytes = 64000;
        config.learnStackCopy = false; // the limit stays where the test puts it
        config.outputDirectory = dir.filePath(QStringLiteral("out")).toStdString();
        SamplerFactory factory = [log](const SessionConfig &c, int child, std::string &choice) {
            using Opened = Result<std::unique_ptr<Sampler>>;
            auto inner = openSystemSampler(c, child, choice);
            if (!inner)
                return inner;
            auto writer = SampleLogWriter::create(log);
            if (!writer)
                return Opened(writer.error());
            return Opened(std::make_unique<CapturingSampler>(std::move(inner).value(), std::move(writer).value()));
        };
        std::atomic<bool> stop{false};
        RecordSession session(config, factory);
        auto result = session.run(stop, [](const std::shared_ptr<const Flush> &) {});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        auto profile = readPprofFile(result.value().sessionProfilePath);
        QVERIFY(profile.ok());
        VERIFY_COMPLETE(profile.value(), "main", "_start");
        QVERIFY(share(profile.value(), "deep_leaf") > 0.9);

        auto reader = SampleLogReader::open(log);
        QVERIFY2(reader.ok(), reader.ok() ? "" : reader.error().message.c_str());
        StackSizes sizes;
        while (true) {
            auto n = reader.value()->deliver(sizes, 1000);
            QVERIFY2(n.ok(), n.ok() ? "" : n.error().message.c_str());
            if (n.value() == 0)
                break;
        }
        QVERIFY2(sizes.sizes.size() > 20, qPrintable(QString::number(sizes.sizes.size())));
        size_t shorter = 0;
        size_t shallow = 0;
        for (size_t size : sizes.sizes) {
            QVERIFY2(size <= 64000, qPrintable(QString::number(size)));
            shallow += size < size_t{40} * 1024 ? 1 : 0; // a stop before the recursion, or in the exit after it
            shorter += size < 64000 ? 1 : 0;
        }
        // Every stop in the recursion copied the whole 40 KiB stack.
        QVERIFY2(shallow <= 2,
                 qPrintable(QStringLiteral("%1 of %2 copies under 40 KiB").arg(shallow).arg(sizes.sizes.size())));
        // The first stop of a thread copies the whole limit: its stack mapping is looked up after it.
        QVERIFY2(
            shorter + 1 >= sizes.sizes.size(),
            qPrintable(QStringLiteral("%1 of %2 copies shorter than the limit").arg(shorter).arg(sizes.sizes.size())));
    }

    // Wall time by construction: the sleeper's wall time spans the run with almost no CPU, and the lock
    // waiter is found waiting 80% of the time.
    void wallTimeAndStates()
    {
        QTemporaryDir dir;
        // Long enough for the throttled rate to give the lock-waiter's share a few hundred samples.
        constexpr double kSeconds = 6;
        const Recorded r = record(ptraceMeasuring({targetPath("waiter"), QString::number(kSeconds)}, 99), dir.path());
        const Profile &p = r.profile;
        const ThreadIndex threads(p);
        const FrameTable frames(p);
        const int cpu = p.sampleTypeIndex("cpu-time"), wall = p.sampleTypeIndex("wall-time");
        const StringId stateKey = p.findString("thread state");
        std::map<std::string, int64_t> wallOf, cpuOf, lockWait, sleeping;
        std::vector<uint32_t> path;
        for (size_t i = 0; i < p.sampleCount(); ++i) {
            const std::string &name = threads.threads()[threads.threadOf(i)].name;
            const auto v = p.sampleValues(i);
            wallOf[name] += v[wall];
            cpuOf[name] += v[cpu];
            path.clear();
            frames.expandRootFirst(p.sample(i).locations, path);
            for (uint32_t f : path) {
                if (frames.frame(f).name.find("lll_lock_wait") != std::string::npos) {
                    lockWait[name] += v[wall];
                    break;
                }
            }
            for (const Label &l : p.sampleLabels(i)) {
                if (l.key == stateKey && p.str(l.str) == "sleeping")
                    sleeping[name] += v[wall];
            }
        }
        const double sleeperSeconds = wallOf["sleeper"] / 1e9;
        QVERIFY2(sleeperSeconds > kSeconds * 0.87 && sleeperSeconds < kSeconds * 1.1,
                 qPrintable(QString::number(sleeperSeconds)));
        QVERIFY(cpuOf["sleeper"] < wallOf["sleeper"] / 20);
        QVERIFY(sleeping["sleeper"] > wallOf["sleeper"] * 9 / 10);
        const double waitShare = static_cast<double>(lockWait["lock-waiter"]) / wallOf["lock-waiter"];
        QVERIFY2(std::abs(waitShare - 0.8) < 0.12, qPrintable(QString::number(waitShare)));
    }

    // With 64 busy threads a round costs far more than 2% of a 5 ms interval: the sampler must stretch its
    // interval (a lower effective rate) instead of eating the target's CPU.
    void throttlesWithManyThreads()
    {
        QTemporaryDir dir;
        SessionConfig c = ptraceLaunch({targetPath("many_threads"), QStringLiteral("64"), QStringLiteral("3")}, 199);
        const Recorded r = record(c, dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        const QString description = QString::fromStdString(r.summary.samplerDescription);
        const double effective = description.section(QLatin1Char('('), 1).section(QLatin1Char(' '), 0, 0).toDouble();
        qInfo("64 busy threads: %s", qPrintable(description));
        QVERIFY2(effective > 0.5 && effective < 199, qPrintable(description));
        QVERIFY(share(r.profile, "busy_worker") > 0.9);
    }

    // Threads that come and go all the time: some vanish between listing and stopping; the session goes on
    // and the target finishes normally.
    void threadsComeAndGo()
    {
        QTemporaryDir dir;
        const Recorded r = record(ptraceLaunch({targetPath("many_threads"), QStringLiteral("4"), QStringLiteral("2"),
                                                QStringLiteral("churn")}),
                                  dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY(r.summary.samples > 50);
    }

    // A target that replaces itself mid-session (a shell that execs the program after a pause): the sampler
    // follows it across the exec, and the new program's CPU split is measured. If the exec were missed, the
    // session would see no more samples, or keep the shell's stopped thread and never end.
    void execMidSession()
    {
        QTemporaryDir dir;
        const QString script = QStringLiteral("sleep 0.3; exec '%1' 2").arg(targetPath("cpu_split"));
        const Recorded r =
            record(ptraceMeasuring({QStringLiteral("/bin/sh"), QStringLiteral("-c"), script}, 199), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY2(r.summary.samples > 50, qPrintable(QString::number(r.summary.samples)));
        QVERIFY2(share(r.profile, "hot_sixty") > 0.4, qPrintable(QString::number(share(r.profile, "hot_sixty"))));
    }

    // Signals reach the target through the tracer: abort() still kills it with SIGABRT, and its samples
    // are kept.
    void targetCrashes()
    {
        QTemporaryDir dir;
        const Recorded r =
            record(ptraceLaunch({targetPath("crasher"), QStringLiteral("1"), QStringLiteral("abort")}), dir.path());
        QCOMPARE(r.summary.exitStatus, 128 + SIGABRT);
        QVERIFY(share(r.profile, "before_crash") > 0.8);
    }

    // An attached target keeps running after the session, not stopped and not traced; a signal sent to it
    // during the session is delivered (SIGTERM ends it with that status).
    void attachDetachAndSignals()
    {
        if (!ptraceAllowed()) {
            if (inCi())
                QFAIL("attaching with ptrace needs root here, which CI has");
            QSKIP("attaching with ptrace to a process that is not our child needs root (ptrace_scope)");
        }
        QProcess target;
        target.start(targetPath("named_threads"), {QStringLiteral("4")});
        QVERIFY(target.waitForStarted());
        QTest::qWait(200);
        SessionConfig c;
        c.pid = static_cast<int>(target.processId());
        c.sampler = "ptrace";
        c.frequency = 199;
        c.durationNs = 1'000'000'000;
        QTemporaryDir dir;
        const Recorded r = record(c, dir.path());
        QVERIFY(share(r.profile, "alpha_work") > 0.2);
        QCOMPARE(target.state(), QProcess::Running);
        const char state = processState(target.processId());
        QVERIFY2(state == 'R' || state == 'S', &state);
        QFile status(QStringLiteral("/proc/%1/status").arg(target.processId()));
        QVERIFY(status.open(QIODevice::ReadOnly));
        QVERIFY2(status.readAll().contains("TracerPid:\t0"), "the target is still traced after the session");
        QVERIFY(target.waitForFinished(10000));
        QCOMPARE(target.exitCode(), 0);

        // A signal during an attached session is passed on at once.
        QProcess victim;
        victim.start(targetPath("cpu_split"), {QStringLiteral("30")});
        QVERIFY(victim.waitForStarted());
        SessionConfig v;
        v.pid = static_cast<int>(victim.processId());
        v.sampler = "ptrace";
        std::thread killer([pid = victim.processId()] {
            std::this_thread::sleep_for(std::chrono::milliseconds(800));
            ::kill(static_cast<pid_t>(pid), SIGTERM);
        });
        QTemporaryDir dir2;
        const Recorded killed = record(v, dir2.path());
        killer.join();
        QVERIFY(killed.summary.targetExited);
        QVERIFY(victim.waitForFinished(10000));
        QCOMPARE(victim.exitStatus(), QProcess::CrashExit);
    }
};

QTEST_GUILESS_MAIN(TestPtraceSampler)
#include "tst_ptrace_sampler.moc"
