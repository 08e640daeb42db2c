// The in-process agent (libemberline_agent.so) and the session's side of its rings (engine/memory/ring_reader.h)
// on a real program, tests/targets/alloc_truths, which prints the truth of every allocation site it has: exact
// mode (every allocation) equals them, sampling estimates them within statistical bounds, a forked child and an
// exec'd image get rings of their own, nothing is lost, and the program runs to its end when the session stops
// visiting or detaches.
#include "engine/agent/agent_protocol.h"
#include "engine/memory/allocation_weight.h"
#include "engine/memory/ring_reader.h"
#include "engine/recorder/location_key.h"
#include "engine/symbols/symbolizer.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/process_map.h"
#include "engine/unwind/unwinder.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <map>
#include <optional>
#include <set>

#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;

namespace ring_reader_test {

struct SiteCount {
    uint64_t count = 0;
    uint64_t bytes = 0;
    double estimatedCount = 0;
    double estimatedBytes = 0;
    uint64_t leakedCount = 0;
    uint64_t leakedBytes = 0;
};

// Counts allocations per (process, size) and what each image still held at its end.
class CountingSink : public MemoryRecordSink {
public:
    explicit CountingSink(uint64_t interval) : m_interval(interval) {}

    void onAllocation(const AgentAllocation &a) override
    {
        SiteCount &site = sites[{a.pid, a.size}];
        ++site.count;
        site.bytes += a.size;
        const AllocationWeight w = weighAllocation(a.size, m_interval);
        site.estimatedCount += w.count;
        site.estimatedBytes += w.bytes;
        if (!live[a.image].emplace(a.address, a.size).second)
            ++doubleAllocations;
        liveUsable[a.image][a.address] = a.heapBytes;
        if (!a.stack.empty() && a.regs.size() == 17 && a.regs[7] != 0 && a.regs[8] != 0)
            ++withStack;
        if (unwindSizes.count(a.size) != 0 && unwound.count(a.size) == 0)
            unwound[a.size] = unwindAndName(a);
        ++allocations;
    }
    void onFree(uint64_t image, uint32_t, uint32_t, uint64_t, uint64_t address) override
    {
        if (live[image].erase(address) == 0)
            ++unknownFrees;
        liveUsable[image].erase(address);
        ++frees;
    }
    void onImageStart(uint64_t image, uint32_t pid, uint32_t parentPid) override
    {
        started.insert(image);
        parents[pid] = parentPid;
        ++images[pid];
    }
    void onImageEnd(uint64_t image, uint32_t pid) override
    {
        for (const auto &[address, size] : live[image]) {
            SiteCount &site = sites[{pid, size}];
            ++site.leakedCount;
            site.leakedBytes += size;
        }
        live.erase(image);
        // What the agent's heap counts held at the image's end, beside the usable sizes of the blocks the records
        // left live.
        uint64_t usable = 0;
        for (const auto &[address, bytes] : liveUsable[image])
            usable += bytes;
        liveUsable.erase(image);
        recordedUsable[pid].push_back(usable);
        countedUsable[pid].push_back(rings ? rings->heapLive(image) : std::nullopt);
        ended.insert(image);
    }

    // With `unwindSizes` set: the first allocation of each of these sizes is unwound (while the program still
    // runs) and its frames named, leaf first, as module:function.
    std::set<uint64_t> unwindSizes;
    std::map<uint64_t, QStringList> unwound;

    std::map<std::pair<uint32_t, uint64_t>, SiteCount> sites;
    std::map<uint64_t, std::map<uint64_t, uint64_t>> live;       // image -> address -> size
    std::map<uint64_t, std::map<uint64_t, uint64_t>> liveUsable; // image -> address -> usable size
    // Per process, at each of its images' ends: the usable bytes its records left live, and its heap counts.
    std::map<uint32_t, std::vector<uint64_t>> recordedUsable;
    std::map<uint32_t, std::vector<std::optional<int64_t>>> countedUsable;
    const RingReader *rings = nullptr;
    std::map<uint32_t, uint32_t> parents;
    std::map<uint32_t, int> images;
    std::set<uint64_t> started, ended;
    uint64_t allocations = 0, frees = 0, unknownFrees = 0, doubleAllocations = 0, withStack = 0;

private:
    // The session's own unwinder and symbolizer over the sample's registers and stack copy.
    QStringList unwindAndName(const AgentAllocation &a)
    {
        ProcessMap map(&m_elfCache, &m_moduleIds);
        if (!map.loadFromProc(int(a.pid)))
            return {QStringLiteral("(no map)")};
        UnwindOutput out;
        m_unwinder.unwind(UnwindInput{a.regs, a.stack, &map, int(a.pid)}, out);
        m_unwinder.forgetProcess(int(a.pid));
        QStringList names;
        for (const uint64_t ip : out.ips) {
            const MappedModule *module = map.find(ip);
            if (!module) {
                names << QStringLiteral("?");
                continue;
            }
            const auto frames = m_symbolizer.symbolize(module->path, {}, ip - module->start + module->pgoff);
            names << QFileInfo(QString::fromStdString(module->path)).fileName() + QLatin1Char(':') +
                         (frames.empty() ? QStringLiteral("?") : QString::fromStdString(frames.back().function));
        }
        return names;
    }

    uint64_t m_interval;
    ElfCache m_elfCache;
    ModuleIds m_moduleIds{kFirstModuleId};
    Unwinder m_unwinder;
    Symbolizer m_symbolizer;
};

struct Truth {
    uint32_t pid = 0;
    QString site;
    uint64_t count = 0, bytes = 0, leakedCount = 0, leakedBytes = 0;
};

QString agentPath()
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so");
}
QString targetPath()
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/alloc_truths");
}

// Runs alloc_truths with the agent, polling the rings every 5 ms until the program has exited and every ring
// has ended. With `sessionDiesAfterMs` >= 0 the rings are read by a child process instead, killed (SIGKILL)
// after that long, as a crashed session would be: the test then only waits for the program.
struct Run {
    QList<Truth> truths;
    int exitCode = -1;
    bool finished = false;
    RingCounters counters;
    bool stalled = false; // the session stopped reading with the writers a lap ahead (stallMidLapMs)
};

uint64_t nowNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

// With `stallMidLapMs` > 0 the session reads only records at least 10 ms old (a session a little behind) until it finds
// the program's writers a lap ahead of it, past the ring's start while it still reads the lap before; then it stops
// reading for that long, and reads on as usual.
Run runTarget(CountingSink &sink, const QStringList &args, uint64_t interval, int sessionDiesAfterMs = -1,
              const QString &ringBytes = {}, int firstPollAfterMs = 0, const QString &program = {},
              int stallMidLapMs = 0)
{
    Run run;
    QTemporaryDir dir;
    pid_t session = -1;
    if (sessionDiesAfterMs >= 0) {
        session = fork();
        if (session == 0) {
            RingReader rings(dir.path().toStdString());
            CountingSink childSink(interval);
            QElapsedTimer alive;
            alive.start();
            while (alive.elapsed() < sessionDiesAfterMs) {
                rings.poll(RingSinks{.memory = &childSink});
                usleep(5000);
            }
            raise(SIGKILL);
        }
    }
    RingReader rings(dir.path().toStdString());
    sink.rings = &rings;
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("LD_PRELOAD"), agentPath());
    env.insert(QString::fromLatin1(agent::kEnvDirectory), dir.path());
    env.insert(QString::fromLatin1(agent::kEnvAllocInterval), QString::number(interval));
    if (!ringBytes.isEmpty())
        env.insert(QString::fromLatin1(agent::kEnvRingBytes), ringBytes);
    process.setProcessEnvironment(env);
    process.start(program.isEmpty() ? targetPath() : program, args);
    if (!process.waitForStarted())
        return run;
    QElapsedTimer timer;
    timer.start();
    bool exited = false;
    while (timer.elapsed() < 120'000) {
        if (session > 0) {
            // Reaped at once, as a shell reaps a killed program: a zombie would still look alive to the agent.
            if (waitpid(session, nullptr, WNOHANG) == session)
                session = 0;
        } else if (session < 0 && timer.elapsed() >= firstPollAfterMs) {
            if (stallMidLapMs > 0 && !run.stalled) {
                const auto at = rings.position(uint32_t(process.processId()));
                if (at && at->dataBytes != 0 && at->head / at->dataBytes == at->tail / at->dataBytes + 1 &&
                    at->tail % at->dataBytes != 0) {
                    run.stalled = true;
                    QThread::msleep(ulong(stallMidLapMs));
                }
                rings.poll(RingSinks{.memory = &sink}, run.stalled ? UINT64_MAX : nowNs() - 10'000'000);
            } else {
                rings.poll(RingSinks{.memory = &sink});
            }
        }
        if (!exited && process.waitForFinished(5))
            exited = true;
        if (exited && (session >= 0 || (rings.openRings() == 0 && sink.started == sink.ended)))
            break;
    }
    if (session > 0) {
        kill(session, SIGKILL);
        waitpid(session, nullptr, 0);
    }
    run.finished = exited;
    run.exitCode = process.exitCode();
    run.counters = rings.counters();
    for (const QByteArray &line : process.readAllStandardOutput().split('\n')) {
        const QList<QByteArray> f = line.split(' ');
        if (f.size() == 7 && f[0] == "truth")
            run.truths.push_back({f[1].toUInt(), QString::fromLatin1(f[2]), f[3].toULongLong(), f[4].toULongLong(),
                                  f[5].toULongLong(), f[6].toULongLong()});
    }
    return run;
}

// The first of the program's truths that the records do not equal (exact mode: every site's count, bytes and
// leaks), or nothing.
QString truthMismatch(CountingSink &sink, const Run &run)
{
    for (const Truth &t : run.truths) {
        if (t.site == QLatin1String("grown")) {
            // Four sizes, one allocation each: counted per size.
            for (uint64_t s : {1001u, 2002u, 3003u, 4004u})
                if (sink.sites[{t.pid, s}].count != 1)
                    return QStringLiteral("grown: %1 allocations of %2 bytes").arg(sink.sites[{t.pid, s}].count).arg(s);
            continue;
        }
        const SiteCount site = sink.sites[{t.pid, t.bytes / t.count}];
        if (site.count != t.count || site.bytes != t.bytes)
            return QStringLiteral("%1: %2 allocations (%3 bytes), the program made %4 (%5 bytes); %6 dropped, %7 ms "
                                  "waited")
                .arg(t.site)
                .arg(site.count)
                .arg(site.bytes)
                .arg(t.count)
                .arg(t.bytes)
                .arg(run.counters.allocsDropped)
                .arg(run.counters.waitNs / 1'000'000);
        if (site.leakedCount != t.leakedCount || site.leakedBytes != t.leakedBytes)
            return QStringLiteral("%1: %2 leaked, the program leaked %3")
                .arg(t.site)
                .arg(site.leakedCount)
                .arg(t.leakedCount);
    }
    return {};
}

} // namespace ring_reader_test
using namespace ring_reader_test;

class TestRingReader : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo::exists(agentPath()), qPrintable(agentPath()));
        QVERIFY2(QFileInfo::exists(targetPath()), qPrintable(targetPath()));
    }

    // A padding record's body was never written: what lies there is whatever an older lap left, and it is no time. A
    // poll that reads up to a time goes past the padding to the records after it. If this fails, a stale byte that
    // reads as a time later than the poll's holds the ring at the padding for good (in exact mode, the program waits
    // for room that never comes).
    void paddingCarriesNoTime()
    {
        QTemporaryDir dir;
        constexpr uint64_t kDataBytes = 4096;
        const QString path = dir.filePath(QStringLiteral("%1-1.ring").arg(getpid()));
        const int fd = ::open(path.toLocal8Bit().constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        QVERIFY(fd >= 0);
        QCOMPARE(::ftruncate(fd, off_t(agent::kRingHeaderBytes + kDataBytes)), 0);
        void *mem = ::mmap(nullptr, agent::kRingHeaderBytes + kDataBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
        QVERIFY(mem != MAP_FAILED);
        auto *h = static_cast<agent::RingHeader *>(mem);
        h->magic = agent::kRingMagic;
        h->version = agent::kRingVersion;
        h->pid = uint32_t(getpid()); // alive: the image does not end
        h->dataBytes = kDataBytes;
        h->allocInterval = 1;
        h->reservedBytes.store(kDataBytes);
        uint8_t *data = static_cast<uint8_t *>(mem) + agent::kRingHeaderBytes;
        // A padding of 64 bytes whose body holds a stale "time" far past any poll's, then a free at time 100.
        constexpr uint32_t kPadding = 64;
        const uint64_t stale = UINT64_MAX / 2;
        std::memcpy(data + 16, &stale, sizeof stale);
        auto *padding = reinterpret_cast<agent::RecordHeader *>(data);
        padding->bytes = kPadding;
        padding->type.store(uint32_t(agent::RecordType::Padding));
        auto *free = reinterpret_cast<agent::FreeRecord *>(data + kPadding);
        free->header.bytes = uint32_t(sizeof(agent::FreeRecord));
        free->tid = 1;
        free->timeNs = 100;
        free->address = 0x1000;
        free->header.type.store(uint32_t(agent::RecordType::Free));
        h->head.store(kPadding + sizeof(agent::FreeRecord));

        RingReader rings(dir.path().toStdString());
        CountingSink sink(1);
        QCOMPARE(rings.poll(RingSinks{.memory = &sink}, 1000), size_t(2));
        QCOMPARE(sink.frees, uint64_t(1));
        QCOMPARE(h->tail.load(), uint64_t(kPadding + sizeof(agent::FreeRecord)));
        QCOMPARE(rings.counters().detours, uint64_t(1)); // a padding short of the ring's end
        ::munmap(mem, agent::kRingHeaderBytes + kDataBytes);
    }

    // The registers and stack an allocation sample carries unwind with the session's unwinder: past the agent's
    // own frames, the first frame is the function that called malloc, and the walk reaches main.
    void allocationStacksUnwind()
    {
        CountingSink sink(1);
        sink.unwindSizes = {777, 4099};
        const Run run = runTarget(sink, {QStringLiteral("no-exec"), QStringLiteral("0"), QStringLiteral("500")}, 1);
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 0);
        const auto firstOutsideAgent = [](const QStringList &frames) {
            for (const QString &f : frames)
                if (!f.startsWith(QLatin1String("libemberline_agent.so:")))
                    return f;
            return QString();
        };
        for (const auto &[size, caller] : {std::pair<uint64_t, const char *>{777, "alloc_truths:main"},
                                           std::pair<uint64_t, const char *>{4099, "alloc_truths:threadWork"}}) {
            const QStringList frames = sink.unwound[size];
            qInfo("malloc(%llu): %s", qulonglong(size), qPrintable(frames.join(QLatin1String(" <- "))));
            QVERIFY2(!frames.isEmpty() && frames.front().startsWith(QLatin1String("libemberline_agent.so:")),
                     qPrintable(frames.join(QLatin1Char(' '))));
            QCOMPARE(firstOutsideAgent(frames), QString::fromLatin1(caller));
        }
        QVERIFY2(sink.unwound[777].contains(QLatin1String("alloc_truths:main")),
                 qPrintable(sink.unwound[777].join(QLatin1Char(' '))));
    }

    // Interval 1: every allocation of every site, in every process image, equals the program's own count.
    void exactModeEqualsTheTruths()
    {
        CountingSink sink(1);
        const Run run = runTarget(sink, {QStringLiteral("exec"), QStringLiteral("4")}, 1);
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.truths.size(), 8);
        const QString mismatch = truthMismatch(sink, run);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // Three images: the program, its forked child (with its parent's pid) and the exec'd program.
        QCOMPARE(sink.started.size(), size_t(3));
        QCOMPARE(sink.ended, sink.started);
        const uint32_t parent = run.truths.front().pid;
        const uint32_t child = std::find_if(run.truths.begin(), run.truths.end(), [](const Truth &t) {
                                   return t.site == QLatin1String("forked");
                               })->pid;
        QCOMPARE(sink.parents[child], parent);
        QCOMPARE(sink.images[parent], 2);
        // The heap counts (every block's usable size, added at its allocation and taken off at its free) hold at each
        // image's end exactly what the records left live: the program and the exec'd image, whose every block they
        // saw. A forked child frees its parent's blocks too: its counts say they are not whole.
        QCOMPARE(sink.countedUsable[parent].size(), size_t(2));
        for (size_t i = 0; i < 2; ++i) {
            QVERIFY(sink.countedUsable[parent][i].has_value());
            QVERIFY(sink.recordedUsable[parent][i] > 0);
            QCOMPARE(uint64_t(*sink.countedUsable[parent][i]), sink.recordedUsable[parent][i]);
        }
        QCOMPARE(sink.countedUsable[child].size(), size_t(1));
        QVERIFY(!sink.countedUsable[child][0].has_value());
        QCOMPARE(run.counters.allocsDropped, uint64_t(0));
        QCOMPARE(sink.doubleAllocations, uint64_t(0));
        // Every allocation carries registers and a stack copy for the unwinder.
        QCOMPARE(sink.withStack, sink.allocations);
    }

    // The default interval on 1 GiB of 64 KiB blocks: the estimate within five standard deviations of the
    // truth (the binomial spread of the sampled count), no free lost: nothing of the site left live.
    void samplingEstimatesTheTruth()
    {
        const uint64_t interval = uint64_t(512) * 1024;
        CountingSink sink(interval);
        // A ring that holds the whole burst (about 2,000 samples of 8 KiB stacks in a fraction of a second): what
        // is measured here is the estimate, not how fast a ring drains.
        const Run run = runTarget(sink, {QStringLiteral("no-exec"), QStringLiteral("1024")}, interval, -1,
                                  QStringLiteral("67108864"));
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 0);
        const auto big = std::find_if(run.truths.begin(), run.truths.end(),
                                      [](const Truth &t) { return t.site == QLatin1String("big"); });
        QVERIFY(big != run.truths.end());
        const SiteCount site = sink.sites[{big->pid, 65521}];
        const double p = -std::expm1(-65521.0 / double(interval));
        const double sd = std::sqrt(double(big->count) * p * (1 - p)) / (double(big->count) * p); // relative
        const double error = std::abs(site.estimatedBytes - double(big->bytes)) / double(big->bytes);
        qInfo("big: %llu of %llu blocks sampled, %llu samples dropped, estimate %.0f of %llu bytes (error %.2f%%, "
              "sd %.2f%%)",
              qulonglong(site.count), qulonglong(big->count), qulonglong(run.counters.allocsDropped),
              site.estimatedBytes, qulonglong(big->bytes), error * 100, sd * 100);
        QVERIFY(site.count > 0);
        QVERIFY2(error < 5 * sd, qPrintable(QString::number(error)));
        QCOMPARE(site.leakedCount, uint64_t(0)); // every sampled block's free arrived
        QCOMPARE(sink.unknownFrees, uint64_t(0));
        QCOMPARE(run.counters.allocsDropped, uint64_t(0));
        // The leaked calloc site (100 blocks of 3333 bytes) is estimated as leaking, within its own spread.
        const SiteCount leaked = sink.sites[{big->pid, 3333}];
        QCOMPARE(leaked.leakedCount, leaked.count);
    }

    // A ring far too small for what exact mode records: the program waits for room (nothing is lost) and the
    // counts still equal the truths.
    void exactModeWaitsForRoom()
    {
        CountingSink sink(1);
        const Run run =
            runTarget(sink, {QStringLiteral("no-exec"), QStringLiteral("8")}, 1, -1, QStringLiteral("65536"));
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 0);
        const auto big = std::find_if(run.truths.begin(), run.truths.end(),
                                      [](const Truth &t) { return t.site == QLatin1String("big"); });
        QVERIFY(big != run.truths.end());
        const std::pair<uint32_t, uint64_t> key(big->pid, 65521);
        QCOMPARE(sink.sites[key].count, big->count);
        QCOMPARE(run.counters.allocsDropped, uint64_t(0));
        QVERIFY(run.counters.waitNs > 0);
    }

    // CPython allocating at a steady pace (every object a malloc), at the default interval: the writers go round the
    // first 2 MiB of the 16 MiB ring while the session keeps up (laps back to its start, where a ring gone round
    // whole would not have lapped once: some 7 MiB of records), so that the pages they write stay mapped and cached;
    // nothing is lost. (Here the window stayed at 2 MiB; a session held up for tens of milliseconds on a busy machine
    // widens it once or twice.)
    void ringStaysInItsWindow()
    {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) {
            if (qgetenv("CI") == "true")
                QFAIL("python3 is missing (installer/install-deps.sh --test installs it)");
            QSKIP("python3 is not installed");
        }
        constexpr uint64_t kInterval = uint64_t(512) * 1024;
        CountingSink sink(kInterval);
        qputenv("PYTHONMALLOC", "malloc");
        const Run run = runTarget(sink,
                                  {QStringLiteral(EMBERLINE_TEST_DATA "/../targets/json_workload.py"),
                                   QStringLiteral("30"), QStringLiteral("pretty")},
                                  kInterval, -1, QString::number(16 << 20), 0, QStringLiteral("/usr/bin/python3"));
        qunsetenv("PYTHONMALLOC");
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 0);
        qInfo("%llu allocation records, %llu laps", static_cast<unsigned long long>(run.counters.allocations),
              static_cast<unsigned long long>(run.counters.laps));
        QVERIFY2(run.counters.laps > 0, qPrintable(QString::number(run.counters.allocations)));
        QVERIFY2(run.counters.widestWindow >= (uint64_t(2) << 20) && run.counters.widestWindow <= (uint64_t(8) << 20),
                 qPrintable(QString::number(run.counters.widestWindow)));
        QCOMPARE(run.counters.allocsDropped, uint64_t(0));
    }

    // A session that does not read for its first 300 ms (slow to start, or busy), in exact mode: the writers widen
    // their window as the unread records pass half of it, instead of waiting at its end; nothing is lost and the
    // counts equal the truths.
    void windowWidensForASlowSession()
    {
        CountingSink sink(1);
        const Run run =
            runTarget(sink, {QStringLiteral("no-exec"), QStringLiteral("64")}, 1, -1, QString::number(16 << 20), 300);
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 0);
        qInfo("%llu allocation records, %llu laps, window %llu",
              static_cast<unsigned long long>(run.counters.allocations),
              static_cast<unsigned long long>(run.counters.laps),
              static_cast<unsigned long long>(run.counters.widestWindow));
        QVERIFY2(run.counters.widestWindow > (uint64_t(2) << 20),
                 qPrintable(QString::number(run.counters.widestWindow)));
        QVERIFY(run.counters.widestWindow <= (uint64_t(16) << 20));
        QCOMPARE(run.counters.allocsDropped, uint64_t(0));
        const auto big = std::find_if(run.truths.begin(), run.truths.end(),
                                      [](const Truth &t) { return t.site == QLatin1String("big"); });
        QVERIFY(big != run.truths.end());
        const std::pair<uint32_t, uint64_t> key(big->pid, 65521);
        QCOMPARE(sink.sites[key].count, big->count);
    }

    // Exact mode, with the session a little behind and then stopping for 300 ms just after the writers went back to
    // the ring's start while it still read the lap before (a burst being unwound, a busy machine): the writers go on
    // past where that lap ended, widening their window, instead of waiting for the session to pass it; the session
    // then reads everything once and in order (every free after its allocation), and the counts equal the truths.
    void writersDetourPastAStalledLap()
    {
        CountingSink sink(1);
        // 2,048 blocks of 64 KiB, 200 µs apart: some 40 MiB of records a second, a lap of the 2 MiB window every 50 ms.
        const Run run = runTarget(
            sink, {QStringLiteral("big-only"), QStringLiteral("128"), QStringLiteral("0"), QStringLiteral("200")}, 1,
            -1, QString::number(16 << 20), 0, {}, 300);
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 0);
        qInfo("%llu allocation records, %llu laps, %llu detours, window %llu, %llu ms waited",
              static_cast<unsigned long long>(run.counters.allocations),
              static_cast<unsigned long long>(run.counters.laps), static_cast<unsigned long long>(run.counters.detours),
              static_cast<unsigned long long>(run.counters.widestWindow),
              static_cast<unsigned long long>(run.counters.waitNs / 1'000'000));
        QVERIFY2(run.stalled, "the writers were never a lap ahead of the session");
        QVERIFY(run.counters.detours > 0);
        QVERIFY(run.counters.widestWindow > (uint64_t(2) << 20));
        QCOMPARE(run.counters.allocsDropped, uint64_t(0));
        QCOMPARE(sink.unknownFrees, uint64_t(0));
        QCOMPARE(sink.doubleAllocations, uint64_t(0));
        QCOMPARE(run.truths.size(), 1);
        const QString mismatch = truthMismatch(sink, run);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    // The session is killed 50 ms into the run, with a ring far too small for exact mode: once its visits stop and
    // its process is gone, the agent stops waiting and passes everything through, and the program runs to its
    // end.
    void programFinishesWhenTheSessionIsGone()
    {
        CountingSink sink(1);
        const Run run =
            runTarget(sink, {QStringLiteral("no-exec"), QStringLiteral("64")}, 1, 50, QStringLiteral("65536"));
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.truths.size(), 7);
    }
};

QTEST_GUILESS_MAIN(TestRingReader)
#include "tst_ring_reader.moc"
