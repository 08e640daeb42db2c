// The perf sampler on real targets, where the kernel itself gets things wrong or hides them: samples of
// unrelated processes delivered to the target's events, and kernel stacks that only the kernel can unwind.

#include "tests/engine/session/session_test_support.h"

#include "engine/common/clock.h"
#include "engine/common/strings.h"
#include "engine/process/launcher.h"
#include "engine/sampler/perf_event_sets.h"
#include "engine/sampler/perf_sampler.h"
#include "engine/symbols/kernel_symbols.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include <sys/resource.h>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

// A shell that forks and execs short programs as fast as it can, as a busy build or a login script does.
class ForkingNeighbour {
public:
    ForkingNeighbour()
    {
        m_process.start(QStringLiteral("/bin/sh"),
                        {QStringLiteral("-c"), QStringLiteral("while :; do /bin/true; readlink -f /proc/self/exe "
                                                              ">/dev/null; basename /a/b >/dev/null; done")});
        m_process.waitForStarted();
    }
    ~ForkingNeighbour()
    {
        m_process.kill();
        m_process.waitForFinished();
    }
    ForkingNeighbour(const ForkingNeighbour &) = delete;
    ForkingNeighbour &operator=(const ForkingNeighbour &) = delete;
    bool running() const { return m_process.state() == QProcess::Running; }

private:
    QProcess m_process;
};

std::map<std::string, int64_t> labelCounts(const Profile &p, const char *key)
{
    std::map<std::string, int64_t> out;
    const StringId k = p.findString(key);
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        for (const Label &l : p.sampleLabels(i)) {
            if (l.key == k)
                out[l.str ? p.str(l.str) : std::to_string(l.num)] += p.sampleValues(i)[0];
        }
    }
    return out;
}

QString describe(const std::map<std::string, int64_t> &counts)
{
    QStringList parts;
    for (const auto &[name, n] : counts)
        parts << QString::fromStdString(name) + QLatin1Char('=') + QString::number(n);
    return parts.join(QLatin1String(", "));
}

// Keeps what the stack-copy test needs of each sample.
class SampleTimes final : public SampleSink {
public:
    struct Seen {
        uint32_t tid;
        uint64_t timeNs;
        uint32_t stackLimit;
        uint64_t period;
    };
    std::vector<Seen> samples;
    void onSample(const RawSample &s) override
    {
        if (s.kind == RawSample::Kind::Cpu)
            samples.push_back({s.tid, s.timeNs, s.stackLimit, s.period});
    }
    void onMmap(uint32_t, uint64_t, uint64_t, uint64_t, bool, uint64_t, std::string_view) override {}
    void onComm(uint32_t, uint32_t, std::string_view, bool) override {}
    void onFork(uint32_t, uint32_t, uint32_t) override {}
    void onExit(uint32_t, uint32_t) override {}
    void onLost(uint64_t count) override { lost += count; }
    uint64_t lost = 0;
};

} // namespace

class TestPerfSampler : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { REQUIRE_PERF_EVENTS(); }

    // A target that forks once (parent and child both busy) is recorded while a neighbour shell forks and
    // execs true, readlink and basename. A kernel may deliver some of the neighbour's cpu-clock samples to the
    // target's events; none may reach the profile, and the forked child's must. If this fails, a profile shows
    // a stranger's time as the program's (or loses the program's own children).
    void onlyTheFollowedTree()
    {
        ForkingNeighbour neighbour;
        QVERIFY(neighbour.running());
        QTemporaryDir dir;
        SessionConfig c = launch({targetPath("forker"), QStringLiteral("2")}, 999);
        c.wallTime = true; // context-switch samples are filtered the same way
        const Recorded r = record(c, dir.path());
        QVERIFY(neighbour.running());

        const auto threads = labelCounts(r.profile, "thread name");
        const auto pids = labelCounts(r.profile, "process_id");
        QVERIFY2(threads.size() == 1 && threads.count("forker"), qPrintable(describe(threads)));
        QVERIFY2(pids.size() == 2, qPrintable(describe(pids))); // the target and its forked child, no stranger
        QVERIFY(share(r.profile, "parent_work") > 0.2);
        QVERIFY(share(r.profile, "child_work") > 0.2);
        const std::set<std::string> strangers{"sh", "dash", "bash", "true", "readlink", "basename"};
        for (const Mapping &m : r.profile.mappings()) {
            const std::string file = baseName(r.profile.str(m.filename));
            QVERIFY2(!strangers.count(file), file.c_str());
        }
        const FrameTable frames(r.profile);
        for (const char *name : {"readlink", "main_loop" /* bash's */, "execute_command"})
            QVERIFY2(frames.findByName(name).empty(), name);
        qInfo("%llu sample(s) of other processes dropped", static_cast<unsigned long long>(r.summary.foreignDropped));
    }

    // The event a session holds while the program's agent opens its own (holdPerfScheduling): a perf event, bound to
    // the calling thread, that never counts. If this fails, the session holds nothing (an attached program's thread
    // then stands stopped while the kernel turns its scheduler hooks on), or holds an event that samples.
    void heldEventNeverCounts()
    {
        const int fd = holdPerfScheduling();
        QVERIFY2(fd >= 0, std::strerror(errno));
        char link[64] = {};
        const QByteArray path = "/proc/self/fd/" + QByteArray::number(fd);
        QVERIFY(readlink(path.constData(), link, sizeof link - 1) > 0);
        QCOMPARE(QByteArray(link), QByteArray("anon_inode:[perf_event]"));
        volatile uint64_t sum = 0;
        for (uint64_t i = 0; i < 10'000'000; ++i) // work and a switch on the thread it is bound to
            sum = sum + i;
        usleep(1000);
        uint64_t count = ~uint64_t(0);
        QCOMPARE(read(fd, &count, sizeof count), ssize_t(sizeof count));
        close(fd);
        QCOMPARE(count, uint64_t(0));
    }

    // 64 busy threads at 999 Hz on a machine with far fewer cores: every thread is sampled, the kernel reports no
    // lost record, and the samples account for the CPU the target used (its own rusage, read after it exits). If
    // this fails, the sampling thread does not keep up with many threads, or the ring buffers overflow.
    void manyThreadsLoseNothing()
    {
        QTemporaryDir dir;
        SessionConfig c = launch({targetPath("many_threads"), QStringLiteral("64"), QStringLiteral("3")}, 999);
        c.wallTime = false; // cpu-clock samples only: one per millisecond of a thread's CPU
        rusage before{};
        getrusage(RUSAGE_CHILDREN, &before); // the session reaps the target it launched: its CPU lands here
        const Recorded r = record(c, dir.path());
        rusage after{};
        getrusage(RUSAGE_CHILDREN, &after);
        QVERIFY(r.summary.targetExited);
        QCOMPARE(r.summary.lost, uint64_t(0));
        const auto seconds = [](const timeval &t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
        const double targetS =
            seconds(after.ru_utime) + seconds(after.ru_stime) - seconds(before.ru_utime) - seconds(before.ru_stime);
        const auto tids = labelCounts(r.profile, "thread id");
        QVERIFY2(tids.size() >= 65, qPrintable(QString::number(tids.size()))); // the main thread and 64 workers
        // Each sample stands for about 1/999 s of a thread's CPU: the samples must account for at least 90% of the
        // CPU time the target used.
        const double sampledS = static_cast<double>(r.summary.samples) / 999.0;
        qInfo("%llu samples (%.2f s of CPU) over %zu threads; the target used %.2f s of CPU; profiler CPU %.2f s",
              static_cast<unsigned long long>(r.summary.samples), sampledS, tids.size(), targetS,
              static_cast<double>(r.summary.profilerCpuNs) / 1e9);
        QVERIFY(targetS > 1.0);
        QVERIFY2(sampledS >= 0.9 * targetS,
                 qPrintable(QStringLiteral("%1 s sampled of %2 s").arg(sampledS).arg(targetS)));
        QVERIFY(share(r.profile, "busy_worker") > 0.9);
    }

    // A target that lives in write() and getppid(): its kernel time is named by the kernel's own functions
    // under a [kernel.kallsyms] mapping, below the user frames that made the calls. If this fails, kernel time
    // is one opaque [kernel] frame, or kernel frames sit in the wrong place of the stack.
    // Four busy threads sampled at 999 Hz while the stack copy changes twice (32 KiB, 8 KiB, 16 KiB): each
    // change opens a new set of events and retires the old one. Every sample before a change's moment has the old
    // copy and every sample after it the new one; no busy thread goes unsampled across a change; the samples add
    // up to the CPU the target used, no more (none counted twice) and no less. If this fails, a learned stack copy
    // loses or doubles samples whenever it changes.
    void stackCopyChangesLoseNothing()
    {
        LaunchOptions options;
        options.argv = {targetPath("many_threads").toStdString(), "4", "3", "busy"};
        auto child = LaunchedProcess::spawn(options);
        QVERIFY(child);
        PerfSamplerOptions o;
        o.frequency = 999;
        o.wallTime = false;
        auto opened = PerfSampler::openForLaunch(child.value().pid(), o);
        QVERIFY2(opened, opened ? "" : opened.error().message.c_str());
        PerfSampler &sampler = *opened.value();
        rusage before{};
        getrusage(RUSAGE_CHILDREN, &before);
        QVERIFY(child.value().release());
        SampleTimes sink;
        std::vector<std::pair<uint64_t, uint32_t>> changes; // when, to what
        const int64_t start = clockNs(CLOCK_MONOTONIC);
        int status = 0;
        while (!child.value().poll(status)) {
            sampler.wait(50);
            sampler.drain(sink);
            const int64_t elapsed = clockNs(CLOCK_MONOTONIC) - start;
            const uint32_t next = changes.empty() && elapsed > 1'000'000'000       ? 8192
                                  : changes.size() == 1 && elapsed > 2'000'000'000 ? 16384
                                                                                   : 0;
            if (next != 0) {
                QVERIFY2(sampler.setStackCopyBytes(next), sampler.stackCopyProblem().c_str());
                QCOMPARE(sampler.stackCopyBytes(), next);
                changes.emplace_back(sampler.stackCopyChangedAtNs(), next);
            }
        }
        sampler.drain(sink);
        rusage after{};
        getrusage(RUSAGE_CHILDREN, &after);
        QCOMPARE(changes.size(), size_t(2));
        QCOMPARE(sink.lost, uint64_t(0));
        QVERIFY(sampler.eventCount() >=
                size_t{5} * 2); // a clock event per thread and CPU (at least the 5 threads there)

        std::map<uint32_t, std::vector<uint64_t>> times;
        uint64_t sampledNs = 0;
        for (const auto &seen : sink.samples) {
            const uint32_t expected = seen.timeNs < changes[0].first   ? 32768
                                      : seen.timeNs < changes[1].first ? 8192
                                                                       : 16384;
            QVERIFY2(seen.stackLimit == expected || seen.stackLimit == 0 /* a kernel thread's sample */,
                     qPrintable(QStringLiteral("%1 bytes at %2").arg(seen.stackLimit).arg(seen.timeNs)));
            times[seen.tid].push_back(seen.timeNs);
            sampledNs += seen.period;
        }
        // Each busy worker was sampled across both changes without a hole.
        int busy = 0;
        for (auto &[tid, ts] : times) {
            if (ts.size() < 500)
                continue; // the main thread, which only waits
            ++busy;
            std::sort(ts.begin(), ts.end());
            for (const auto &[at, bytes] : changes) {
                const auto after = std::lower_bound(ts.begin(), ts.end(), at);
                QVERIFY(after != ts.begin() && after != ts.end());
                const uint64_t gap = *after - *(after - 1);
                QVERIFY2(gap < 100'000'000, qPrintable(QStringLiteral("thread %1: %2 ms without a sample at the "
                                                                      "change to %3 bytes")
                                                           .arg(tid)
                                                           .arg(gap / 1e6)
                                                           .arg(bytes)));
            }
        }
        QCOMPARE(busy, 4);
        const auto seconds = [](const timeval &t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
        const double targetS =
            seconds(after.ru_utime) + seconds(after.ru_stime) - seconds(before.ru_utime) - seconds(before.ru_stime);
        const double sampledS = static_cast<double>(sampledNs) / 1e9;
        qInfo("%zu samples, %.3f s of CPU sampled; the target used %.3f s", sink.samples.size(), sampledS, targetS);
        QVERIFY2(sampledS > 0.9 * targetS && sampledS < 1.05 * targetS,
                 qPrintable(QStringLiteral("sampled %1 s of %2 s").arg(sampledS).arg(targetS)));
    }

    void kernelFramesNamed()
    {
        if (const std::string problem = KernelSymbols::problem(); !problem.empty()) {
            if (inCi())
                QFAIL(problem.c_str());
            QSKIP(problem.c_str());
        }
        QTemporaryDir dir;
        SessionConfig c = launch({targetPath("syscalls"), QStringLiteral("1.5")}, 999);
        c.wallTime = false;
        const Recorded r = record(c, dir.path());
        QVERIFY2(r.summary.kernelFramesProblem.empty(), r.summary.kernelFramesProblem.c_str());
        QVERIFY2(r.summary.samplerDescription.find("kernel frames named") != std::string::npos,
                 r.summary.samplerDescription.c_str());

        bool kernelMapping = false;
        for (const Mapping &m : r.profile.mappings())
            kernelMapping = kernelMapping || r.profile.str(m.filename) == kKernelMappingName;
        QVERIFY(kernelMapping);
        QCOMPARE(share(r.profile, "[kernel]"), 0.0);
        // The system-call entry and each call's own function: the names perf shows for the same run.
        const double entry = share(r.profile, "do_syscall_64");
        const double write = share(r.profile, "ksys_write");
        const double getppid = share(r.profile, "__x64_sys_getppid");
        QVERIFY2(entry > 0.3, qPrintable(QString::number(entry)));
        QVERIFY2(write > 0.02, qPrintable(QString::number(write)));
        QVERIFY2(getppid > 0.003, qPrintable(QString::number(getppid)));

        // Leaf first: kernel frames, then the user frames that called into the kernel, down to main.
        const FrameTable frames(r.profile);
        std::vector<uint32_t> path;
        int checked = 0;
        for (size_t i = 0; i < r.profile.sampleCount(); ++i) {
            path.clear();
            frames.expandRootFirst(r.profile.sample(i).locations, path);
            auto at = [&](const char *name) {
                for (size_t k = 0; k < path.size(); ++k) {
                    if (frames.frame(path[k]).name == name)
                        return static_cast<int>(k);
                }
                return -1;
            };
            const int kernel = at("ksys_write"), user = at("write_loop"), root = at("main");
            if (kernel < 0)
                continue;
            QVERIFY2(user >= 0 && root >= 0 && root < user && user < kernel,
                     qPrintable(incompleteStacks(r.profile, {"no such root"})));
            for (size_t k = static_cast<size_t>(user) + 1; k < path.size(); ++k) {
                const Frame &f = frames.frame(path[k]);
                if (f.module == kKernelMappingName)
                    ++checked;
            }
        }
        QVERIFY(checked > 0);
    }

    // Kernel symbols are read from a file: a kallsyms that shows every address as 0 (kptr_restrict) is refused
    // with the reason; a readable one finds each address's function. If this fails, kernel frames get wrong
    // names, or an unreadable kallsyms is not explained.
    void kallsymsTable()
    {
        QTemporaryDir dir;
        const QString hidden = dir.filePath(QStringLiteral("hidden"));
        QFile h(hidden);
        QVERIFY(h.open(QIODevice::WriteOnly));
        h.write("0000000000000000 T _stext\n0000000000000000 t do_one\n");
        h.close();
        QVERIFY(KernelSymbols::problem(hidden.toStdString()).find("kptr_restrict") != std::string::npos);
        QVERIFY(!KernelSymbols::load(hidden.toStdString()).ok());
        QVERIFY(KernelSymbols::problem(dir.filePath(QStringLiteral("missing")).toStdString()).find("cannot read") !=
                std::string::npos);

        const QString shown = dir.filePath(QStringLiteral("shown"));
        QFile s(shown);
        QVERIFY(s.open(QIODevice::WriteOnly));
        s.write("ffffffff81000200 T second\nffffffff81000000 T first\nffffffff81000100 D data_not_code\n"
                "garbage line\nffffffffc0000000 t mod_fn\t[ext4]\n");
        s.close();
        QVERIFY(KernelSymbols::problem(shown.toStdString()).empty());
        auto table = KernelSymbols::load(shown.toStdString());
        QVERIFY(table.ok());
        QCOMPARE(table->size(), size_t(3));
        QCOMPARE(table->lookup(0xffffffff81000150).name, std::string_view("first"));
        QCOMPARE(table->lookup(0xffffffff81000150).offset, uint64_t(0x150));
        QCOMPARE(table->lookup(0xffffffff81000200).name, std::string_view("second"));
        QCOMPARE(table->lookup(0xffffffffc0000010).name, std::string_view("mod_fn"));
        QVERIFY(table->lookup(0x1000).name.empty());
    }
};

QTEST_GUILESS_MAIN(TestPerfSampler)
#include "tst_perf_sampler.moc"
