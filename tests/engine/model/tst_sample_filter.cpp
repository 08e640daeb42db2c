// Thread index, timestamps and sample selection (thread set and time range), the inputs of the thread filter
// and the timeline's range selection.

#include "tests/engine/test_support.h"

#include "engine/analysis/call_tree.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"

#include <QTest>

using namespace emberline;
using namespace emberline::engine;

namespace {

// Samples (thread, time, value): main(1) t=100 v=1, worker(2) t=150 v=10, main(1) t=200 v=100,
// name-only "gc" t=250 v=1000, worker(2) t=300 v=10000, no labels v=100000.
Profile threaded()
{
    test::ProfileBuilder b({{"cpu-samples", "count"}, {"cpu-time", "nanoseconds"}});
    const uint32_t lMain = b.location({b.function("main_loop", "main.c")});
    const uint32_t lWork = b.location({b.function("work", "work.c")});
    auto labels = [&](int64_t tid, const char *name, int64_t t) {
        std::vector<Label> l;
        if (tid != 0)
            l.push_back(b.numLabel("thread id", tid));
        if (name)
            l.push_back(b.strLabel("thread name", name));
        l.push_back(b.numLabel("end_timestamp_ns", t));
        return l;
    };
    b.sample({lMain}, {1, 1}, labels(1, "main", 100));
    b.sample({lWork}, {1, 10}, labels(2, "worker", 150));
    b.sample({lMain}, {1, 100}, labels(1, "main", 200));
    b.sample({lWork}, {1, 1000}, labels(0, "gc", 250));
    b.sample({lWork}, {1, 10000}, labels(2, "worker", 300));
    b.sample({lMain}, {1, 100000});
    return b.take();
}

int64_t sum(const std::vector<int64_t> &v)
{
    int64_t s = 0;
    for (int64_t x : v)
        s += x;
    return s;
}

} // namespace

class TestSampleFilter : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void threadIndex();
    void noThreadLabels();
    void timestamps();
    void byThread();
    void byTimeRange();
    void byThreadAndTime();
    void filteredCallTree();
};

// If this fails, the thread filter lists wrong threads, merges different threads, or attributes samples to
// the wrong thread.
void TestSampleFilter::threadIndex()
{
    const Profile p = threaded();
    const ThreadIndex index(p);
    QCOMPARE(index.threads().size(), size_t(3));
    std::vector<std::string> names;
    for (const ThreadInfo &t : index.threads())
        names.push_back(t.displayName());
    QCOMPARE(names, (std::vector<std::string>{"main (1)", "worker (2)", "gc"}));
    QCOMPARE(index.threads()[0].samples, size_t(2));
    QCOMPARE(index.threads()[1].samples, size_t(2));
    QCOMPARE(index.threads()[2].samples, size_t(1));
    QCOMPARE(index.threadOf(0), 0u);
    QCOMPARE(index.threadOf(1), 1u);
    QCOMPARE(index.threadOf(3), 2u);
    QCOMPARE(index.threadOf(5), kNoIndex);
    QCOMPARE((ThreadInfo{"", 42, 0}).displayName(), std::string("thread 42"));
}

// If this fails, a profile without thread labels shows a bogus thread list.
void TestSampleFilter::noThreadLabels()
{
    test::ProfileBuilder b({{"samples", "count"}});
    b.sample({b.location({b.function("f")})}, {1});
    const Profile p = b.take();
    const ThreadIndex index(p);
    QVERIFY(index.empty());
    QCOMPARE(index.threadOf(0), kNoIndex);
    QCOMPARE(sampleTimestamps(p), std::vector<int64_t>{0});
}

// If this fails, the timeline places samples at the wrong time.
void TestSampleFilter::timestamps()
{
    QCOMPARE(sampleTimestamps(threaded()), (std::vector<int64_t>{100, 150, 200, 250, 300, 0}));
}

// If this fails, selecting threads in the thread filter shows other threads' samples or hides selected ones.
void TestSampleFilter::byThread()
{
    const Profile p = threaded();
    const ThreadIndex index(p);
    SampleFilter f;
    f.threads = {1}; // worker
    std::vector<uint8_t> mask = selectSamples(p, &index, f);
    QCOMPARE(mask, (std::vector<uint8_t>{0, 1, 0, 0, 1, 0}));
    QCOMPARE(sum(valuesPerStack(p, 1, mask)), int64_t(10010));
    f.threads = {0, 2};
    mask = selectSamples(p, &index, f);
    QCOMPARE(sum(valuesPerStack(p, 1, mask)), int64_t(1101));
    // No filter keeps everything, including the sample without a thread.
    QVERIFY(selectSamples(p, &index, SampleFilter{}).empty());
    QCOMPARE(sum(valuesPerStack(p, 1, {})), int64_t(111111));
    QCOMPARE(sum(valuesPerStack(p, 0, {})), int64_t(6));
}

// If this fails, a time-range selection on the timeline includes samples outside it or drops its endpoints.
void TestSampleFilter::byTimeRange()
{
    const Profile p = threaded();
    SampleFilter f;
    f.startNs = 150;
    f.endNs = 250;
    const std::vector<uint8_t> mask = selectSamples(p, nullptr, f);
    QCOMPARE(mask, (std::vector<uint8_t>{0, 1, 1, 1, 0, 0}));
    QCOMPARE(sum(valuesPerStack(p, 1, mask)), int64_t(1110));
}

// If this fails, thread and time filters do not combine as an intersection.
void TestSampleFilter::byThreadAndTime()
{
    const Profile p = threaded();
    const ThreadIndex index(p);
    SampleFilter f;
    f.threads = {0}; // main
    f.startNs = 150;
    const std::vector<uint8_t> mask = selectSamples(p, &index, f);
    QCOMPARE(mask, (std::vector<uint8_t>{0, 0, 1, 0, 0, 0}));
    QCOMPARE(sum(valuesPerStack(p, 1, mask)), int64_t(100));
}

// If this fails, the flame graph of a filtered selection is built from the wrong samples.
void TestSampleFilter::filteredCallTree()
{
    const Profile p = threaded();
    const ThreadIndex index(p);
    SampleFilter f;
    f.threads = {1};
    const FrameTable frames(p);
    const auto tree = CallTree::build(p, frames, valuesPerStack(p, 1, selectSamples(p, &index, f)));
    QVERIFY(tree);
    QCOMPARE(QString::fromStdString(tree->dump(frames)), QStringLiteral("<root> 0 10010\n  work 10010 10010\n"));
}

QTEST_GUILESS_MAIN(TestSampleFilter)
#include "tst_sample_filter.moc"
