// The agent's heap counts (engine/agent/agent_heap.h) driven in this process with its real ring: malloc's fast path
// counting by predicted chunks with its probes' estimate of what the predictions miss, an attached agent's marks
// (only blocks allocated since the attach count; a sampled block's mark says so, for its free), and the hooks passing
// every call through while memory is not profiled. Fast: no program is launched.
#include "tests/engine/agent/agent_core_support.h"

#include "engine/memory/ring_header_reads.h"

#include <QtTest>

#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <thread>

using namespace agent_core_test;

class TestAgentHeap : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { agent::setRealFunctions({::malloc, ::free, ::sigaction}); }

    void cleanup() { agent::agentStop(); }

    // Malloc's fast path counts a block by the chunk its request gets under the C library's rules, before the call
    // (agent_heap.h: predictedChunk), and the C library hands some chunks out whole, 16 bytes over; one call in
    // kProbeEvery is measured after it and counts what the rules missed for the others. Two million mallocs of random
    // sizes through the hooks' own fast path at the default interval, a few thousand blocks live at a time (here some
    // 2% are handed out whole: 16 bytes each, over half a MB in all): the live heap in the ring stays within 100 KB of
    // the blocks' chunks (the estimate's error: some 24 KB, measured over 40 runs of random sizes, whose mean error
    // was 4 KB), and within the same of nothing once all are freed. If
    // this fails without a probe's count, the prediction's misses are not estimated: a launched program's live heap,
    // which calibrates its samples, drifts low for as long as it runs.
    void predictedHeapCountStaysWhole()
    {
        // As the preload front end has it (sampled blocks marked, so that no flag is set and the fast path predicts):
        // with the test's default, a flag stays set and every block would be measured after its call.
        agent::setRealFunctions({::malloc, ::free, ::sigaction, false, true});
        const auto restore = qScopeGuard([] { agent::setRealFunctions({::malloc, ::free, ::sigaction}); });
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(agent::agentStart(options(dir, uint64_t(512) * 1024, uint64_t(4) << 20)));
        RingReader rings(dir.path().toStdString());
        RecordingSink sink;
        ReaderThread reader(rings, sink);
        // The C library's malloc through a pointer, as the hook calls it (called by name, the compiler takes the read
        // of the block's header for a read of memory malloc left unset).
        static void *(*volatile realMalloc)(size_t) = ::malloc;
        const auto next = [](size_t n) { return realMalloc(n); };
        if (!agent::g_chunkSizes) {
            // Another allocator's sizes (a sanitizer's malloc) are asked for after every call: nothing is predicted,
            // and the fast path never counts.
            for (int i = 0; i < 200; ++i) {
                void *p = agent::allocate(24 + size_t(i), next);
                QVERIFY(agent::t_state.slot == nullptr);
                agent::release(p, [](void *block) { ::free(block); });
            }
            return;
        }
        std::vector<void *> live(4096, nullptr);
        int64_t truth = 0;
        int64_t missed = 0; // what the predictions alone would miss
        // A sampled block is handed out past its mark: its chunk is the allocator's block under it.
        const auto held = [](void *p) { return int64_t(chunkBytes(agent::isMarked(p) ? agent::markedBlockOf(p) : p)); };
        const auto release = [&](void *p) {
            truth -= held(p);
            agent::release(p, [](void *block) { ::free(block); });
        };
        uint64_t x = 88172645463325252ull;
        for (int i = 0; i < 2000000; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            void *&at = live[x % live.size()];
            if (at)
                release(at);
            const size_t size = 1 + (x >> 20) % 1000;
            at = agent::allocate(size, next);
            QVERIFY(at);
            truth += held(at);
            missed += held(at) - int64_t(agent::predictedChunk(size));
        }
        if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0)
            QVERIFY(agent::t_state.fast != nullptr); // the fast path's own count, predicted
        const int64_t counted = heapLiveOf(*agent::g_ring).value_or(-1);
        qInfo("live heap %lld counted, %lld held; the predictions alone would miss %lld", (long long)counted,
              (long long)truth, (long long)missed);
        QVERIFY2(missed > 300000, qPrintable(QString::number(missed))); // the case is there
        QVERIFY2(std::abs(counted - truth) < 100000, qPrintable(QString::number(counted - truth)));
        for (void *&p : live)
            release(p);
        const int64_t left = heapLiveOf(*agent::g_ring).value_or(-1);
        QVERIFY2(std::abs(left) < 100000, qPrintable(QString::number(left)));
        reader.stop();
        QVERIFY(sink.allocations > 0); // sampled on the way: the slow path counted its blocks too
    }

    // An agent loaded into a running program counts the heap of the blocks allocated since: a free of an older block
    // counts nothing, and a block of an earlier session, freed in the next, counts nothing there either. If this
    // fails, an attached program's live heap takes the older blocks' frees off the newer ones' (it reads low, or
    // below zero), and the session cannot calibrate its samples to it.
    void attachedHeapCountsOnlyBlocksSinceTheAttach()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::vector<void *> older(100);
        for (void *&p : older)
            p = ::malloc(1000);
        const Attached attached;
        QVERIFY(agent::agentStart(options(dir, uint64_t(512) * 1024, uint64_t(1) << 20)));
        if (!agent::g_chunkSizes) { // another allocator's blocks may lie closer than the marks' granule
            QVERIFY(!agent::attachedMarksOn());
            QVERIFY(!heapLiveOf(*agent::g_ring));
            for (void *p : older)
                releaseBlock(p);
            return;
        }
        QVERIFY(agent::attachedMarksOn());
        std::vector<void *> newer;
        int64_t live = 0;
        for (int i = 0; i < 50; ++i) {
            newer.push_back(agent::allocated(::malloc(700 + 16 * i), 700 + 16 * i));
            live += int64_t(chunkBytes(newer.back()));
        }
        for (int i = 0; i < 50; ++i)
            releaseBlock(older[size_t(i)]);
        for (int i = 0; i < 10; ++i) {
            live -= int64_t(chunkBytes(newer[size_t(i)]));
            releaseBlock(newer[size_t(i)]);
        }
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), live);
        // A failed realloc's block (freeing() then unfreed()) stays counted once.
        QVERIFY(agent::freeing(newer[10]));
        agent::unfreed(newer[10]);
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), live);
        agent::agentStop();
        QVERIFY(!agent::attachedMarksOn());

        // The next session: this session's blocks are older there.
        QVERIFY(agent::agentStart(options(dir, uint64_t(512) * 1024, uint64_t(1) << 20)));
        QVERIFY(agent::attachedMarksOn());
        for (size_t i = 10; i < newer.size(); ++i)
            releaseBlock(newer[i]);
        void *fresh = agent::allocated(::malloc(5000), 5000);
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), int64_t(chunkBytes(fresh)));
        releaseBlock(fresh);
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), int64_t(0));
        for (size_t i = 50; i < older.size(); ++i)
            releaseBlock(older[i]);
    }

    // An attached program's malloc and free through the hooks' own paths, sampled every 16 KiB on average: a sampled
    // block's mark says so (its free asks the free filter and is recorded), a block never sampled has the session's
    // plain mark (its free counts off the heap and asks nothing more), a block from before the attach neither. If the
    // first check fails, an attached session loses the frees of its samples (they read as leaks); if the counts fail,
    // the attached live heap drifts.
    void attachedFreesTellSampledBlocksByTheirMark()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::vector<void *> older(200);
        for (void *&p : older)
            p = ::malloc(100);
        const Attached attached;
        QVERIFY(agent::agentStart(options(dir, uint64_t(16) * 1024, uint64_t(8) << 20)));
        if (!agent::g_chunkSizes) {
            for (void *p : older)
                releaseBlock(p);
            QSKIP("another allocator's sizes (a sanitizer's malloc): no attached marks to tell blocks by");
        }
        QVERIFY(agent::attachedMarksOn());
        RingReader rings(dir.path().toStdString());
        RecordingSink sink;
        ReaderThread reader(rings, sink);
        static void *(*volatile realMalloc)(size_t) = ::malloc;
        const auto next = [](size_t n) { return realMalloc(n); };
        const auto freeNext = [](void *block) { ::free(block); };
        const uint8_t mark = agent::g_markNow;
        std::vector<void *> blocks;
        int64_t live = 0;
        for (int i = 0; i < 20000; ++i) {
            void *p = agent::allocate(32 + size_t(i % 200) * 8, next);
            QVERIFY(p);
            blocks.push_back(p);
            live += int64_t(chunkBytes(p));
        }
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), live);
        reader.stop();
        const uint64_t sampled = sink.allocations;
        QVERIFY2(sampled > 100, qPrintable(QString::number(sampled))); // the case is there
        int sampledMarks = 0;
        for (void *p : blocks) {
            const uint8_t *byte = agent::markByteOf(uint64_t(p));
            QVERIFY(byte);
            const bool wasSampled = sink.live.count(uint64_t(p)) != 0;
            QCOMPARE(*byte, uint8_t(wasSampled ? (mark | agent::kMarkSampled) : mark));
            sampledMarks += wasSampled ? 1 : 0;
        }
        QCOMPARE(uint64_t(sampledMarks), sampled);
        for (void *p : older)
            agent::release(p, freeNext);
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), live);
        for (void *p : blocks)
            agent::release(p, freeNext);
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), int64_t(0));
        RecordingSink after;
        ReaderThread more(rings, after);
        more.stop();
        // Every sample's free is recorded, and no other free.
        QCOMPARE(after.frees, sampled);
        QCOMPARE(after.unknownFrees, sampled); // this sink saw their allocations in the first one
        for (void *p : blocks)
            QCOMPARE(*agent::markByteOf(uint64_t(p)), uint8_t(0));
    }

    // While memory is off (the agent retired after a detach, or running for CPU alone) the hooks pass every call on:
    // no countdown, no heap count, no slow path; once a new session starts counting, the thread counts in the ring
    // again from its first call. If the first half fails, every malloc and free of such a program pays for counting
    // that nobody reads (4 points of a CPython program's samples, profiled for CPU alone); if the second, an attach
    // after a detach loses the heap of every thread that allocated in between.
    void hooksPassThroughWhileOffAndCountAgainAtTheNextStart()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        if (!agent::g_chunkSizes) {
            // Another allocator's sizes (a sanitizer's malloc) are asked for on the slow path, every time: the fast
            // path never counts.
            QVERIFY(agent::agentStart(options(dir, uint64_t(512) * 1024, uint64_t(1) << 20)));
            releaseBlock(agent::allocated(::malloc(64), 64));
            QVERIFY(agent::t_state.slot == nullptr);
            return;
        }
        const Attached attached;
        QVERIFY(agent::agentStart(options(dir, uint64_t(512) * 1024, uint64_t(1) << 20)));
        QVERIFY(!agent::passingThrough());
        releaseBlock(agent::allocated(::malloc(64), 64));
        QVERIFY(agent::t_state.slot != nullptr);
        QVERIFY(agent::t_state.slot->owner.load() != 0); // a slot of the ring

        agent::agentRetire(); // the session's detach: the thread is sent back to the slow path
        QVERIFY(agent::t_state.slot == nullptr);
        QVERIFY(agent::passingThrough());
        const int64_t countdown = agent::t_state.state;
        const uint64_t allocations = agent::totalAllocations(agent::t_state);
        void *between = agent::allocated(::malloc(300), 300);
        releaseBlock(agent::allocated(::malloc(500), 500));
        // Passed on: neither counted down nor counted, and no slow path took a sink.
        QCOMPARE(agent::t_state.state, countdown);
        QCOMPARE(agent::totalAllocations(agent::t_state), allocations);
        QVERIFY(agent::t_state.slot == nullptr);

        QVERIFY(agent::agentRestart(options(dir, uint64_t(512) * 1024, uint64_t(1) << 20)));
        QVERIFY(!agent::passingThrough());
        QVERIFY(agent::attachedMarksOn());
        void *fresh = agent::allocated(::malloc(2000), 2000);
        QVERIFY(agent::t_state.slot != nullptr);
        QVERIFY(agent::t_state.slot->owner.load() != 0);
        releaseBlock(between); // allocated before this session: counts nothing here
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), int64_t(chunkBytes(fresh)));
        releaseBlock(fresh);
        QCOMPARE(heapLiveOf(*agent::g_ring).value_or(-1), int64_t(0));
    }

    // The mode the session asked for decides: CPU alone passes every allocation on, memory counts, and a stopped agent
    // counts down to its next start from the environment.
    void hooksPassThroughOnlyWhereMemoryIsOff()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        agent::AgentOptions cpuOnly = options(dir, 0, uint64_t(1) << 20);
        cpuOnly.cpuPeriodNs = 10'000'000;
        QVERIFY(agent::agentStart(cpuOnly)); // a ring, for the CPU samples
        QVERIFY(agent::passingThrough());
        const int64_t countdown = agent::t_state.state;
        releaseBlock(agent::allocated(::malloc(100), 100));
        QCOMPARE(agent::t_state.state, countdown);
        agent::agentStop();
        QVERIFY(!agent::passingThrough());

        QVERIFY(agent::agentStart(options(dir, uint64_t(512) * 1024, uint64_t(1) << 20)));
        QVERIFY(!agent::passingThrough());
        const uint64_t allocations = agent::totalAllocations(agent::t_state);
        releaseBlock(agent::allocated(::malloc(100), 100));
        QCOMPARE(agent::totalAllocations(agent::t_state), allocations + 1);
        agent::agentStop();
    }

    // Malloc's and free's fast paths test one pointer of the thread's (ThreadState::fast), no flag: it is set only
    // while no hook flag is set, and whoever raises one clears it in every thread that holds a slot. Two threads take
    // the fast path; a flag raised on one (marks refused: frees must ask the free filter) clears both pointers, the
    // calls then take the other path and count all the same, and neither pointer comes back while the flag stays. If
    // this fails, a thread keeps the fast path past a flag: an attached program's blocks go unmarked, or a sampled
    // block's free is missed as the filter is not asked. Last: marks, once refused, stay refused in the process.
    void fastPointerStandsForNoFlag()
    {
        // As the preload front end has it: the hooks are the whole malloc family, sampled blocks may be marked, and
        // no flag is left set once the agent runs.
        agent::setRealFunctions({::malloc, ::free, ::sigaction, false, true});
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(agent::agentStart(options(dir, uint64_t(512) * 1024, uint64_t(1) << 20)));
        static void *(*volatile realMalloc)(size_t) = ::malloc;
        const auto next = [](size_t n) { return realMalloc(n); };
        const auto freeNext = [](void *block) { ::free(block); };
        const auto churn = [&] {
            for (int i = 0; i < 1000; ++i)
                agent::release(agent::allocate(16 + size_t(i % 100) * 8, next), freeNext);
        };
        churn();
        if (!agent::g_chunkSizes || prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0) {
            QVERIFY(agent::t_state.fast == nullptr); // no fast path without chunk sizes, nor under a seccomp filter
            return;
        }
        QVERIFY(agent::t_state.slot != nullptr);
        QCOMPARE(agent::t_state.fast, agent::t_state.slot);
        const int64_t before = heapLiveOf(*agent::g_ring).value_or(-1);
        // Blocks allocated on the fast path, freed after the flag on the other.
        std::vector<void *> held;
        int64_t heldBytes = 0;
        for (int i = 0; i < 300; ++i) {
            held.push_back(agent::allocate(100 + size_t(i) * 8, next));
            // A sampled block is handed out past its mark: its chunk is the allocator's block under it.
            void *block = agent::isMarked(held.back()) ? agent::markedBlockOf(held.back()) : held.back();
            heldBytes += int64_t(chunkBytes(block));
        }
        // Counted by prediction, corrected by probes (a probe that finds a miss counts it 63 times over: 1,008 bytes),
        // where the blocks hold some 400 KB.
        QVERIFY2(std::abs(heapLiveOf(*agent::g_ring).value_or(-1) - before - heldBytes) < 4096,
                 qPrintable(QString::number(heapLiveOf(*agent::g_ring).value_or(-1) - before - heldBytes)));

        std::atomic<int> step{0};
        agent::ThreadState *other = nullptr;
        std::thread worker([&] {
            other = &agent::t_state;
            churn();
            step.store(1);
            while (step.load() != 2)
                std::this_thread::yield();
            churn(); // after the flag: the other path
            step.store(3);
        });
        while (step.load() != 1)
            std::this_thread::yield();
        QVERIFY(__atomic_load_n(&other->fast, __ATOMIC_RELAXED) != nullptr);
        agent::refuseMarks();
        QVERIFY(agent::t_state.fast == nullptr);
        QVERIFY(__atomic_load_n(&other->fast, __ATOMIC_RELAXED) == nullptr);
        step.store(2);
        churn();
        while (step.load() != 3)
            std::this_thread::yield();
        QVERIFY(agent::t_state.fast == nullptr);
        QVERIFY(__atomic_load_n(&other->fast, __ATOMIC_RELAXED) == nullptr);
        worker.join();
        for (void *p : held)
            agent::release(p, freeNext);
        // Every block was freed: the counts, fast or not, are whole (within the predictions' misses, as above).
        QVERIFY2(std::abs(heapLiveOf(*agent::g_ring).value_or(-1) - before) < 4096,
                 qPrintable(QString::number(heapLiveOf(*agent::g_ring).value_or(-1) - before)));
    }
};

QTEST_GUILESS_MAIN(TestAgentHeap)
#include "tst_agent_heap.moc"
