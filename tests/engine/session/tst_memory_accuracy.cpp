// Memory profiling's accuracy on real programs at the default interval: sampled estimates against what a target
// allocates by construction, the in-use margins each flush states, the seeded leaks of tests/targets/alloc_leaks.c
// against valgrind's memcheck, and Debian's CPython against heaptrack's count of every allocation.

#include "tests/engine/session/memory_test_support.h"
#include "tests/engine/session/session_test_support.h"

#include "engine/flush/flush.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/session/record_session.h"

#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <map>
#include <string>

using namespace emberline::engine;
using namespace emberline::test;

namespace memory_accuracy_test {

// valgrind's memcheck on `argv`: the bytes definitely lost, per function that called the allocator.
std::map<std::string, int64_t> valgrindDefinitelyLost(const QStringList &argv)
{
    QProcess valgrind;
    valgrind.start(QStringLiteral("valgrind"),
                   QStringList{QStringLiteral("--leak-check=full"), QStringLiteral("--show-leak-kinds=definite"),
                               QStringLiteral("--num-callers=3")} +
                       argv);
    if (!valgrind.waitForFinished(120000))
        qFatal("valgrind did not finish");
    const QString out = QString::fromLocal8Bit(valgrind.readAllStandardError());
    // "N bytes in M blocks are definitely lost in loss record …", then "at …: malloc (…)", "by …: SITE (…)".
    static const QRegularExpression record(QStringLiteral(
        R"(([\d,]+) bytes in [\d,]+ blocks are definitely lost[^\n]*\n[^\n]*\n==\d+==\s+by 0x[0-9A-Fa-f]+: (\w+))"));
    std::map<std::string, int64_t> lost;
    for (auto it = record.globalMatch(out); it.hasNext();) {
        const auto m = it.next();
        lost[m.captured(2).toStdString()] += m.captured(1).remove(QLatin1Char(',')).toLongLong();
    }
    return lost;
}

struct HeaptrackCounts {
    int64_t calls = 0;                     // calls to allocation functions
    std::map<std::string, int64_t> bySite; // per allocation site (the allocator's caller), named ones only
};

// heaptrack (Debian's package) on `argv` with PYTHONMALLOC=malloc, read back with heaptrack_print.
HeaptrackCounts runHeaptrack(const QStringList &argv, const QString &dir)
{
    QProcess heaptrack;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PYTHONMALLOC"), QStringLiteral("malloc"));
    heaptrack.setProcessEnvironment(env);
    heaptrack.start(QStringLiteral("heaptrack"), QStringList{QStringLiteral("-o"), dir + QStringLiteral("/ht")} + argv);
    if (!heaptrack.waitForFinished(240000) || heaptrack.exitCode() != 0)
        qFatal("heaptrack failed: %s", heaptrack.readAllStandardError().constData());
    QProcess print;
    print.start(QStringLiteral("heaptrack_print"), QStringList{dir + QStringLiteral("/ht.zst")});
    if (!print.waitForFinished(240000))
        qFatal("heaptrack_print did not finish");
    const QString out = QString::fromLocal8Bit(print.readAllStandardOutput());
    HeaptrackCounts counts;
    static const QRegularExpression total(QStringLiteral(R"(^calls to allocation functions: (\d+))"),
                                          QRegularExpression::MultilineOption);
    counts.calls = total.match(out).captured(1).toLongLong();
    // The top-level entries of "MOST CALLS TO ALLOCATION FUNCTIONS": "N calls to allocation functions with … from"
    // and the site's name on the next line (unnamed sites are an address).
    static const QRegularExpression site(
        QStringLiteral(R"(^(\d+) calls to allocation functions with [^\n]* from\n(\w+)\n)"),
        QRegularExpression::MultilineOption);
    const qsizetype end = out.indexOf(QStringLiteral("PEAK MEMORY CONSUMERS"));
    for (auto it = site.globalMatch(out.left(end)); it.hasNext();) {
        const auto m = it.next();
        if (!m.captured(2).startsWith(QLatin1String("0x")))
            counts.bySite.try_emplace(m.captured(2).toStdString(), m.captured(1).toLongLong());
    }
    return counts;
}

} // namespace memory_accuracy_test

using namespace memory_accuracy_test;

class TestMemoryAccuracy : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { REQUIRE_PERF_EVENTS(); }

    // The default interval (512 KiB) over 1 GiB in 64 KiB blocks: about 2,000 samples, whose weighted sum estimates
    // the bytes and allocations without bias. 5 standard deviations of the estimate (about 11%) bound a correct
    // sampler; a biased weighting (none, or applied twice) is off by a factor.
    void sampledEstimates()
    {
        QTemporaryDir dir;
        const Recorded r =
            record(memoryLaunch({targetPath("alloc_truths"), QStringLiteral("none"), QStringLiteral("1024")}, 524288),
                   dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        const auto bytes = byLeaf(r.profile, "alloc-space");
        const double truth = 1024.0 * 16 * 65521 + 777000 + 333300 + 10010 + 50050 + 133260;
        // main's own sites and its big blocks (made in bigBlocks).
        const double estimate = static_cast<double>(at(bytes, "main") + at(bytes, "bigBlocks"));
        const double p = 1 - std::exp(-65521.0 / 524288.0);
        const double sd = truth * std::sqrt((1 - p) / (1024.0 * 16 * p));
        QVERIFY2(std::abs(estimate - truth) < 5 * sd,
                 qPrintable(QStringLiteral("estimate %1, truth %2, sd %3").arg(estimate).arg(truth).arg(sd)));
        QVERIFY(r.summary.memory->samples < 5000); // sampled, not traced
        QCOMPARE(r.summary.memory->allocsDropped, uint64_t(0));

        // The totals are the hooks' counts, exact whatever was sampled: every allocation of the program (its truths,
        // the forked child's and the thread's; the C library's own few, for stdio, on top). If this fails, a thread's
        // or a process's count is lost or counted twice.
        const MemorySummary &m = *r.summary.memory;
        QVERIFY(m.allocatedExact);
        const double allocations = 1024.0 * 16 + 1000 + 100 + 4 + 10 + 500 + 60;
        const double bytesTruth = truth + 500 * 4099; // main's (the child's among them) and the thread's
        qInfo("totals: %.0f allocations (%.0f known), %.0f bytes (%.0f known); the samples estimate %.0f and %.0f",
              m.allocatedObjects, allocations, m.allocatedBytes, bytesTruth, m.sampledAllocatedObjects,
              m.sampledAllocatedBytes);
        QVERIFY2(m.allocatedObjects >= allocations && m.allocatedObjects <= allocations + 20,
                 qPrintable(QString::number(m.allocatedObjects)));
        QVERIFY2(m.allocatedBytes >= bytesTruth && m.allocatedBytes <= bytesTruth + 65536,
                 qPrintable(QString::number(m.allocatedBytes, 'f', 0)));
        QCOMPARE(m.allocatedBytesMargin, 0.0);
        QVERIFY(m.sampledAllocatedBytesMargin > 0);
    }

    // CPython holding a heap of 24 MiB of mixed sizes for 2.5 s (tests/targets/heap_plateaus.py), flushed every second:
    // once with every allocation recorded (the truth: every flush that ends while the heap holds sees it, to the
    // byte) and once at the default interval. Each sampled flush that ends while the heap holds has its in-use space
    // within 5% of the truth (calibrated to the agent's exact heap counts: sampling alone leaves some 15% here), and
    // states a range far narrower than sampling's own (how often such ranges hold the truth is tst_heap_tracker's
    // and bench_inuse.sh's to count); it carries the range in its file too (a comment), and the session's profile,
    // a sum of flushes, carries none. If this fails, the in-use values or their ranges are sampling's alone, or
    // calibration is off.
    void inUseCalibratedAtEveryFlush()
    {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) {
            if (inCi())
                QFAIL("python3 is missing (installer/install-deps.sh --test installs it)");
            QSKIP("python3 is not installed");
        }
        // The flushes of a run at `interval` that end while the heap holds, as (in-use space, stated range).
        const auto plateauFlushes = [](uint64_t interval, const QTemporaryDir &dir, Recorded &r) {
            const QString plateaus = dir.filePath(QStringLiteral("plateaus"));
            SessionConfig c = memoryLaunch({QStringLiteral("/usr/bin/python3"),
                                            QStringLiteral(EMBERLINE_TEST_DATA "/../targets/heap_plateaus.py"),
                                            QStringLiteral("24"), QStringLiteral("2.5"), plateaus},
                                           interval);
            c.environment.emplace_back("PYTHONMALLOC", "malloc");
            r = record(c, dir.path());
            QFile file(plateaus);
            std::vector<std::pair<double, double>> out;
            if (r.summary.exitStatus != 0 || !file.open(QIODevice::ReadOnly))
                return out;
            const QList<QByteArray> f = file.readAll().trimmed().split(' ');
            if (f.size() != 4)
                return out;
            const double start = f[2].toDouble() + 0.05; // a little margin on each side for the clocks
            const double end = f[3].toDouble() - 0.05;
            for (const auto &flush : r.flushes) {
                const double ends =
                    static_cast<double>(flush->profile->timeNanos + flush->profile->durationNanos) / 1e9;
                if (ends > start && ends < end)
                    out.emplace_back(static_cast<double>(total(*flush->profile, "inuse-space")),
                                     flush->inUseBytesMargin);
            }
            return out;
        };
        QTemporaryDir exactDir;
        Recorded exactRun;
        const auto exact = plateauFlushes(1, exactDir, exactRun);
        QCOMPARE(exactRun.summary.exitStatus, 0);
        QVERIFY2(!exact.empty(), "no exact flush ended while the heap held");
        const double truth = exact.back().first;
        for (const auto &[inUse, margin] : exact)
            QCOMPARE(inUse, truth);
        QVERIFY(truth > 24 << 20);

        QTemporaryDir dir;
        Recorded r;
        const auto sampled = plateauFlushes(524288, dir, r);
        QCOMPARE(r.summary.exitStatus, 0);
        QVERIFY2(!sampled.empty(), "no sampled flush ended while the heap held");
        const double samplingRange = 1.96 * std::sqrt(524288.0 * truth); // sampling's own, for blocks this small
        for (const auto &[inUse, margin] : sampled) {
            qInfo("in use %.0f \u00b1%.0f, truth %.0f: error %+.3f%% (sampling alone: \u00b1%.1f%%)", inUse, margin,
                  truth, (inUse / truth - 1) * 100, samplingRange / truth * 100);
            QVERIFY2(std::abs(inUse / truth - 1) < 0.05, qPrintable(QString::number(inUse)));
            QVERIFY2(margin > 0 && margin < samplingRange / 5, qPrintable(QString::number(margin)));
        }
        int stated = 0;
        for (const auto &f : r.flushes) {
            if (total(*f->profile, "inuse-space") == 0)
                continue;
            auto file = readPprofFile(f->path);
            QVERIFY2(file.ok(), file.ok() ? "" : file.error().message.c_str());
            // The last flush's in-use values are the leaks: where each image's heap count calibrated them whole, no
            // range is left, and a margin of 0 is written as none (as an exact session's flushes are).
            if (f->final && f->inUseBytesMargin == 0) {
                QCOMPARE(inUseMarginOf(file.value()), -1.0);
                continue;
            }
            QCOMPARE(inUseMarginOf(file.value()), static_cast<double>(std::llround(f->inUseBytesMargin)));
            ++stated;
        }
        QVERIFY(stated >= 2);
        QCOMPARE(inUseMarginOf(r.profile), -1.0);
    }

    // Seeded leaks at the default interval, against valgrind's memcheck on the same program: every site memcheck finds
    // definitely losing at least 5 MiB is among the leaks (its volume within 5 standard deviations of the sampling
    // estimate), no site reported leaking 5 MiB or more is one memcheck does not find, and the sites that free
    // everything they allocate (100 MiB between them) hold nothing at the end.
    void leaksAgainstValgrind()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("valgrind")).isEmpty()) {
            if (inCi())
                QFAIL("valgrind is missing (installer/install-deps.sh --test installs it)");
            QSKIP("valgrind is not installed");
        }
        const auto lost = valgrindDefinitelyLost({targetPath("alloc_leaks")});
        QVERIFY2(lost.size() >= 3, qPrintable(QString::number(lost.size())));
        QTemporaryDir dir;
        const Recorded r = record(memoryLaunch({targetPath("alloc_leaks")}, 524288), dir.path());
        QCOMPARE(r.summary.exitStatus, 0);
        const auto leaks = byLeaf(r.profile, "inuse-space");
        const std::map<std::string, double> blockSize{
            {"leak_pages", 4096}, {"leak_chunks", 65536}, {"leak_records", 1000}, {"leak_little", 64}};
        constexpr int64_t kFiveMiB = 5 << 20;
        for (const auto &[site, bytes] : lost) {
            if (bytes < kFiveMiB)
                continue;
            const auto found = leaks.find(site);
            QVERIFY2(found != leaks.end(), site.c_str());
            const double p = 1 - std::exp(-blockSize.at(site) / 524288.0);
            const double sd =
                static_cast<double>(bytes) * std::sqrt((1 - p) / (static_cast<double>(bytes) / blockSize.at(site) * p));
            QVERIFY2(std::abs(static_cast<double>(found->second - bytes)) < 5 * sd,
                     qPrintable(QStringLiteral("%1: %2 estimated, %3 lost")
                                    .arg(QString::fromStdString(site))
                                    .arg(found->second)
                                    .arg(bytes)));
        }
        for (const auto &[site, bytes] : leaks) {
            if (bytes >= kFiveMiB)
                QVERIFY2(lost.count(site) && lost.at(site) > 0, site.c_str());
        }
        QVERIFY(!leaks.count("churn_small"));
        QVERIFY(!leaks.count("churn_large"));
        QVERIFY(at(byLeaf(r.profile, "alloc-space"), "churn_small") > 0); // sampled, and all freed

        // The summary's range for what was still live: calibrated to the agent's exact count of the heap at the
        // program's end, far narrower than the 95% range that sampling alone gives the seeded blocks (23 MiB in small
        // blocks: some 30%), and the estimate within 4 times it of the truth. If this fails, the leaks are not
        // calibrated, or the range does not hold what calibration leaves.
        const std::map<std::string, double> blocks{
            {"leak_pages", 1536}, {"leak_chunks", 192}, {"leak_records", 5300}, {"leak_little", 1024}};
        double truth = 0;
        double variance = 0;
        for (const auto &[site, count] : blocks) {
            const double size = blockSize.at(site);
            const double p = 1 - std::exp(-size / 524288.0);
            truth += count * size;
            variance += count * size * size * (1 - p) / p;
        }
        const MemorySummary &m = *r.summary.memory;
        const double expected = 1.96 * std::sqrt(variance);
        qInfo("still live: %.0f estimated (\u00b1%.0f; expected margin about %.0f), %.0f leaked", m.leakedBytes,
              m.leakedBytesMargin, expected, truth);
        // Usually some 20 KiB; ten times that in the runs where one of the rare 64-byte blocks is sampled (weighed as
        // 8,192 of them, whose usable sizes are furthest from their own): 2 of some 20 runs here, one at 5.2% of
        // sampling's range. Either way a small part of what sampling alone leaves.
        QVERIFY2(m.leakedBytesMargin > 0 && m.leakedBytesMargin < 0.15 * expected,
                 qPrintable(QStringLiteral("margin %1, expected about %2").arg(m.leakedBytesMargin).arg(expected)));
        // Within 4 ranges, not 2.5: the calibrated estimate comes out some 15 KiB (0.06%) high here (requested sizes
        // weighed by usable ones), and its range holds the truth about 9 times in 10 on heaps whose smallest blocks
        // are rare (heap_tracker.h); 2.5 failed about once in 25 runs (2.7 ranges, 45 KiB).
        QVERIFY2(std::abs(m.leakedBytes - truth) < 4 * m.leakedBytesMargin,
                 qPrintable(QStringLiteral("%1 estimated (\u00b1%2), %3 leaked")
                                .arg(m.leakedBytes)
                                .arg(m.leakedBytesMargin)
                                .arg(truth)));
        QCOMPARE(m.liveBytesMargin, 0.0); // nothing runs on
    }

    // A real program (Debian's CPython encoding and decoding JSON, every object a malloc) at the default interval,
    // against heaptrack's count of every allocation: the total and each large named allocation site within 5 standard
    // deviations of the sampling estimate (about 2,700 samples here: some 10% for the total).
    void againstHeaptrack()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("heaptrack")).isEmpty() ||
            !QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) {
            if (inCi())
                QFAIL("heaptrack or python3 is missing (installer/install-deps.sh --test installs them)");
            QSKIP("heaptrack or python3 is not installed");
        }
        const QString workload = QStringLiteral(EMBERLINE_TEST_DATA "/../targets/json_workload.py");
        QTemporaryDir dir;
        const HeaptrackCounts truth =
            runHeaptrack({QStringLiteral("/usr/bin/python3"), workload, QStringLiteral("150")}, dir.path());
        QVERIFY2(truth.calls > 10'000'000 && truth.bySite.size() >= 4, qPrintable(QString::number(truth.calls)));

        SessionConfig c = memoryLaunch({QStringLiteral("/usr/bin/python3"), workload, QStringLiteral("150")}, 524288);
        c.environment.emplace_back("PYTHONMALLOC", "malloc");
        const Recorded r = record(c, dir.path() + QStringLiteral("/emberline"));
        QCOMPARE(r.summary.exitStatus, 0);
        const double samples = static_cast<double>(r.summary.memory->samples);
        QCOMPARE(r.summary.memory->allocsDropped, uint64_t(0));
        const auto estimated = byLeaf(r.profile, "alloc-samples");
        const double calls = static_cast<double>(truth.calls);
        const double total = static_cast<double>(emberline::test::total(r.profile, "alloc-samples"));
        QVERIFY2(std::abs(total / calls - 1) < 5 / std::sqrt(samples),
                 qPrintable(QStringLiteral("%1 estimated, %2 counted, %3 samples").arg(total).arg(calls).arg(samples)));
        // The summary's totals are the hooks' counts: heaptrack's to within a few calls in ten thousand (the two
        // start and end at slightly different moments of the interpreter's life).
        QVERIFY(r.summary.memory->allocatedExact);
        QVERIFY2(
            std::abs(r.summary.memory->allocatedObjects / calls - 1) < 0.002,
            qPrintable(QStringLiteral("%1 counted, heaptrack %2").arg(r.summary.memory->allocatedObjects).arg(calls)));
        // A site's samples come with its bytes, not its calls: a site of small blocks has few samples for many calls,
        // and its count is known only as well as its bytes (about 1/sqrt(bytes / interval) relative). Checked: the
        // sites whose volume is at least 64 intervals.
        const auto estimatedBytes = byLeaf(r.profile, "alloc-space");
        int checked = 0;
        for (const auto &[site, count] : truth.bySite) {
            const double siteBytes = static_cast<double>(at(estimatedBytes, site));
            const double siteSamples = siteBytes / 524288.0;
            // A site whose blocks grow (realloc: a list's items) has its bytes in a few large blocks and its count in
            // many small ones, which few samples see: its count varies far more than its bytes say. Left out: sites
            // with a mean block over 1 KiB.
            if (siteSamples < 64 || siteBytes / static_cast<double>(count) > 1024)
                continue;
            const double estimate = static_cast<double>(at(estimated, site));
            QVERIFY2(std::abs(estimate / static_cast<double>(count) - 1) < 5 / std::sqrt(siteSamples),
                     qPrintable(QStringLiteral("%1: %2 estimated, %3 counted")
                                    .arg(QString::fromStdString(site))
                                    .arg(estimate)
                                    .arg(count)));
            ++checked;
        }
        QVERIFY2(checked >= 3, qPrintable(QString::number(checked)));
    }
};

QTEST_GUILESS_MAIN(TestMemoryAccuracy)
#include "tst_memory_accuracy.moc"
