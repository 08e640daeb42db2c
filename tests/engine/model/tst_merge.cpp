// Merging profiles: a session's flushes into one profile, several files opened as one.

#include "tests/engine/live/synthetic_memory_flush.h"
#include "tests/engine/test_support.h"

#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"
#include "engine/model/merge.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"

#include <QTest>

#include <map>

using namespace emberline;
using namespace emberline::engine;

namespace {

std::map<std::string, std::pair<int64_t, int64_t>> functionValues(const Profile &p, int type)
{
    const FrameTable frames(p);
    const auto table = FunctionTable::build(p, frames, valuesPerStack(p, type, {}));
    std::map<std::string, std::pair<int64_t, int64_t>> out;
    for (const auto &row : table->rows())
        out[frames.frame(row.frame).name] = {row.self, row.total};
    return out;
}

} // namespace

class TestMerge : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void selfMergeDoubles_data();
    void selfMergeDoubles();
    void differentSampleTypesRefused();
    void labelsAndTimeSpan();
    void locationsByFunction();
    void sessionIdsFindWhatWasMetBefore();
    void sessionIdsThatDoNotFitRefused();
    void latestSnapshotsReplaceInUseValues();
};

void TestMerge::selfMergeDoubles_data()
{
    QTest::addColumn<QString>("file");
    for (const QString &f : test::realFiles())
        QTest::newRow(qPrintable(f)) << f;
}

// If this fails, merging loses or duplicates samples, or fails to share identical functions, locations,
// mappings and strings (a long session's merged profile would grow with every flush instead of with new code).
void TestMerge::selfMergeDoubles()
{
    QFETCH(QString, file);
    auto r = readPprofFile(test::realPath(file));
    QVERIFY(r.ok());
    const Profile &p = r.value();
    const Profile *inputs[] = {&p, &p};
    auto merged = mergeProfiles(inputs);
    QVERIFY2(merged.ok(), merged.ok() ? "" : merged.error().message.c_str());
    const Profile &m = merged.value();

    QCOMPARE(m.sampleCount(), 2 * p.sampleCount());
    std::vector<int64_t> doubled = p.totals();
    for (int64_t &v : doubled)
        v *= 2;
    QCOMPARE(m.totals(), doubled);
    // The second copy adds no table entry: the tables are those of the file merged alone (which may already
    // fold a file's own duplicates: node-heap declares two identical functions).
    const Profile *single[] = {&p};
    auto alone = mergeProfiles(single);
    QVERIFY(alone.ok());
    QCOMPARE(m.functions().size(), alone->functions().size());
    QCOMPARE(m.locations().size(), alone->locations().size());
    QCOMPARE(m.mappings().size(), alone->mappings().size());
    QCOMPARE(m.strings().size(), alone->strings().size());
    QCOMPARE(m.stacks().size(), alone->stacks().size());
    QVERIFY(alone->functions().size() <= p.functions().size());
    QVERIFY(alone->functions().size() + 1 >= p.functions().size());
    QCOMPARE(alone->mappings().size(), p.mappings().size());
    QCOMPARE(m.defaultSampleTypeIndex(), p.defaultSampleTypeIndex());
    QCOMPARE(m.period, p.period);

    const int type = p.defaultSampleTypeIndex();
    auto before = functionValues(p, type);
    auto after = functionValues(m, type);
    QCOMPARE(after.size(), before.size());
    for (const auto &[name, v] : before)
        QCOMPARE(after.at(name), std::make_pair(2 * v.first, 2 * v.second));
}

// If this fails, profiles of different kinds (CPU and heap) are summed into nonsense instead of refused.
void TestMerge::differentSampleTypesRefused()
{
    auto cpu = readPprofFile(test::realPath(QStringLiteral("go-cpu.pprof")));
    auto heap = readPprofFile(test::realPath(QStringLiteral("go-heap.pprof")));
    QVERIFY(cpu.ok() && heap.ok());
    const Profile *inputs[] = {&cpu.value(), &heap.value()};
    auto merged = mergeProfiles(inputs);
    QVERIFY(!merged.ok());
    QCOMPARE(merged.error().code, Error::Code::Invalid);
    QVERIFY(merged.error().message.find("sample types") != std::string::npos);

    // Same types in another order are different too: values are positional.
    test::ProfileBuilder a({{"samples", "count"}, {"cpu", "nanoseconds"}});
    test::ProfileBuilder b({{"cpu", "nanoseconds"}, {"samples", "count"}});
    const Profile pa = a.take();
    const Profile pb = b.take();
    const Profile *swapped[] = {&pa, &pb};
    QVERIFY(!mergeProfiles(swapped).ok());
    QVERIFY(!mergeProfiles(std::span<const Profile *const>()).ok());
}

// If this fails, merged samples lose their labels (thread filter, timeline) or the merged time span does not
// cover all inputs.
void TestMerge::labelsAndTimeSpan()
{
    test::ProfileBuilder a({{"cpu", "nanoseconds"}});
    const uint32_t la = a.location({a.function("f", "f.c")});
    a.sample({la}, {10}, {a.numLabel("thread id", 7), a.strLabel("thread name", "main")});
    a.profile().timeNanos = 1000;
    a.profile().durationNanos = 500;
    test::ProfileBuilder b({{"cpu", "nanoseconds"}});
    b.profile().intern("padding so that string ids differ");
    const uint32_t lb = b.location({b.function("g", "g.c")});
    b.sample({lb}, {20}, {b.strLabel("thread name", "worker")});
    b.profile().timeNanos = 1200;
    b.profile().durationNanos = 800;
    const Profile pa = a.take();
    const Profile pb = b.take();
    const Profile *inputs[] = {&pa, &pb};
    auto merged = mergeProfiles(inputs);
    QVERIFY(merged.ok());
    const Profile &m = merged.value();
    QCOMPARE(m.timeNanos, int64_t(1000));
    QCOMPARE(m.durationNanos, int64_t(1000));
    QCOMPARE(m.sampleCount(), size_t(2));
    const ThreadIndex threads(m);
    QCOMPARE(threads.threads().size(), size_t(2));
    QCOMPARE(threads.threads()[threads.threadOf(0)].displayName(), std::string("main (7)"));
    QCOMPARE(threads.threads()[threads.threadOf(1)].displayName(), std::string("worker"));
    QCOMPARE(m.str(m.functions()[m.locations()[m.sample(1).locations[0]].lines[0].functionIndex].name),
             std::string("g"));
}

// A live session merges by function: a hot leaf hit at many addresses, or at several lines, is one location, so
// stacks that differ only there aggregate into one sample (its values summed) while the function values stay
// those of the plain merge. Locations without function keep their addresses apart. If this fails, a live
// session's memory and refresh time grow with every address a busy loop is sampled at.
void TestMerge::locationsByFunction()
{
    test::ProfileBuilder a({{"cpu", "nanoseconds"}});
    const uint32_t exe = a.mapping("/bin/app", 0x1000, 0x9000);
    const uint32_t leafFn = a.function("leaf", "leaf.c"), callerFn = a.function("caller", "caller.c");
    const uint32_t caller = a.location({callerFn}, exe, 0x1100);
    const uint32_t leafAt1 = a.location({leafFn}, exe, 0x2000), leafAt2 = a.location({leafFn}, exe, 0x2004);
    const uint32_t raw1 = a.location({}, exe, 0x3000), raw2 = a.location({}, exe, 0x3008);
    a.sample({leafAt1, caller}, {10}, {a.numLabel("thread id", 7)});
    a.sample({leafAt2, caller}, {20}, {a.numLabel("thread id", 7)});
    a.sample({leafAt2, caller}, {40}, {a.numLabel("thread id", 8)});
    a.sample({raw1, caller}, {1}, {a.numLabel("thread id", 7)});
    a.sample({raw2, caller}, {2}, {a.numLabel("thread id", 7)});
    const Profile p = a.take();

    ProfileMerger::Options options;
    options.aggregate = true;
    options.locationsByFunction = true;
    ProfileMerger byFunction(options);
    std::vector<uint32_t> destination;
    QVERIFY(byFunction.add(p, &destination).ok());
    QVERIFY(byFunction.add(p).ok());
    const Profile &m = byFunction.result();
    // leaf (thread 7), leaf (thread 8), and the two address-only locations.
    QCOMPARE(m.sampleCount(), size_t(4));
    QCOMPARE(destination, (std::vector<uint32_t>{0, 0, 1, 2, 3}));
    QCOMPARE(m.sampleValues(0)[0], int64_t(60));
    QCOMPARE(m.locations().size(), size_t(4)); // caller, leaf, two raw addresses
    for (const Location &loc : m.locations()) {
        if (!loc.lines.empty()) {
            QCOMPARE(loc.address, uint64_t(0));
            QCOMPARE(loc.lines[0].line, int64_t(0));
        }
    }

    ProfileMerger plain(ProfileMerger::Options{true, {}});
    QVERIFY(plain.add(p).ok());
    QVERIFY(plain.add(p).ok());
    QCOMPARE(plain.result().sampleCount(), size_t(5));
    QCOMPARE(functionValues(m, 0), functionValues(plain.result(), 0));
}

namespace {

// A flush of one sample (leaf `leafName` at 0x2000 called from caller at 0x1100) whose recorder ids are 0 for
// the caller, 1 for the leaf and 0 for the stack, under naming epoch `epoch`.
std::pair<Profile, SessionIds> flushWithIds(const std::string &leafName, uint64_t epoch, int64_t value)
{
    test::ProfileBuilder b({{"cpu", "nanoseconds"}});
    const uint32_t exe = b.mapping("/bin/app", 0x1000, 0x9000);
    const uint32_t caller = b.location({b.function("caller", "caller.c")}, exe, 0x1100);
    const uint32_t leaf = b.location({b.function(leafName, "leaf.c")}, exe, 0x2000);
    b.sample({leaf, caller}, {value}, {b.numLabel("thread id", 7)});
    SessionIds ids;
    ids.locations = {0, 1};
    ids.sampleStacks = {0};
    ids.namingEpoch = epoch;
    return {b.take(), ids};
}

} // namespace

// Given session ids, the merger maps what it met in an earlier flush by id: the same stack again sums into the
// same sample without its content being looked at, and a new naming epoch makes it look again. If this fails,
// either the live aggregate interns every flush's locations and stacks again, or names that debug files
// brought late never reach it.
void TestMerge::sessionIdsFindWhatWasMetBefore()
{
    ProfileMerger::Options options;
    options.aggregate = true;
    options.dropLabels = {"end_timestamp_ns"};
    options.locationsByFunction = true;
    ProfileMerger merger(options);
    const auto [first, firstIds] = flushWithIds("leaf", 0, 10);
    std::vector<uint32_t> destination;
    QVERIFY(merger.add(first, firstIds, &destination).ok());
    QCOMPARE(destination, (std::vector<uint32_t>{0}));
    // The same ids and epoch with another name: found by id, so the first name stays (the recorder guarantees
    // that a location's name does not change within an epoch; this shows the content was not read again).
    const auto [renamed, renamedIds] = flushWithIds("renamed", 0, 5);
    QVERIFY(merger.add(renamed, renamedIds, &destination).ok());
    QCOMPARE(merger.result().sampleCount(), size_t(1));
    QCOMPARE(merger.result().sampleValues(0)[0], int64_t(15));
    // A new epoch: the name is read again, and the stack is a new one.
    const auto [named, namedIds] = flushWithIds("renamed", 1, 3);
    QVERIFY(merger.add(named, namedIds, &destination).ok());
    QCOMPARE(destination, (std::vector<uint32_t>{1}));
    QCOMPARE(functionValues(merger.result(), 0).at("renamed").first, int64_t(3));
    QCOMPARE(functionValues(merger.result(), 0).at("leaf").first, int64_t(15));
    QCOMPARE(functionValues(merger.result(), 0).at("caller").second, int64_t(18));

    // A location whose name may still change (no id) is read by content every time, and so is every stack
    // through it (the recorder's stack 1).
    auto [jit, jitIds] = flushWithIds("unnamed", 1, 1);
    jitIds.locations[1] = kNoIndex;
    jitIds.sampleStacks[0] = 1;
    QVERIFY(merger.add(jit, jitIds).ok());
    auto [jitNamed, jitNamedIds] = flushWithIds("named later", 1, 2);
    jitNamedIds.locations[1] = kNoIndex;
    jitNamedIds.sampleStacks[0] = 1;
    QVERIFY(merger.add(jitNamed, jitNamedIds).ok());
    const auto values = functionValues(merger.result(), 0);
    QCOMPARE(values.at("unnamed").first, int64_t(1));
    QCOMPARE(values.at("named later").first, int64_t(2));
}

// Ids that do not describe the profile (another count of locations or samples) are refused, not read out of
// bounds.
void TestMerge::sessionIdsThatDoNotFitRefused()
{
    ProfileMerger merger(ProfileMerger::Options{true, {}});
    auto [p, ids] = flushWithIds("leaf", 0, 1);
    ids.locations.pop_back();
    const Status st = merger.add(p, ids);
    QVERIFY(!st.ok());
    QVERIFY(st.error().message.find("session ids") != std::string::npos);
    ids.locations.push_back(1);
    ids.sampleStacks.push_back(3);
    QVERIFY(!merger.add(p, ids).ok());
}

// A memory session's flushes, each with the whole live heap at its end: merged with latestSnapshots (as a session
// folder's flush files are), in-use is the last flush's, and allocations add up. Summed, in-use would count each
// live allocation once per flush.
void TestMerge::latestSnapshotsReplaceInUseValues()
{
    const auto first = test::syntheticMemoryFlush(1, 1'000'000'000, {{"a", 2, 200, 2, 200}, {"b", 1, 100, 1, 100}}, 3);
    const auto second = test::syntheticMemoryFlush(2, 2'000'000'000, {{"a", 1, 50, 1, 30}, {"c", 3, 300, 3, 300}}, 3);
    for (const bool aggregate : {false, true}) {
        ProfileMerger::Options options;
        options.aggregate = aggregate;
        options.latestSnapshots = true;
        ProfileMerger merger(options);
        QVERIFY(merger.add(*first->profile).ok());
        QVERIFY(merger.add(*second->profile).ok());
        const Profile &merged = merger.result();
        const int inuse = merged.sampleTypeIndex("inuse-space");
        const int alloc = merged.sampleTypeIndex("alloc-space");
        QCOMPARE(merged.totals()[static_cast<size_t>(inuse)], int64_t(330));
        QCOMPARE(merged.totals()[static_cast<size_t>(alloc)], int64_t(650));
        const auto values = functionValues(merged, inuse);
        QCOMPARE(values.at("a").first, int64_t(30));
        QCOMPARE(values.count("b") ? values.at("b").first : 0, int64_t(0));
        QCOMPARE(values.at("c").first, int64_t(300));
        QCOMPARE(merged.totals()[0], int64_t(6)); // the CPU samples as ever
    }
}

QTEST_GUILESS_MAIN(TestMerge)
#include "tst_merge.moc"
