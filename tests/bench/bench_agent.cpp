// The memory agent's costs in the target, side by side in one run (numbers printed, never asserted):
//   bench_agent [BATCHES] [CALLS]   (EMBERLINE_BENCH_RINGS=DIR: the rings' folder's parent, default /dev/shm;
//                                    EMBERLINE_BENCH_AGENT=FILE: the agent library to measure, default the build's)
// - the unsampled path: the median time of a malloc(64)+free pair without the agent and with it (default interval,
//   a session reading the rings every 2 ms), and the difference;
// - a sampled event: every allocation recorded (interval 1) and timed one by one: p50 and p99 of malloc(4096)
//   with the stack copy and the ring write, beside the same calls without the agent; as fast as the program can
//   (the ring fills and exact mode waits), with a ring that holds them all (its pages made as they are first
//   written), and at a steady pace once the ring is warm (the event alone); and deep in the stack (a 32 KiB copy),
//   with the time of the program's own work right after it;
// - a burst of malloc+free pairs on two threads (16 B to 64 KiB): pairs a second without and with the agent, and
//   what the rings carried: allocations sampled, frees, sampled blocks left without their free (lost frees) and
//   samples dropped.
#include "engine/memory/ring_reader.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>

#include <cstdio>
#include <set>

using namespace emberline;
using namespace emberline::engine;

namespace {

class Counting : public MemoryRecordSink {
public:
    void onAllocation(const AgentAllocation &a) override
    {
        ++allocations;
        live.insert({a.image, a.address});
    }
    void onFree(uint64_t image, uint32_t, uint32_t, uint64_t, uint64_t address) override
    {
        ++frees;
        live.erase({image, address});
    }
    uint64_t allocations = 0, frees = 0;
    std::set<std::pair<uint64_t, uint64_t>> live;
};

struct Result {
    QByteArray out;
    Counting sink;
    RingCounters counters;
};

QString binary(const char *name)
{
    return QCoreApplication::applicationDirPath() + QLatin1Char('/') + QString::fromLatin1(name);
}

// The agent under test: the build's, or the one EMBERLINE_BENCH_AGENT names (another build's, to compare two).
QString agentLibrary()
{
    return qEnvironmentVariable("EMBERLINE_BENCH_AGENT",
                                QStringLiteral(EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so"));
}

// Runs the target, with the agent when `interval` > 0 and the rings read every 2 ms until it has exited; samples copy
// `stackBytes` of the stack (the agent's first copy, 8 KiB, when 0).
Result run(const QStringList &args, uint64_t interval, const QString &ringBytes = {}, uint32_t stackBytes = 0)
{
    Result result;
    // The rings' folder where a session makes it (AgentLink): on tmpfs (/dev/shm), unless EMBERLINE_BENCH_RINGS
    // names another parent (say /tmp, to compare with a file system that writes the rings back).
    const QString parent = qEnvironmentVariable("EMBERLINE_BENCH_RINGS", QStringLiteral("/dev/shm"));
    QTemporaryDir dir(parent + QStringLiteral("/emberline-bench-XXXXXX"));
    RingReader rings(dir.path().toStdString());
    if (stackBytes > 0)
        rings.setStackCopyBytes(stackBytes);
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (interval > 0) {
        env.insert(QStringLiteral("LD_PRELOAD"), agentLibrary());
        env.insert(QString::fromLatin1(agent::kEnvDirectory), dir.path());
        env.insert(QString::fromLatin1(agent::kEnvAllocInterval), QString::number(interval));
        if (!ringBytes.isEmpty())
            env.insert(QString::fromLatin1(agent::kEnvRingBytes), ringBytes);
    }
    process.setProcessEnvironment(env);
    process.start(binary("bench_agent_target"), args);
    process.waitForStarted();
    while (!process.waitForFinished(2))
        rings.poll(RingSinks{.memory = &result.sink});
    rings.poll(RingSinks{.memory = &result.sink});
    result.counters = rings.counters();
    result.out = process.readAllStandardOutput().trimmed();
    return result;
}

double field(const QByteArray &out, const char *name)
{
    const QList<QByteArray> words = out.split(' ');
    for (qsizetype i = 0; i + 1 < words.size(); ++i)
        if (words[i] == name)
            return words[i + 1].toDouble();
    return -1;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QString batches = argc > 1 ? QString::fromLatin1(argv[1]) : QStringLiteral("31");
    const QString calls = argc > 2 ? QString::fromLatin1(argv[2]) : QStringLiteral("20000");
    const uint64_t interval = uint64_t(512) * 1024;

    // Interleaved, so that a busy machine affects both alike.
    double plain = 0, agent = 0;
    for (int round = 0; round < 3; ++round) {
        const double p = field(run({QStringLiteral("pairs"), batches}, 0).out, "pair_ns");
        const double a = field(run({QStringLiteral("pairs"), batches}, interval).out, "pair_ns");
        std::printf("round %d: malloc+free pair %.2f ns plain, %.2f ns with the agent\n", round + 1, p, a);
        plain += p / 3;
        agent += a / 3;
    }
    std::printf("unsampled path: %.2f ns plain, %.2f ns with the agent: +%.2f ns a pair (mean of the rounds' "
                "medians)\n",
                plain, agent, agent - plain);

    const Result plainCalls = run({QStringLiteral("calls"), calls, QStringLiteral("4096")}, 0);
    const Result exactCalls = run({QStringLiteral("calls"), calls, QStringLiteral("4096")}, 1);
    // A ring that holds every record: the cost of the event itself, without waiting for the session.
    const Result roomyCalls =
        run({QStringLiteral("calls"), calls, QStringLiteral("4096")}, 1, QStringLiteral("268435456"));
    std::printf("malloc(4096) plain: %s\n", plainCalls.out.constData());
    std::printf("malloc(4096) every call sampled (interval 1): %s; %llu recorded, %llu dropped, waited %.1f ms\n",
                exactCalls.out.constData(), qulonglong(exactCalls.sink.allocations),
                qulonglong(exactCalls.counters.allocsDropped), double(exactCalls.counters.waitNs) / 1e6);

    std::printf("the same with a 256 MiB ring: %s; %llu recorded, %llu dropped, waited %.1f ms\n",
                roomyCalls.out.constData(), qulonglong(roomyCalls.sink.allocations),
                qulonglong(roomyCalls.counters.allocsDropped), double(roomyCalls.counters.waitNs) / 1e6);
    // A sampled event on its own: every call recorded, one every 50 us (the session keeps up: no wait), timed once
    // the ring's first lap has made its pages.
    const Result pacedCalls = run({QStringLiteral("paced"), calls, QStringLiteral("4096"), QStringLiteral("50")}, 1);
    std::printf("a sampled event at a steady pace (one call every 50 us, after the ring's first lap): %s; %llu "
                "recorded, %llu dropped, waited %.1f ms\n",
                pacedCalls.out.constData(), qulonglong(pacedCalls.sink.allocations),
                qulonglong(pacedCalls.counters.allocsDropped), double(pacedCalls.counters.waitNs) / 1e6);

    // A sampled event deep in the stack (40 KiB: the copy is the session's largest, 32 KiB), every call recorded at a
    // steady pace, each followed by a walk over 256 KiB: the copy's cost to the call, and to the work after it
    // through the caches (the ring's lines, the stack's). Interleaved, three rounds.
    for (int round = 0; round < 3; ++round) {
        const QStringList deep = {QStringLiteral("deep"), QStringLiteral("4000"), QStringLiteral("40"),
                                  QStringLiteral("256")};
        const Result plainDeep = run(deep, 0);
        const Result agentDeep = run(deep, 1, {}, 32768);
        std::printf("deep sampled event, round %d: plain %s; agent %s; %llu recorded, %llu dropped, waited %.1f ms\n",
                    round + 1, plainDeep.out.constData(), agentDeep.out.constData(),
                    qulonglong(agentDeep.sink.allocations), qulonglong(agentDeep.counters.allocsDropped),
                    double(agentDeep.counters.waitNs) / 1e6);
    }

    const Result plainBurst = run({QStringLiteral("burst"), QStringLiteral("20")}, 0);
    const Result agentBurst = run({QStringLiteral("burst"), QStringLiteral("20")}, interval);
    std::printf("burst, 2 threads: %.0f pairs/s plain, %.0f pairs/s with the agent\n",
                field(plainBurst.out, "burst_pairs_per_second"), field(agentBurst.out, "burst_pairs_per_second"));
    std::printf("burst rings: %llu allocations sampled, %llu frees, %zu sampled blocks without their free, %llu "
                "samples dropped\n",
                qulonglong(agentBurst.sink.allocations), qulonglong(agentBurst.sink.frees), agentBurst.sink.live.size(),
                qulonglong(agentBurst.counters.allocsDropped));
    return 0;
}
