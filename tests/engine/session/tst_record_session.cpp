// The sampling engine end to end: real target programs from tests/targets, sampled by the real perf sampler,
// unwound, recorded, symbolized and exported; the numbers are checked against what the targets do by
// construction.

#include "tests/engine/session/session_test_support.h"

#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/session/record_session.h"
#include "engine/symbols/symbolizer.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>
#include <sys/resource.h>

#include <set>

using namespace emberline::engine;

using namespace emberline::test;

class TestRecordSession : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { REQUIRE_PERF_EVENTS(); }

    void cpuSplit_data()
    {
        QTest::addColumn<QString>("target");
        QTest::newRow("frame pointers, -O1") << targetPath("cpu_split");
        QTest::newRow("no frame pointers, -O2") << targetPath("cpu_split_nofp");
    }

    // The target gives 60/30/10% of identical work chunks to three functions at random. If the shares were
    // off, the sampler would be biased (or unwinding would lose the callers); if stacks were incomplete,
    // DWARF unwinding through -O2 code without frame pointers or through 48 recursive frames is broken.
    void cpuSplit()
    {
        QFETCH(QString, target);
        QTemporaryDir dir;
        const Recorded r = record(launch({target, QStringLiteral("3")}), dir.path());
        QVERIFY2(r.summary.samples > 1500, qPrintable(QString::number(r.summary.samples)));
        QCOMPARE(r.summary.exitStatus, 0);
        const double hot = share(r.profile, "hot_sixty");
        const double warm = share(r.profile, "warm_thirty");
        const double cool = share(r.profile, "cool_ten");
        const QString shares = QStringLiteral("%1 / %2 / %3").arg(hot).arg(warm).arg(cool);
        // Binomial noise over ~3000 samples is under 1 point; 5 points leaves room for a busy machine.
        QVERIFY2(std::abs(hot - 0.60) < 0.05, qPrintable(shares));
        QVERIFY2(std::abs(warm - 0.30) < 0.05, qPrintable(shares));
        QVERIFY2(std::abs(cool - 0.10) < 0.04, qPrintable(shares));
        QVERIFY2(share(r.profile, "recurse_deep") > 0.2, qPrintable(shares));
        VERIFY_COMPLETE(r.profile, "main");
        QVERIFY(r.summary.incomplete * 100 <= r.summary.samples);
    }

    // The session raises its own thread above the target's where it may (root), and a program it launches must
    // not keep that: it runs at the nice value the profiler had. If this fails, a launched program runs raised (and
    // takes the machine from everything else) whenever the profiler is privileged.
    void launchedProgramKeepsOurPriority()
    {
        QTemporaryDir dir;
        const QString niceFile = dir.filePath(QStringLiteral("nice"));
        errno = 0;
        const int ours = ::getpriority(PRIO_PROCESS, 0);
        QCOMPARE(errno, 0);
        const Recorded r = record(
            launch({QStringLiteral("/bin/sh"), QStringLiteral("-c"), QStringLiteral("nice > '%1'").arg(niceFile)}),
            dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QFile file(niceFile);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromLatin1(file.readAll()).trimmed().toInt(), ours);
        // And the session thread is back at its own value.
        QCOMPARE(::getpriority(PRIO_PROCESS, 0), ours);
    }

    // Thread names come from COMM records and /proc; each thread's samples must hold its own function.
    void namedThreads()
    {
        QTemporaryDir dir;
        const Recorded r = record(launch({targetPath("named_threads"), QStringLiteral("1.5")}, 499), dir.path());
        const Profile &p = r.profile;
        const FrameTable frames(p);
        const ThreadIndex threads(p);
        std::map<std::string, std::set<std::string>> functionsByThread;
        std::vector<uint32_t> path;
        for (size_t i = 0; i < p.sampleCount(); ++i) {
            const uint32_t t = threads.threadOf(i);
            QVERIFY(t != kNoIndex);
            path.clear();
            frames.expandRootFirst(p.sample(i).locations, path);
            for (uint32_t f : path)
                functionsByThread[threads.threads()[t].name].insert(frames.frame(f).name);
        }
        QVERIFY(functionsByThread["alpha-worker"].count("alpha_work"));
        QVERIFY(!functionsByThread["alpha-worker"].count("beta_work"));
        QVERIFY(functionsByThread["beta-worker"].count("beta_work"));
        QVERIFY(!functionsByThread["beta-worker"].count("alpha_work"));
        VERIFY_COMPLETE(p, "main", "run", "_start"); // _start: exit handlers after main returned
    }

    // A forked child is followed: its function appears, and samples say which process they came from.
    void forkedChild()
    {
        QTemporaryDir dir;
        const Recorded r = record(launch({targetPath("forker"), QStringLiteral("1.5")}, 499), dir.path());
        QVERIFY(share(r.profile, "parent_work") > 0.2);
        QVERIFY(share(r.profile, "child_work") > 0.2);
        const StringId pidKey = r.profile.findString("process_id");
        QVERIFY(pidKey != kNoIndex);
        std::set<int64_t> pids;
        for (size_t i = 0; i < r.profile.sampleCount(); ++i) {
            for (const Label &l : r.profile.sampleLabels(i)) {
                if (l.key == pidKey)
                    pids.insert(l.num);
            }
        }
        QCOMPARE(pids.size(), size_t(2));
    }

    // The health view on a ~40 KiB deep stack copied 4 KiB at a time: if this fails, the unwinder does not tell a
    // copy that ended from other failures, or the size it suggests would not have held the stack (the second
    // recording, with that size, must then be complete).
    void deepStackNeedsBiggerCopy()
    {
        QTemporaryDir dir;
        SessionConfig small = launch({targetPath("deep_stack"), QStringLiteral("1.5")}, 499);
        small.stackBytes = 4096;
        small.learnStackCopy = false; // as `--stack-size 4096` asks
        const Recorded r = record(small, dir.path());
        QVERIFY(r.summary.health);
        QVERIFY(!r.flushes.empty() && r.flushes.back()->health);
        const UnwindHealth &health = *r.summary.health;
        QVERIFY2(health.incomplete * 2 > health.samples, qPrintable(QString::number(health.incomplete)));
        const ModuleHealth &worst = health.modules.front();
        QVERIFY2(worst.path.ends_with("/deep_stack"), worst.path.c_str());
        QCOMPARE(worst.causeText, std::string("stack copy too small"));
        QVERIFY(worst.incompleteShare > 0.9);
        QCOMPARE(worst.symbols.status, SymbolStatus::FullDwarf);
        QVERIFY2(worst.suggestedStackBytes > 40 * 1024 && worst.suggestedStackBytes <= kMaxStackCopyBytes,
                 qPrintable(QString::number(worst.suggestedStackBytes)));
        QVERIFY2(worst.fix.find("--stack-size " + std::to_string(worst.suggestedStackBytes)) != std::string::npos,
                 worst.fix.c_str());

        QTemporaryDir again;
        SessionConfig suggested = launch({targetPath("deep_stack"), QStringLiteral("1.5")}, 499);
        suggested.stackBytes = worst.suggestedStackBytes;
        suggested.learnStackCopy = false;
        const Recorded fixed = record(suggested, again.path());
        QVERIFY(fixed.summary.health);
        QVERIFY2(fixed.summary.health->incomplete * 20 <= fixed.summary.health->samples,
                 qPrintable(QStringLiteral("%1 of %2 incomplete with %3 bytes")
                                .arg(fixed.summary.health->incomplete)
                                .arg(fixed.summary.health->samples)
                                .arg(worst.suggestedStackBytes)));
    }

    // The stack copy learned from the stacks, with the default settings: on a worker thread whose stacks need a
    // few KiB it shrinks from 32 KiB, and on a ~40 KiB deep stack it grows until the stacks are complete. If this
    // fails, every sample copies more stack than the program uses, or deep programs stay cut short.
    void stackCopyIsLearned()
    {
        QTemporaryDir dir;
        const Recorded shallow =
            record(launch({targetPath("cpu_split"), QStringLiteral("4"), QStringLiteral("thread")}, 999), dir.path());
        qInfo("cpu_split on a thread: %u bytes at the end after %u change(s), deepest stack %llu bytes",
              shallow.summary.stackCopyBytes, shallow.summary.stackCopyChanges,
              static_cast<unsigned long long>(shallow.summary.deepestStackBytes));
        QVERIFY(shallow.summary.stackCopyLearned);
        QVERIFY2(shallow.summary.stackCopyBytes <= 16384, qPrintable(QString::number(shallow.summary.stackCopyBytes)));
        QVERIFY(shallow.summary.deepestStackBytes > 0 && shallow.summary.deepestStackBytes < 8192);
        QVERIFY2(shallow.summary.incomplete * 100 <= shallow.summary.samples,
                 qPrintable(QStringLiteral("%1 of %2").arg(shallow.summary.incomplete).arg(shallow.summary.samples)));
        VERIFY_COMPLETE(shallow.profile, "clone3", "main", "_start"); // the worker thread, and main waiting for it

        QTemporaryDir deepDir;
        SessionConfig deepConfig = launch({targetPath("deep_stack"), QStringLiteral("3")}, 499);
        const Recorded deep = record(deepConfig, deepDir.path());
        qInfo("deep_stack: %u bytes at the end after %u change(s), deepest stack %llu bytes; %llu of %llu incomplete",
              deep.summary.stackCopyBytes, deep.summary.stackCopyChanges,
              static_cast<unsigned long long>(deep.summary.deepestStackBytes),
              static_cast<unsigned long long>(deep.summary.incomplete),
              static_cast<unsigned long long>(deep.summary.samples));
        QVERIFY(deep.summary.stackCopyChanges >= 1);
        QVERIFY2(deep.summary.stackCopyBytes > 40 * 1024, qPrintable(QString::number(deep.summary.stackCopyBytes)));
        // Cut short only until the copy grew, in the first moments.
        QVERIFY2(deep.summary.incomplete * 10 <= deep.summary.samples,
                 qPrintable(QStringLiteral("%1 of %2").arg(deep.summary.incomplete).arg(deep.summary.samples)));
    }

    // A library loaded with dlopen after sampling started is unwound through and symbolized with its source.
    void dlopenedLibrary()
    {
        QTemporaryDir dir;
        const Recorded r = record(
            launch({targetPath("dlopener"), targetPath("libdlwork.so"), QStringLiteral("1.5")}, 499), dir.path());
        QVERIFY2(share(r.profile, "dl_spin") > 0.8, qPrintable(QString::number(share(r.profile, "dl_spin"))));
        VERIFY_COMPLETE(r.profile, "main");
        const FrameTable frames(r.profile);
        const auto ids = frames.findByName("dl_spin");
        QVERIFY(!ids.empty());
        QVERIFY(QString::fromStdString(frames.frame(ids[0]).file).endsWith(QLatin1String("dlwork.c")));
        QCOMPARE(QString::fromStdString(frames.frame(ids[0]).module), QStringLiteral("libdlwork.so"));
    }

    // An always-inlined function shows as its own frame above its caller, within one location.
    void inlinedFrames()
    {
        QTemporaryDir dir;
        const Recorded r = record(launch({targetPath("inlined"), QStringLiteral("1")}, 499), dir.path());
        const Profile &p = r.profile;
        bool found = false;
        for (const Location &loc : p.locations()) {
            if (loc.lines.size() >= 2 && p.str(p.functions()[loc.lines[0].functionIndex].name) == "mix_inline" &&
                p.str(p.functions()[loc.lines[1].functionIndex].name) == "outer_caller")
                found = true;
        }
        QVERIFY(found);
        QVERIFY(share(p, "mix_inline") > 0.9);
    }

    // A stripped program is symbolized from its separate debug file, found by build id under a debug
    // directory, exactly as distributions ship them (/usr/lib/debug/.build-id/ab/cdef....debug).
    void strippedWithSeparateDebugFile()
    {
        QTemporaryDir dir;
        const QString program = dir.filePath(QStringLiteral("cpu_split_stripped"));
        const QString debugDir = dir.filePath(QStringLiteral("debug"));
        QVERIFY(QFile::copy(targetPath("cpu_split_nofp"), program));
        auto run = [](const QString &tool, const QStringList &args) {
            QProcess p;
            p.start(tool, args);
            return p.waitForFinished(30000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
        };
        const QString buildId = QString::fromStdString(Symbolizer::readBuildId(program.toStdString()));
        QVERIFY(buildId.size() > 2);
        const QString debugFile =
            QStringLiteral("%1/.build-id/%2/%3.debug").arg(debugDir, buildId.left(2), buildId.mid(2));
        QVERIFY(QDir().mkpath(QFileInfo(debugFile).path()));
        QVERIFY(run(QStringLiteral("objcopy"), {QStringLiteral("--only-keep-debug"), program, debugFile}));
        QVERIFY(run(QStringLiteral("objcopy"), {QStringLiteral("--strip-all"), program}));
        QVERIFY(QFile::setPermissions(program, QFile::permissions(program) | QFile::ExeOwner));

        SessionConfig c = launch({program, QStringLiteral("1.5")}, 499);
        c.debugDirectories = {debugDir.toStdString()};
        const Recorded withDebug = record(c, dir.filePath(QStringLiteral("with")));
        QVERIFY2(std::abs(share(withDebug.profile, "hot_sixty") - 0.6) < 0.08,
                 qPrintable(QString::number(share(withDebug.profile, "hot_sixty"))));
        VERIFY_COMPLETE(withDebug.profile, "main", "_start");

        // Without the debug file the same stacks are still unwound (.eh_frame stays in a stripped binary),
        // and their frames are named module+offset, never left empty.
        c.debugDirectories = {dir.filePath(QStringLiteral("nowhere")).toStdString()};
        const Recorded without = record(c, dir.filePath(QStringLiteral("without")));
        QCOMPARE(share(without.profile, "hot_sixty"), 0.0);
        const FrameTable frames(without.profile);
        bool moduleOffset = false;
        for (size_t i = 0; i < frames.size(); ++i) {
            QVERIFY(!frames.frame(uint32_t(i)).name.empty());
            moduleOffset = moduleOffset || frames.frame(uint32_t(i)).name.rfind("cpu_split_stripped+0x", 0) == 0;
        }
        QVERIFY(moduleOffset);
    }

    // Every flush period produces a readable flush; the merged profile holds every sample of the session.
    void flushesAndMergedProfile()
    {
        QTemporaryDir dir;
        SessionConfig c = launch({targetPath("cpu_split"), QStringLiteral("3.6")}, 199);
        c.flushPeriodNs = 1'000'000'000;
        const Recorded r = record(c, dir.path());
        QVERIFY2(r.flushes.size() >= 3, qPrintable(QString::number(r.flushes.size())));
        int64_t flushSamples = 0;
        for (size_t i = 0; i < r.flushes.size(); ++i) {
            const auto &f = r.flushes[i];
            QCOMPARE(f->sequence, uint32_t(i + 1));
            // Every flush lasts a period, but a final one that may be cut short: that one is not for upload.
            if (!f->final)
                QVERIFY(f->endNs - f->startNs >= 900'000'000);
            QCOMPARE(f->upload, !f->final || f->endNs - f->startNs >= 1'000'000'000);
            const QString name = QStringLiteral("flush-%1.pprof").arg(i + 1, 4, 10, QLatin1Char('0'));
            QCOMPARE(QString::fromStdString(f->path), QDir(dir.path()).filePath(name));
            auto onDisk = readPprofFile(f->path);
            QVERIFY2(onDisk.ok(), onDisk.ok() ? "" : onDisk.error().message.c_str());
            QCOMPARE(onDisk->sampleCount(), f->profile->sampleCount());
            QVERIFY(onDisk->findString("end_timestamp_ns") != kNoIndex);
            QVERIFY(onDisk->sampleTypeIndex("cpu-samples") == 0 && onDisk->sampleTypeIndex("cpu-time") == 1);
            flushSamples += onDisk->totals()[0];
        }
        const int64_t merged = r.profile.totals()[0];
        QCOMPARE(static_cast<uint64_t>(merged), r.summary.samples);
        QCOMPARE(merged, flushSamples); // every sample reaches a flush, the last one however short
        QVERIFY(r.flushes.back()->final);
    }

    // A target that crashes mid-flush ends the session cleanly, with its status and its last samples kept.
    void targetCrashes()
    {
        QTemporaryDir dir;
        const Recorded r =
            record(launch({targetPath("crasher"), QStringLiteral("1.2"), QStringLiteral("segv")}, 499), dir.path());
        QVERIFY(r.summary.targetExited);
        QCOMPARE(r.summary.exitStatus, 128 + SIGSEGV);
        QVERIFY(share(r.profile, "before_crash") > 0.8);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("flush-0001.pprof"))));
    }

    // A program that execs another mid-session: the new image is mapped, unwound and symbolized afresh.
    void targetExecs()
    {
        QTemporaryDir dir;
        const QString script = QStringLiteral("sleep 0.3; exec %1 1.5").arg(targetPath("cpu_split"));
        const Recorded r = record(launch({QStringLiteral("/bin/sh"), QStringLiteral("-c"), script}, 499), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY2(share(r.profile, "hot_sixty") > 0.4, qPrintable(QString::number(share(r.profile, "hot_sixty"))));
        // Both images start in the dynamic loader: its stacks end at the entry point (_start), before main.
        VERIFY_COMPLETE(r.profile, "main", "_start");
    }

    // Attaching samples a running process's threads and leaves it running when the session ends.
    void attachLeavesTargetRunning()
    {
        QProcess target;
        target.start(targetPath("named_threads"), {QStringLiteral("3")});
        QVERIFY(target.waitForStarted());
        QTest::qWait(200);
        SessionConfig c;
        c.pid = static_cast<int>(target.processId());
        c.frequency = 499;
        c.durationNs = 1'000'000'000;
        QTemporaryDir dir;
        const Recorded r = record(c, dir.path());
        QVERIFY(!r.summary.targetExited);
        QCOMPARE(target.state(), QProcess::Running);
        QVERIFY(share(r.profile, "alpha_work") > 0.2);
        QVERIFY(share(r.profile, "beta_work") > 0.2);
        QVERIFY(target.waitForFinished(10000));
        QCOMPARE(target.exitCode(), 0);
        QCOMPARE(target.exitStatus(), QProcess::NormalExit);
    }

    // profile.pprof is the merge of the session's flushes, the last one however short (it is reported and
    // written like the others, only not uploaded): it holds every sample recorded, exactly as many as the
    // flushes together. If this fails, the merged profile loses or doubles samples, or a flush that reached
    // profile.pprof was never reported.
    void sessionProfileIsTheMergeOfItsFlushes()
    {
        QTemporaryDir dir;
        SessionConfig c = launch({targetPath("cpu_split"), QStringLiteral("2.5")}, 199);
        c.flushPeriodNs = 1'000'000'000;
        const Recorded r = record(c, dir.path());
        QVERIFY(r.flushes.size() >= 2);
        int64_t inFlushes = 0;
        for (const auto &f : r.flushes) {
            QVERIFY(QFile::exists(QString::fromStdString(f->path)));
            inFlushes += f->profile->totals()[0];
        }
        const int64_t merged = r.profile.totals()[0];
        QCOMPARE(merged, static_cast<int64_t>(r.summary.samples));
        QCOMPARE(inFlushes, merged);
        QCOMPARE(r.profile.sampleTypes().size(), r.flushes.front()->profile->sampleTypes().size());
    }

    // profile.pprof is written as the session goes (as profile.pprof.tmp, renamed at the end), from the flushes
    // in memory: a flush file damaged on disk during the session changes nothing in it.
    void sessionProfileIsWrittenAsItGoes()
    {
        QTemporaryDir dir;
        SessionConfig c = launch({targetPath("cpu_split"), QStringLiteral("2.5")}, 199);
        c.flushPeriodNs = 1'000'000'000;
        c.outputDirectory = dir.path().toStdString();
        std::atomic<bool> stop{false};
        RecordSession session(c);
        std::mutex mutex;
        std::string damaged;
        bool tmpDuringSession = true;
        bool finalDuringSession = false;
        auto result = session.run(stop, [&](const std::shared_ptr<const Flush> &f) {
            std::lock_guard lock(mutex);
            tmpDuringSession &= QFile::exists(dir.filePath(QStringLiteral("profile.pprof.tmp")));
            finalDuringSession |= QFile::exists(dir.filePath(QStringLiteral("profile.pprof")));
            if (!damaged.empty() || f->path.empty())
                return;
            damaged = f->path;
            QFile file(QString::fromStdString(f->path));
            if (file.open(QIODevice::WriteOnly | QIODevice::Truncate))
                file.write("not a profile");
        });
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QVERIFY(!damaged.empty());
        QVERIFY(tmpDuringSession);
        QVERIFY(!finalDuringSession);
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("profile.pprof.tmp"))));
        auto merged = readPprofFile(dir.filePath(QStringLiteral("profile.pprof")).toStdString());
        QVERIFY2(merged.ok(), merged.ok() ? "" : merged.error().message.c_str());
        QCOMPARE(merged->totals()[0], static_cast<int64_t>(result->samples));
        QVERIFY(!readPprofFile(damaged).ok());
    }

    // Setting the stop flag ends a session early; a launched target is ended, the data is written.
    void stopEndsLaunchedTarget()
    {
        QTemporaryDir dir;
        SessionConfig c = launch({targetPath("cpu_split"), QStringLiteral("30")}, 199);
        c.outputDirectory = dir.path().toStdString();
        std::atomic<bool> stop{false};
        std::thread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(1200));
            stop = true;
        });
        RecordSession session(c);
        auto result = session.run(stop);
        stopper.join();
        QVERIFY(result.ok());
        QCOMPARE(QString::fromStdString(result->endReason), QStringLiteral("stopped"));
        QVERIFY(result->durationNs < 10'000'000'000);
        QCOMPARE(result->exitStatus, 128 + SIGTERM);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("profile.pprof"))));
    }

    void refusesBadInput()
    {
        std::atomic<bool> stop{false};
        {
            RecordSession s(launch({QStringLiteral("/no/such/program")}));
            auto r = s.run(stop);
            QVERIFY(!r.ok());
            QVERIFY(QString::fromStdString(r.error().message).contains(QLatin1String("command not found")));
        }
        {
            QTemporaryDir dir;
            QFile plain(dir.filePath(QStringLiteral("data.txt")));
            QVERIFY(plain.open(QIODevice::WriteOnly));
            plain.write("not a program");
            plain.close();
            RecordSession s(launch({plain.fileName()}));
            auto r = s.run(stop);
            QVERIFY(!r.ok());
            QVERIFY(QString::fromStdString(r.error().message).contains(QLatin1String("not an executable")));
        }
        {
            SessionConfig c;
            c.pid = 0x3fffffff; // beyond pid_max
            RecordSession s(c);
            auto r = s.run(stop);
            QVERIFY(!r.ok());
            QVERIFY(QString::fromStdString(r.error().message).contains(QLatin1String("no process")));
        }
        {
            SessionConfig c = launch({QStringLiteral("/bin/true")});
            c.flushPeriodNs = 500'000'000;
            QVERIFY(!validateConfig(c).ok());
            c.flushPeriodNs = 10'000'000'000;
            c.frequency = 0;
            QVERIFY(!validateConfig(c).ok());
        }
    }
};

QTEST_GUILESS_MAIN(TestRecordSession)
#include "tst_record_session.moc"
