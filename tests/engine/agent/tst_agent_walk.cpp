// The agent's own stack walk (engine/agent/agent_walk.h) in this process, with the tables the session's table server
// (engine/unwind/unwind_table_server.h) builds for it and hands over as the agent reads them: the module index in a
// ring, the arena file in the agent's folder. Real stacks of the test process (a recursion of ours under the C
// library's qsort, code without frame pointers) walked from their registers, against libunwind from the same ones;
// and the walks that must not be taken: a stack switched by swapcontext, a pc in anonymous code, an index being
// written or following older maps, a corrupt frame. The stacks written out (claimStack, settleStack) as threads race.
// Fast: no program is launched.

#include "engine/agent/agent_stack.h"
#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_walk.h"
#include "engine/agent/agent_writer.h"
#include "engine/unwind/unwind_table_server.h"
#include "tests/engine/unwind/unwind_test_stacks.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;

// Two callers of the same shape (a frame of the same size, the same call): the stacks under them differ in one return
// address only. Not folded into one function: each stores its own constant.
__attribute__((noinline)) void viaLeft(test::StackProbe &probe, const test::StackProbe::AtPoint &atPoint, int depth = 6)
{
    volatile int mark = 1;
    probe.underQsort(depth, atPoint);
    mark = mark + 1;
}
__attribute__((noinline)) void viaRight(test::StackProbe &probe, const test::StackProbe::AtPoint &atPoint,
                                        int depth = 6)
{
    volatile int mark = 2;
    probe.underQsort(depth, atPoint);
    mark = mark + 2;
}

class TstAgentWalk : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    agent::RingHeader *m_ring = nullptr;
    std::unique_ptr<UnwindTableServer> m_server;
    ElfCache m_elfs;
    std::unique_ptr<UnwindTableCache> m_tables;

    agent::ModuleIndex &index() { return *agent::moduleIndex(m_ring); }

    static agent::UnwindRegs regsOf(const unw_context_t &context)
    {
        const auto *uc = reinterpret_cast<const ucontext_t *>(&context);
        const greg_t *g = uc->uc_mcontext.gregs;
        return {uint64_t(g[REG_RIP]), uint64_t(g[REG_RSP]), uint64_t(g[REG_RBP])};
    }
    // A walk as a signal handler's nested in a walk takes it: without the thread's memo, every frame stepped.
    static agent::AgentWalk walkWithoutMemo(agent::UnwindRegs regs, bool firstIsReturn, uint64_t *pcs)
    {
        agent::t_state.memoBusy = true;
        const agent::AgentWalk walk = agent::walkStack(regs, firstIsReturn, pcs, agent::kMaxWalkFrames);
        agent::t_state.memoBusy = false;
        return walk;
    }
    // The registers of the caller of the frame `context` was taken in (libunwind's step): where an allocation's walk
    // starts, at the program's call of the allocator.
    static bool callerRegs(const unw_context_t &context, agent::UnwindRegs &caller)
    {
        unw_context_t copy = context;
        unw_cursor_t cursor;
        if (unw_init_local(&cursor, &copy) != 0 || unw_step(&cursor) <= 0)
            return false;
        unw_word_t ip = 0, sp = 0, bp = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        unw_get_reg(&cursor, UNW_REG_SP, &sp);
        unw_get_reg(&cursor, UNW_X86_64_RBP, &bp);
        caller = agent::UnwindRegs{uint64_t(ip), uint64_t(sp), uint64_t(bp)};
        return true;
    }

private Q_SLOTS: // NOLINT(readability-redundant-access-specifiers): Q_SLOTS marks the section below for moc
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // The ring's header and index, as the agent maps them (the records are not needed here).
        void *mem = mmap(nullptr, agent::kRingHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        QVERIFY(mem != MAP_FAILED);
        m_ring = new (mem) agent::RingHeader{};
        const QByteArray dir = m_dir.path().toLocal8Bit();
        std::memcpy(agent::g_directory, dir.constData(), size_t(dir.size()) + 1);
        agent::g_ring = m_ring;
        m_ring->unwindMode.store(uint32_t(agent::UnwindMode::Walk));
        agent::walkNewRing();
        agent::learnThreadStack();
        m_server = std::make_unique<UnwindTableServer>(m_dir.path().toStdString());
        m_server->addImage(1, uint32_t(getpid()), m_ring, -1);
        QVERIFY(m_server->waitIdle(std::chrono::seconds(60)));
        QVERIFY2(m_server->stats().firstError.empty(), m_server->stats().firstError.c_str());
        QVERIFY(index().count > 3);
        QCOMPARE(index().sequence.load() % 2, 0u);
        QVERIFY(agent::walkWanted());
        m_tables = std::make_unique<UnwindTableCache>(m_elfs);
    }

    void cleanupTestCase()
    {
        m_server.reset();
        agent::g_ring = nullptr;
        munmap(m_ring, agent::kRingHeaderBytes);
    }

    // Under qsort (the C library's code, no frame pointers) and a recursion of ours: the walk's pcs are libunwind's,
    // frame for frame, to the stack's end; in this thread and in a new one (whose stack ends at clone3).
    void walkAgreesWithLibunwind_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<bool>("thread");
        QTest::newRow("shallow") << 2 << false;
        QTest::newRow("deep") << 60 << false;
        QTest::newRow("in a thread") << 20 << true;
    }
    void walkAgreesWithLibunwind()
    {
        QFETCH(int, depth);
        QFETCH(bool, thread);
        test::StackProbe probe(*m_tables);
        std::vector<uint64_t> walked;
        std::vector<uint64_t> unwound;
        agent::AgentWalk walk;
        const auto run = [&] {
            agent::learnThreadStack();
            probe.underQsort(depth, [&](const unw_context_t &context, const agent::StackBounds &) {
                uint64_t pcs[agent::kMaxWalkFrames];
                walk = agent::walkStack(regsOf(context), false, pcs, agent::kMaxWalkFrames);
                walked.assign(pcs, pcs + walk.frames);
                unw_context_t copy = context;
                const size_t n = test::StackProbe::libunwindFrom(copy, pcs);
                unwound.assign(pcs, pcs + n);
            });
        };
        if (thread)
            std::thread(run).join();
        else
            run();
        QVERIFY2(walk.whole,
                 qPrintable(QStringLiteral("stopped at frame %1, reason %2").arg(walk.frames).arg(int(walk.reason))));
        QCOMPARE(walk.flags & agent::WalkTruncated, 0);
        QVERIFY(walked.size() >= size_t(depth));
        QCOMPARE(walked, unwound);
        QVERIFY(walk.hash != 0);
    }

    // The same stack twice has the same name; another stack another.
    void hashNamesTheStack()
    {
        test::StackProbe probe(*m_tables);
        std::vector<uint64_t> hashes;
        for (int depth : {5, 5, 6}) {
            probe.underQsort(depth, [&](const unw_context_t &context, const agent::StackBounds &) {
                uint64_t pcs[agent::kMaxWalkFrames];
                hashes.push_back(agent::walkStack(regsOf(context), false, pcs, agent::kMaxWalkFrames).hash);
            });
        }
        QCOMPARE(hashes.size(), size_t(3));
        QCOMPARE(hashes[0], hashes[1]);
        QVERIFY(hashes[0] != hashes[2]);
    }

    // An allocation's walk starts at the program's call of the allocator (the hook's caller: its return address,
    // stack pointer and RBP): its first pc is the call's address (return address - 1, as the session takes a caller
    // frame's), the rest the stack's return addresses as libunwind steps them; and its hash is not that of a walk
    // interrupted at the return address itself.
    void walkFromACallersReturnAddress()
    {
        test::StackProbe probe(*m_tables);
        std::vector<uint64_t> walked, unwound;
        uint64_t fromReturn = 0, interrupted = 0;
        bool whole = false;
        probe.underQsort(8, [&](const unw_context_t &context, const agent::StackBounds &) {
            agent::UnwindRegs caller{};
            if (!callerRegs(context, caller))
                return;
            uint64_t pcs[agent::kMaxWalkFrames];
            const agent::AgentWalk walk = agent::walkStack(caller, true, pcs, agent::kMaxWalkFrames);
            whole = walk.whole;
            walked.assign(pcs, pcs + walk.frames);
            fromReturn = walk.hash;
            interrupted = agent::walkStack(caller, false, pcs, agent::kMaxWalkFrames).hash;
            unw_context_t again = context;
            const size_t n = test::StackProbe::libunwindFrom(again, pcs);
            unwound.assign(pcs, pcs + n);
        });
        QVERIFY(whole);
        QVERIFY(unwound.size() > 10);
        QCOMPARE(walked.size(), unwound.size() - 1);
        QCOMPARE(walked[0], unwound[1] - 1);
        QVERIFY(std::equal(walked.begin() + 1, walked.end(), unwound.begin() + 2));
        QVERIFY(fromReturn != 0 && interrupted != 0);
        QVERIFY(fromReturn != interrupted);
    }

    // A thread's walks join its last walk where a frame's registers are the same: the pcs and the hash are a fresh
    // walk's and libunwind's, stack after stack, the depth changing under and over the last one; and a stack that
    // differs from the last one only above the join (the same frames under two callers of the same frame size) is
    // caught by the check of the stack words, not taken from the memo.
    void memoJoinsTheLastWalk()
    {
        agent::ThreadState &t = agent::t_state;
        t.totalsKeySet = true; // the memo is a thread's whose end gives it back
        test::StackProbe probe(*m_tables);
        struct Seen {
            std::vector<uint64_t> memo, fresh, libunwind;
            uint64_t memoHash = 0, freshHash = 0;
            uint32_t fromMemo = 0, again = 0;
            std::vector<uint64_t> claimed; // a sample's walk that claimed its stack: every pc, the memo's too
            bool knownSkipsMemo = false;   // the same walk once the stack was written out: the memo's pcs not copied
        };
        const auto atPoint = [&](Seen &seen) {
            return [&](const unw_context_t &context, const agent::StackBounds &) {
                uint64_t pcs[agent::kMaxWalkFrames];
                const agent::AgentWalk walk = agent::walkStack(regsOf(context), false, pcs, agent::kMaxWalkFrames);
                QVERIFY(walk.whole);
                seen.memo.assign(pcs, pcs + walk.frames);
                seen.memoHash = walk.hash;
                seen.fromMemo = walk.fromMemo;
                seen.again = agent::walkStack(regsOf(context), false, pcs, agent::kMaxWalkFrames).fromMemo;
                agent::StackClaim claim = agent::StackClaim::None;
                agent::forgetWrittenStacks(); // a stack met at an earlier point is claimed anew
                std::fill(std::begin(pcs), std::end(pcs), 0);
                const agent::AgentWalk claimed =
                    agent::walkStack(regsOf(context), false, pcs, agent::kMaxWalkFrames, &claim);
                QVERIFY(claim != agent::StackClaim::Known);
                seen.claimed.assign(pcs, pcs + claimed.frames);
                if (claim == agent::StackClaim::Claimed)
                    agent::settleStack(claimed.hash, true);
                std::fill(std::begin(pcs), std::end(pcs), 0);
                const agent::AgentWalk known =
                    agent::walkStack(regsOf(context), false, pcs, agent::kMaxWalkFrames, &claim);
                QCOMPARE(claim, agent::StackClaim::Known);
                QCOMPARE(known.hash, claimed.hash);
                QCOMPARE(known.frames, claimed.frames);
                seen.knownSkipsMemo = known.fromMemo != 0 && pcs[known.frames - 1] == 0;
                const agent::AgentWalk fresh = walkWithoutMemo(regsOf(context), false, pcs);
                QCOMPARE(fresh.fromMemo, 0u);
                seen.fresh.assign(pcs, pcs + fresh.frames);
                seen.freshHash = fresh.hash;
                unw_context_t copy = context;
                const size_t n = test::StackProbe::libunwindFrom(copy, pcs);
                seen.libunwind.assign(pcs, pcs + n);
            };
        };
        uint32_t joins = 0;
        for (const int depth : {4, 20, 8, 20, 3, 40, 39, 5}) {
            Seen seen;
            probe.underQsort(depth, atPoint(seen));
            QCOMPARE(seen.memo, seen.libunwind);
            QCOMPARE(seen.fresh, seen.libunwind);
            QCOMPARE(seen.memoHash, seen.freshHash);
            QCOMPARE(seen.again, uint32_t(seen.memo.size())); // the same registers again: the whole stack joined
            QCOMPARE(seen.claimed, seen.libunwind);
            QVERIFY(seen.knownSkipsMemo);
            joins += seen.fromMemo != 0 ? 1 : 0;
        }
        QVERIFY(joins >= 6); // the frames above the recursion are the last walk's (the first walk has none)

        Seen left, right;
        viaLeft(probe, atPoint(left));
        viaRight(probe, atPoint(right));
        QCOMPARE(left.memo, left.libunwind);
        QCOMPARE(right.memo, right.libunwind);
        QCOMPARE(right.memoHash, right.freshHash);
        QVERIFY(left.memoHash != right.memoHash);
        QVERIFY(left.memo != right.memo);
        agent::walkThreadEnd();
        QCOMPARE(t.walkMemo, agent::kNoWalkMemo); // its last calls walk without
        t.walkMemo = 0;
    }

    // A walk from an allocation's call (a return address) that starts where an earlier walk of the thread started
    // takes that walk's innermost frames from its leaf (agent_walk_memo.h: WalkLeaf) and joins the memo: its pcs and
    // hash are libunwind's and those of a walk that stepped every frame, probe after probe. Two callers of the same
    // shape start their walks at the same registers, and their stacks differ in one return address above: each gets
    // its own frames, whichever left the leaf.
    void leavesGiveTheirWalksAgain()
    {
        agent::ThreadState &t = agent::t_state;
        t.totalsKeySet = true; // the memo is a thread's whose end gives it back
        t.walkMemo = 0;
        test::StackProbe probe(*m_tables);
        struct Seen {
            std::vector<uint64_t> walked, stepped, libunwind;
            uint64_t hash = 0, steppedHash = 0;
            uint32_t fromLeaf = 0;
            agent::UnwindRegs start{};
        };
        const auto fromCaller = [&](Seen &seen) {
            return [&](const unw_context_t &context, const agent::StackBounds &) {
                if (!callerRegs(context, seen.start))
                    return;
                uint64_t pcs[agent::kMaxWalkFrames];
                const agent::AgentWalk walk = agent::walkStack(seen.start, true, pcs, agent::kMaxWalkFrames);
                QVERIFY(walk.whole);
                seen.walked.assign(pcs, pcs + walk.frames);
                seen.hash = walk.hash;
                seen.fromLeaf = walk.fromLeaf;
                const agent::AgentWalk stepped = walkWithoutMemo(seen.start, true, pcs);
                QCOMPARE(stepped.fromMemo, 0u);
                seen.stepped.assign(pcs, pcs + stepped.frames);
                seen.steppedHash = stepped.hash;
                unw_context_t again = context;
                const size_t n = test::StackProbe::libunwindFrom(again, pcs);
                QVERIFY(n > 2);
                seen.libunwind.assign(pcs + 1, pcs + n); // from the caller's frame on, its pc the call's
                seen.libunwind[0] -= 1;
            };
        };
        const auto agrees = [](const Seen &seen) {
            return !seen.walked.empty() && seen.walked == seen.libunwind && seen.stepped == seen.libunwind &&
                   seen.hash == seen.steppedHash;
        };
        uint32_t leafWalks = 0;
        for (const int depth : {1, 2, 1, 2, 1, 2, 1}) {
            Seen seen;
            probe.underQsort(depth, fromCaller(seen));
            QVERIFY(agrees(seen));
            leafWalks += seen.fromLeaf != 0 ? 1 : 0;
        }
        QVERIFY(leafWalks >= 3); // after the first two, each depth's walk starts at its earlier one's leaf

        Seen left[2], right[2];
        for (int round = 0; round < 2; ++round) {
            viaLeft(probe, fromCaller(left[round]), 1); // shallow: the frames under the two callers fit a leaf
            viaRight(probe, fromCaller(right[round]), 1);
        }
        for (int round = 0; round < 2; ++round) {
            QVERIFY(agrees(left[round]));
            QVERIFY(agrees(right[round]));
            QCOMPARE(right[round].start.pc, left[round].start.pc);
            QCOMPARE(right[round].start.sp, left[round].start.sp);
            QVERIFY(left[round].walked != right[round].walked);
            QVERIFY(left[round].hash != right[round].hash);
        }
        QCOMPARE(left[1].hash, left[0].hash);
        QCOMPARE(right[1].hash, right[0].hash);
        agent::walkThreadEnd();
        t.walkMemo = 0;
    }

    // A stack the walk must leave to the copy: each says why, and none faults.
    void fallbacks()
    {
        uint64_t pcs[agent::kMaxWalkFrames];
        agent::UnwindRegs here{};
        test::StackProbe probe(*m_tables);
        probe.underQsort(3, [&](const unw_context_t &context, const agent::StackBounds &) { here = regsOf(context); });

        // A pc in anonymous executable memory (JIT code): no tabled module holds it.
        void *jit = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        QVERIFY(jit != MAP_FAILED);
        agent::UnwindRegs inJit{reinterpret_cast<uint64_t>(jit) + 16, here.sp, here.bp};
        agent::AgentWalk walk = agent::walkStack(inJit, false, pcs, agent::kMaxWalkFrames);
        QVERIFY(!walk.whole);
        QCOMPARE(walk.reason, agent::WalkFallback::NoModule);
        QVERIFY(m_ring->moduleMissedNs.load() != 0); // the session is asked to read the maps again
        munmap(jit, 4096);

        // A stack pointer off this thread's stack (a coroutine's heap stack, an alternate signal stack).
        std::vector<uint64_t> heapStack(512, 0);
        agent::UnwindRegs offStack{here.pc, reinterpret_cast<uint64_t>(heapStack.data() + 256), here.bp};
        walk = agent::walkStack(offStack, false, pcs, agent::kMaxWalkFrames);
        QVERIFY(!walk.whole);
        QCOMPARE(walk.reason, agent::WalkFallback::OutOfBounds);

        // A corrupt frame: the stack pointer at the top of the stack, a frame pointer of garbage; every read stays in
        // bounds and the walk stops.
        const uint64_t top = agent::t_state.stackHigh;
        agent::UnwindRegs corrupt{here.pc, top - 16, 0xdeadbeef};
        walk = agent::walkStack(corrupt, false, pcs, agent::kMaxWalkFrames);
        QVERIFY(!walk.whole || walk.frames <= 2);

        // The index being written (odd sequence), and an index that follows older maps (a dlopen since).
        index().sequence.fetch_add(1);
        walk = agent::walkStack(here, false, pcs, agent::kMaxWalkFrames);
        QCOMPARE(walk.reason, agent::WalkFallback::NotReady);
        QVERIFY(!walk.whole);
        index().sequence.fetch_add(1);
        m_ring->mapsChanges.fetch_add(1);
        walk = agent::walkStack(here, false, pcs, agent::kMaxWalkFrames);
        QVERIFY(!walk.whole);
        QCOMPARE(walk.reason, agent::WalkFallback::NotReady);
        // The session reads the maps again: walks go on.
        m_server->poll();
        QVERIFY(m_server->waitIdle(std::chrono::seconds(30)));
        QCOMPARE(index().mapsChanges, m_ring->mapsChanges.load());
    }

    // A thread that runs on a stack of its own making (makecontext/swapcontext, as coroutine libraries do): its
    // walks are left to the copy, and nothing faults.
    void switchedStack()
    {
        static std::vector<char> coroutineStack(size_t(256) * 1024);
        static ucontext_t main, coroutine;
        static agent::AgentWalk walk;
        getcontext(&coroutine);
        coroutine.uc_stack.ss_sp = coroutineStack.data();
        coroutine.uc_stack.ss_size = coroutineStack.size();
        coroutine.uc_link = &main;
        makecontext(
            &coroutine,
            +[] {
                ucontext_t here;
                getcontext(&here);
                uint64_t pcs[agent::kMaxWalkFrames];
                const greg_t *g = here.uc_mcontext.gregs;
                walk = agent::walkStack({uint64_t(g[REG_RIP]), uint64_t(g[REG_RSP]), uint64_t(g[REG_RBP])}, false, pcs,
                                        agent::kMaxWalkFrames);
            },
            0);
        QCOMPARE(swapcontext(&main, &coroutine), 0);
        QVERIFY(!walk.whole);
        QCOMPARE(walk.reason, agent::WalkFallback::OutOfBounds);
    }

    // The in-process sampler's handler times are counted in quarter octaves: each bucket's start is at or below the
    // times it holds and above the previous bucket's.
    void handlerBuckets()
    {
        QCOMPARE(agent::handlerBucket(0), 0);
        QCOMPARE(agent::handlerBucket(63), 0);
        QCOMPARE(agent::handlerBucket(64), 0);
        QCOMPARE(agent::handlerBucket(80), 1);
        for (uint64_t ns = 64; ns < (uint64_t(64) << 15); ns = ns * 9 / 8 + 1) {
            const int b = agent::handlerBucket(ns);
            QVERIFY(agent::handlerBucketStart(b) <= ns);
            QVERIFY(ns < agent::handlerBucketStart(b + 1));
        }
        QCOMPARE(agent::handlerBucket(UINT64_MAX / 2), agent::kHandlerBuckets - 1);
    }

    // The stacks written out, as threads race to write the same ones: a stack is claimed by one thread at a time,
    // named by its hash (Known) only once its record is published, and free again when its record was not written.
    void stacksWrittenOutOnce()
    {
        const uint64_t hash = 0x1234567890abcdefull;
        QCOMPARE(agent::claimStack(hash), agent::StackClaim::Claimed);
        QCOMPARE(agent::claimStack(hash), agent::StackClaim::None); // being written out by another thread
        agent::settleStack(hash, true);
        QCOMPARE(agent::claimStack(hash), agent::StackClaim::Known);
        const uint64_t lost = 0x0fedcba987654321ull;
        QCOMPARE(agent::claimStack(lost), agent::StackClaim::Claimed);
        agent::settleStack(lost, false); // its record found no room
        QCOMPARE(agent::claimStack(lost), agent::StackClaim::Claimed);
        agent::settleStack(lost, true);

        std::atomic<int> claimed{0};
        std::vector<std::thread> threads;
        threads.reserve(4);
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&] {
                for (uint64_t i = 0; i < 20000; ++i) {
                    const uint64_t h = (i * 0x9E3779B97F4A7C15ull) | 2;
                    const agent::StackClaim c = agent::claimStack(h);
                    if (c == agent::StackClaim::Claimed) {
                        claimed.fetch_add(1);
                        agent::settleStack(h, true);
                    }
                }
            });
        }
        for (auto &t : threads)
            t.join();
        // Each stack claimed once across the threads (the set has room for these). A claim that lost its slot to
        // another thread's claim of the same stack and went on to the next slot made this 20,634.
        QCOMPARE(claimed.load(), 20000);
        // A new ring forgets them all.
        agent::walkNewRing();
        QCOMPARE(agent::claimStack(hash), agent::StackClaim::Claimed);
        agent::settleStack(hash, false);
    }
};

QTEST_MAIN(TstAgentWalk)
#include "tst_agent_walk.moc"
