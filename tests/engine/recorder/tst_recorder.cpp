// The recorder: interning of locations and stacks, and the self-contained FlushInput it packs at each flush
// (only what the flush's samples use, renumbered densely), with the session's counters.
#include "engine/recorder/recorder.h"

#include <QTest>

using namespace emberline::engine;

class TestRecorder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void internsLocationsOnce();
    void flushHoldsOnlyWhatItsSamplesUse();
    void countersAreCumulativeAcrossFlushes();
    void flushCarriesSessionIds();
    void stackTableStartsOverPastItsBound();
};

// If this fails, the same address in the same module gets two ids (stacks would not aggregate) or two modules
// share one.
void TestRecorder::internsLocationsOnce()
{
    Recorder r;
    const uint32_t a = r.internLocation(5, 0x1000);
    QCOMPARE(r.internLocation(5, 0x1000), a);
    QVERIFY(r.internLocation(6, 0x1000) != a);
    QVERIFY(r.internLocation(5, 0x1001) != a);
}

// If this fails, the exporter receives stacks, locations or modules of other flushes (memory and time wasted,
// or ids that point at the wrong frames).
void TestRecorder::flushHoldsOnlyWhatItsSamplesUse()
{
    Recorder r;
    r.registerModule({5, "/bin/a", "aa", 0x1000, 0x2000, 0});
    r.registerModule({6, "/bin/b", "bb", 0x5000, 0x6000, 0});
    r.setThreadName(1, 2, "main");
    const uint32_t la = r.internLocation(5, 0x1100);
    const uint32_t lb = r.internLocation(6, 0x5100);
    const uint32_t lc = r.internLocation(5, 0x1200);
    const uint32_t ab[] = {la, lb};
    const uint32_t cOnly[] = {lc};
    r.record(10, 1, 2, 100, ab);
    r.record(20, 1, 2, 100, ab);
    FlushInput first = r.takeFlush(0, 50, false);
    QCOMPARE(first.samples.size(), size_t(2));
    QCOMPARE(first.stacks.size(), size_t(1));
    QCOMPARE(first.locations.size(), size_t(2));
    QCOMPARE(first.modules.size(), size_t(2));
    QCOMPARE(first.samples[0].stackId, first.samples[1].stackId);
    const auto stack = first.stacks.stack(first.samples[0].stackId);
    QCOMPARE(stack.size(), size_t(2));
    QCOMPARE(first.locations[stack[0]].address, uint64_t(0x1100)); // leaf first, as recorded
    QCOMPARE(first.locations[stack[1]].moduleId, uint32_t(6));
    QCOMPARE(first.threadNames.at(2), std::string("main"));
    QCOMPARE(first.processOfThread.at(2), uint32_t(1));

    r.record(60, 1, 3, 50, cOnly);
    FlushInput second = r.takeFlush(50, 100, true);
    QVERIFY(second.final);
    QCOMPARE(second.samples.size(), size_t(1));
    QCOMPARE(second.locations.size(), size_t(1)); // not the first flush's
    QCOMPARE(second.modules.size(), size_t(1));
    QCOMPARE(second.modules[0].path, std::string("/bin/a"));
    QCOMPARE(second.samples[0].cpuNs, int64_t(50));
    QCOMPARE(r.pendingSamples(), size_t(0));
}

// If this fails, the summary and the status bar show a flush's counts instead of the session's.
void TestRecorder::countersAreCumulativeAcrossFlushes()
{
    Recorder r;
    const uint32_t l = r.internLocation(kUnknownModule, 0x10);
    const uint32_t one[] = {l};
    r.record(1, 1, 1, 10, one);
    r.countLost(3);
    r.countIncomplete("libfoo.so");
    (void)r.takeFlush(0, 1, false);
    r.record(2, 1, 1, 10, one);
    r.countLost(2);
    r.countIncomplete("libfoo.so");
    r.countIncomplete("[unknown]");
    FlushInput f = r.takeFlush(1, 2, false);
    QCOMPARE(f.lost, uint64_t(5));
    QCOMPARE(f.incomplete, uint64_t(3));
    QCOMPARE(f.incompleteByModule.at("libfoo.so"), uint64_t(2));
    QCOMPARE(r.totalSamples(), uint64_t(2));
    QCOMPARE(r.totalCpuNs(), int64_t(20));
}

// Each flush renumbers its stacks and locations densely, and says beside them which of the session's they are.
// If this fails, the live aggregate would find another stack or location by id than the flush holds, and sum
// samples into the wrong call paths.
void TestRecorder::flushCarriesSessionIds()
{
    Recorder r;
    const uint32_t la = r.internLocation(5, 0x1100);
    const uint32_t lb = r.internLocation(6, 0x5100);
    const uint32_t lc = r.internLocation(5, 0x1200);
    const uint32_t ab[] = {la, lb};
    const uint32_t cb[] = {lc, lb};
    r.record(10, 1, 2, 100, ab);
    r.record(20, 1, 2, 100, cb);
    r.record(30, 1, 2, 100, ab);
    const FlushInput first = r.takeFlush(0, 50, false);
    r.record(60, 1, 2, 100, cb); // only the second stack: dense ids restart at 0, session ids stay
    const FlushInput second = r.takeFlush(50, 100, false);

    for (const FlushInput *flush : {&first, &second}) {
        QCOMPARE(flush->sessionLocations.size(), flush->locations.size());
        QCOMPARE(flush->sessionStacks.size(), flush->stacks.size());
        for (size_t i = 0; i < flush->locations.size(); ++i) {
            const uint32_t session = flush->sessionLocations[i];
            QVERIFY(session == la || session == lb || session == lc);
            const LocationKey key = flush->locations[i];
            const uint64_t expected = session == la ? 0x1100 : session == lb ? 0x5100 : 0x1200;
            QCOMPARE(key.address, expected);
        }
        for (const RecordedSample &s : flush->samples) {
            // The session stack's frames, through the flush's own tables, are the recorded ones.
            const auto stack = flush->stacks.stack(s.stackId);
            std::vector<uint32_t> frames;
            for (uint32_t l : stack)
                frames.push_back(flush->sessionLocations[l]);
            const std::vector<uint32_t> recorded =
                frames[0] == la ? std::vector<uint32_t>{la, lb} : std::vector<uint32_t>{lc, lb};
            QCOMPARE(frames, recorded);
        }
    }
    QCOMPARE(first.stacks.size(), size_t(2));
    QCOMPARE(second.stacks.size(), size_t(1));
    QCOMPARE(second.locations.size(), size_t(2));
    // The stack c->b has one session id in both flushes.
    const uint32_t cbInFirst = first.sessionStacks[first.samples[1].stackId];
    QCOMPARE(second.sessionStacks[second.samples[0].stackId], cbInFirst);
    QVERIFY(first.sessionStacks[first.samples[0].stackId] != cbInFirst);
}

// Past its bound, the stack table starts over at the next flush, and the flushes say which numbering their
// stack ids are in. If this fails, a session with millions of distinct stacks grows the table without end, or
// the live aggregate takes a stack id of one numbering for the stack of another.
void TestRecorder::stackTableStartsOverPastItsBound()
{
    Recorder r(3);
    std::vector<uint32_t> locations;
    for (uint64_t a = 0; a < 5; ++a)
        locations.push_back(r.internLocation(5, 0x1000 + a));
    for (uint32_t l : locations) {
        const uint32_t stack[] = {l, locations[0]};
        r.record(10, 1, 2, 100, stack);
    }
    const FlushInput first = r.takeFlush(0, 50, false);
    QCOMPARE(first.stackGeneration, uint64_t(0));
    QCOMPARE(first.sessionStacks.size(), size_t(5));
    QCOMPARE(r.uniqueStacks(), size_t(0)); // 5 > 3: started over
    QCOMPARE(r.stackGeneration(), uint64_t(1));

    const uint32_t last[] = {locations[4], locations[0]};
    r.record(60, 1, 2, 100, last);
    const FlushInput second = r.takeFlush(50, 100, false);
    QCOMPARE(second.stackGeneration, uint64_t(1));
    QCOMPARE(second.sessionStacks, std::vector<uint32_t>{0}); // the first id of the new numbering
    QCOMPARE(second.sessionLocations.size(), size_t(2));      // locations keep their ids
    QCOMPARE(r.stackGeneration(), uint64_t(1));               // 1 stack: within the bound
    QCOMPARE(r.locationsInterned(), size_t(5));
}

QTEST_GUILESS_MAIN(TestRecorder)
#include "tst_recorder.moc"
