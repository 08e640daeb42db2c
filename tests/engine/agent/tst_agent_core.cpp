// The agent's core (engine/agent/agent_core.h) driven in this process with its real ring, read by the session's real
// reader (engine/memory/ring_reader.h): exact mode records every allocation and free in order through many laps of a
// small ring, a full ring drops samples but never the free of a tracked block, a record that a signal handler nests
// in any writer's held record never waits for room that only its own thread could make, and a forked child starts a
// ring of its own. Fast: no program is launched.
#include "tests/engine/agent/agent_core_support.h"

#include "engine/agent/agent_writer.h"

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;

// Under AddressSanitizer, malloc is the sanitizer's: the agent asks its malloc_usable_size.
#if defined(__SANITIZE_ADDRESS__)
#define AGENT_CORE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AGENT_CORE_TEST_ASAN 1
#endif
#endif

namespace agent_core_test {

// `count` blocks of `bytes`, each told to the agent as allocated (a sample each, at an interval of 2 bytes).
std::vector<void *> sampleBlocks(int count, size_t bytes)
{
    std::vector<void *> blocks;
    for (int i = 0; i < count; ++i) {
        void *p = ::malloc(bytes);
        agent::allocated(p, bytes);
        blocks.push_back(p);
    }
    return blocks;
}

// The paths of the module records read.
class ModulePaths : public ModuleRecordSink {
public:
    void onImageModule(uint64_t, uint32_t, uint64_t, uint64_t, uint64_t, std::string_view path) override
    {
        paths.emplace_back(path);
    }
    bool named(const char *file) const
    {
        return std::any_of(paths.begin(), paths.end(), [&](const std::string &p) { return p.ends_with(file); });
    }
    std::vector<std::string> paths;
};

std::atomic<int> g_nested{0};
std::atomic<bool> g_heldWhileNested{false};
std::atomic<uint32_t> g_depthWhileNested{0};
uint64_t g_waitBefore = 0;
uint64_t g_waitAfter = 0;
void *g_nestedBlock = nullptr;

// What a signal handler of the program does when it lands inside a writer's held record: an allocation in exact mode,
// which may wait for room only when nothing of its own thread holds the reader up.
void nestAnAllocation(emberline::agent::RecordHeader *)
{
    emberline::agent::g_afterReserve = nullptr; // the nested record's own reserve does not nest again
    g_heldWhileNested.store(emberline::agent::t_state.holding);
    g_depthWhileNested.store(emberline::agent::t_state.depth);
    g_waitBefore = emberline::agent::g_ring->waitNs.load();
    emberline::agent::writeAlloc(g_nestedBlock, 16, true, true, 0, 0);
    g_waitAfter = emberline::agent::g_ring->waitNs.load();
    g_nested.fetch_add(1);
}

} // namespace agent_core_test
using namespace agent_core_test;

class TestAgentCore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        agent::setRealFunctions({::malloc, ::free, ::sigaction});
#ifndef AGENT_CORE_TEST_ASAN
        QVERIFY(agent::heapSizesKnown());
        QVERIFY2(agent::g_chunkSizes, "the C library's chunk headers were not recognized");
#endif
    }

    void cleanup()
    {
        agent::agentStop();
    }

    // Every allocation and free, in order, through dozens of laps of a 64 KiB ring, each with the block's heap bytes
    // and the thread's running count.
    void exactModeRecordsEverythingInOrderThroughLaps()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        RingReader rings(dir.path().toStdString());
        RecordingSink sink;
        QVERIFY(agent::agentStart(options(dir, 1, 65536)));
        std::vector<uint64_t> written;
        std::map<uint64_t, uint64_t> bytes;
        {
            ReaderThread reader(rings, sink);
            constexpr size_t kBlocks = 400;
            for (size_t i = 0; i < kBlocks; ++i) {
                void *p = ::malloc(16 + i * 8);
                agent::allocated(p, 16 + i * 8);
                written.push_back(uint64_t(p));
                bytes[uint64_t(p)] = chunkBytes(p);
                if (agent::freeing(p))
                    ::free(p);
            }
            reader.stop();
        }
        QCOMPARE(sink.allocations, uint64_t(written.size()));
        QCOMPARE(sink.frees, uint64_t(written.size()));
        QVERIFY(sink.order == written);     // in order, every one read once
        QCOMPARE(agent::t_state.depth, 0u); // every AgentScope left
        QCOMPARE(sink.unknownFrees, uint64_t(0));
        QCOMPARE(sink.doubleAllocations, uint64_t(0));
        QCOMPARE(sink.lastThreadAllocations, uint64_t(written.size()));
        for (const auto &[address, heapBytes] : bytes)
            QCOMPARE(sink.heapBytes[address], heapBytes);
        const RingCounters counters = rings.counters();
        QVERIFY2(counters.laps >= 20, qPrintable(QString::number(counters.laps))); // 400 records of 8 KiB
        QCOMPARE(counters.allocsDropped, uint64_t(0));
    }

    // The reader stops mid-lap; the writers come round to its unread records and go on past where the lap before
    // ended (the ring beyond the 2 MiB window), and the reader then takes every record once, in order: the old lap's
    // end, the new lap, the detour.
    void writersDetourPastAnUnreadLap()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        RingReader rings(dir.path().toStdString());
        RecordingSink sink;
        QVERIFY(agent::agentStart(options(dir, 1, uint64_t(4) << 20)));
        // Fake blocks: a record's address is its serial number's place in this buffer (the heap bytes read before
        // each one are the buffer's).
        std::vector<uint64_t> blocks(size_t(2) * 4096, 0);
        std::vector<uint64_t> written;
        const auto write = [&] {
            void *block = &blocks[2 * written.size() + 1];
            const auto address = uint64_t(block);
            const uint64_t droppedBefore = agent::g_ring->allocsDropped.load();
            agent::writeAlloc(block, 16, true, false, 0, 0);
            if (agent::g_ring->allocsDropped.load() == droppedBefore)
                written.push_back(address);
            return agent::g_ring->allocsDropped.load() == droppedBefore;
        };
        // Read along up to 1.5 MiB into the first lap.
        while (agent::g_ring->head.load() < (uint64_t(3) << 19)) {
            QVERIFY(write());
            rings.poll({.memory = &sink});
        }
        rings.poll({.memory = &sink});
        QCOMPARE(sink.allocations, uint64_t(written.size()));
        // Nobody reads: the window's end, a new lap up to the unread records, then past the old lap's end.
        const uint64_t lapStart = written.size();
        while (write() && written.size() < 4000) {}
        QVERIFY(agent::g_ring->head.load() > (uint64_t(4) << 20)); // a lap
        QVERIFY2(agent::g_ring->windowBytes.load() > (uint32_t(2) << 20), "the window did not widen for a detour");
        rings.poll({.memory = &sink});
        QVERIFY2(rings.counters().detours >= 1, qPrintable(QString::number(rings.counters().detours)));
        QVERIFY(rings.counters().laps >= 1);
        QCOMPARE(sink.allocations, uint64_t(written.size()));
        QVERIFY(sink.order == written); // every record once, in order
        QVERIFY(written.size() - lapStart > 300);
    }

    // Nobody reads: the ring fills, sampled allocations are dropped (and counted), but the free of every tracked
    // block still finds its room.
    void fullRingDropsSamplesNeverFrees()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(agent::agentStart(options(dir, 2, 65536)));
        const std::vector<void *> blocks = sampleBlocks(64, 4096);
        const uint64_t dropped = agent::g_ring->allocsDropped.load();
        const uint64_t tracked = agent::g_ring->tracked.load();
        QVERIFY2(dropped > 0, "a 64 KiB ring holds fewer than 64 samples of 8 KiB");
        QVERIFY(tracked > 0);
        QCOMPARE(dropped + tracked, uint64_t(blocks.size()));
        for (void *p : blocks)
            if (agent::freeing(p))
                ::free(p);
        QCOMPARE(agent::g_ring->untrackedFrees.load(), uint64_t(0));
        QCOMPARE(agent::g_ring->tracked.load(), uint64_t(0));
        // Read now: every recorded block was freed, none unknown.
        RingReader rings(dir.path().toStdString());
        RecordingSink sink;
        rings.poll({.memory = &sink});
        QCOMPARE(sink.allocations, tracked);
        QCOMPARE(sink.frees, tracked);
        QCOMPARE(sink.unknownFrees, uint64_t(0));
        QVERIFY(sink.live.empty());
    }

    // A module loaded while the ring is full: its record finds no room, and the next listing writes it. If this fails,
    // the module was taken for listed with its record lost (its allocations "[unknown]" once the process is gone).
    void moduleRecordWrittenOnceThereIsRoom()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(agent::agentStart(options(dir, 2, 65536)));
        const std::vector<void *> blocks = sampleBlocks(64, 4096);
        QVERIFY2(agent::g_ring->allocsDropped.load() > 0, "no room for a sample");
        for (int i = 0; i < 4096; ++i) // and none for a small record either (a thread's record: 24 bytes)
            agent::writeThread(1, true);
        void *library = ::dlopen(EMBERLINE_BINARY_DIR "/tests/targets/libdlwork.so", RTLD_NOW);
        QVERIFY2(library, ::dlerror());
        agent::writeNewModules(); // no room
        for (void *p : blocks)
            if (agent::freeing(p))
                ::free(p);
        RingReader rings(dir.path().toStdString());
        RecordingSink sink;
        ModulePaths modules;
        rings.poll({.memory = &sink, .modules = &modules});
        QVERIFY2(!modules.named("libdlwork.so"), "no room for it in the full ring");
        QVERIFY2(modules.named("tst_agent_core"), "the program's own, listed as the ring was made");
        agent::writeNewModules();
        rings.poll({.memory = &sink, .modules = &modules});
        QVERIFY(modules.named("libdlwork.so"));
        ::dlclose(library);
    }

    void nestedRecordNeverWaitsForItsOwnThread_data()
    {
        QTest::addColumn<QString>("writer");
        for (const char *w : {"thread", "totals", "free", "alloc"})
            QTest::newRow(w) << QString::fromLatin1(w);
    }

    // Exact mode, nobody reading, the ring nearly full: a writer's record fits with the room it keeps for a nested
    // one, and a signal handler's allocation nested in it (before it is published) takes that room without waiting.
    // Were the outer record not held, the nested one would wait for the reader, who waits for the outer record: it
    // would wait until the session was taken for gone.
    void nestedRecordNeverWaitsForItsOwnThread()
    {
        QFETCH(QString, writer);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(agent::agentStart(options(dir, 1, 65536)));
        void *block = ::malloc(16);
        g_nestedBlock = block;
        // Allocation records of 8 KiB until one finds no room with the room it keeps for a nested record; for an
        // outer allocation record, one fewer in a ring of its own (it must fit itself).
        int fitted = 0;
        while (agent::g_ring->allocsDropped.load() == 0 && fitted < 100) {
            agent::writeAlloc(block, 16, true, false, 0, 0);
            if (agent::g_ring->allocsDropped.load() == 0)
                ++fitted;
        }
        QVERIFY(fitted > 1 && fitted < 100);
        if (writer == QLatin1String("alloc")) {
            agent::agentStop();
            QTemporaryDir other;
            QVERIFY(agent::agentStart(options(other, 1, 65536)));
            for (int i = 0; i + 1 < fitted; ++i)
                agent::writeAlloc(block, 16, true, false, 0, 0);
            QCOMPARE(agent::g_ring->allocsDropped.load(), uint64_t(0));
        }
        g_nested.store(0);
        g_heldWhileNested.store(false);
        agent::g_afterReserve = nestAnAllocation;
        const uint64_t droppedBefore = agent::g_ring->allocsDropped.load();
        if (writer == QLatin1String("thread"))
            agent::writeThread(uint32_t(gettid()), true);
        else if (writer == QLatin1String("totals"))
            agent::writeTotals(1, 16);
        else if (writer == QLatin1String("free"))
            agent::writeFree(block, true, false);
        else
            agent::writeAlloc(block, 16, true, false, 0, 0);
        agent::g_afterReserve = nullptr;
        QCOMPARE(g_nested.load(), 1);
        QVERIFY2(g_heldWhileNested.load(), "the writer's record was not held while a handler could nest in it");
        QVERIFY(g_depthWhileNested.load() >= 1); // inside the writer's AgentScope
        QCOMPARE(agent::t_state.depth, 0u);      // every scope left
        QVERIFY(!agent::t_state.holding);        // every record published
        QCOMPARE(g_waitAfter - g_waitBefore, uint64_t(0));
        QCOMPARE(agent::g_ring->allocsDropped.load(), droppedBefore); // the nested record was written
        ::free(block);
    }

    // A forked child's first allocation finds a ring of its own (its parent's stays the parent's), made by the
    // agent's fork handler.
    void forkedChildGetsItsOwnRing()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(agent::agentStart(options(dir, 1, uint64_t(1) << 20)));
        agent::agentStartThreads(); // the fork handler
        RingReader rings(dir.path().toStdString());
        RecordingSink sink;
        void *p = ::malloc(64);
        agent::allocated(p, 64);
        const pid_t child = fork();
        if (child == 0) {
            for (int i = 0; i < 10; ++i) {
                void *q = ::malloc(128);
                agent::allocated(q, 128);
            }
            agent::agentFinish();
            _exit(agent::g_ring && agent::g_ring->parentPid == uint32_t(getppid()) ? 0 : 3);
        }
        QVERIFY(child > 0);
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        QVERIFY(WIFEXITED(status));
        QCOMPARE(WEXITSTATUS(status), 0);
        rings.poll({.memory = &sink});
        QCOMPARE(sink.parents[uint32_t(child)], uint32_t(getpid()));
        QCOMPARE(sink.allocationsOf[uint32_t(child)], uint64_t(10));
        QCOMPARE(sink.allocationsOf[uint32_t(getpid())], uint64_t(1));
        if (agent::freeing(p))
            ::free(p);
    }

    // The records' clock (read through the time-stamp counter where the kernel's clock is the counter) keeps to
    // CLOCK_MONOTONIC: every stamp between the clock's readings just before and after it, give or take the rate's error
    // over an anchor's millisecond, for a tenth of a second of stamps in two threads, across many anchors.
    void recordClockKeepsToTheClock()
    {
        agent::recordClockStart();
        const auto stamps = [](uint64_t &worst, uint64_t &count) {
            const uint64_t end = agent::nowNs() + 100'000'000;
            for (uint64_t before = agent::nowNs(); before < end; before = agent::nowNs()) {
                const uint64_t stamp = agent::recordNs();
                const uint64_t after = agent::nowNs();
                const uint64_t off = stamp < before ? before - stamp : stamp > after ? stamp - after : 0;
                worst = off > worst ? off : worst;
                ++count;
            }
        };
        uint64_t worst[2] = {0, 0};
        uint64_t count[2] = {0, 0};
        std::thread other(stamps, std::ref(worst[1]), std::ref(count[1]));
        stamps(worst[0], count[0]);
        other.join();
        qInfo("%llu and %llu stamps, at most %llu ns and %llu ns off the clock",
              static_cast<unsigned long long>(count[0]), static_cast<unsigned long long>(count[1]),
              static_cast<unsigned long long>(worst[0]), static_cast<unsigned long long>(worst[1]));
        QVERIFY(count[0] > 1000 && count[1] > 1000);
        QVERIFY2(worst[0] < 2000 && worst[1] < 2000, "a stamp more than 2 µs off CLOCK_MONOTONIC");
    }
};

QTEST_GUILESS_MAIN(TestAgentCore)
#include "tst_agent_core.moc"
