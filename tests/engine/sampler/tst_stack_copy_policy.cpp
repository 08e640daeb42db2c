// The learned stack copy's rules, with stacks described by numbers: when it shrinks, how far, when it grows,
// what it ignores; and the size of the perf rings that hold the copies. The same policy behind the real unwinder
// is in tst_sampling_pipeline; the rings' room for 64 busy threads in tst_perf_sampler.
#include "engine/sampler/perf_event_sets.h"
#include "engine/sampler/stack_copy_policy.h"

#include <QTest>

using namespace emberline::engine;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

void observeMany(StackCopyPolicy &policy, uint64_t count, uint64_t usedBytes)
{
    for (uint64_t i = 0; i < count; ++i)
        policy.observe(policy.current(), usedBytes, false, 0);
}

} // namespace

class TestStackCopyPolicy : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shrinksOnlyAfterSettling();
    void shrinksToTheDeepestStackWithHeadroom();
    void keepsASizeThatSavesLittle();
    void growsWhenStacksAreCutShort();
    void ignoresSamplesTakenAtAnotherSize();
    void staysAtTheLargestCopy();
    void rejectedSizeFreezesThePrevious();
    void ringsShareABudgetAcrossCpus();
};

// If this fails, the copy changes before it has seen enough stacks to know what they need.
void TestStackCopyPolicy::shrinksOnlyAfterSettling()
{
    StackCopyPolicy policy(StackCopyPolicy::Limits{});
    QCOMPARE(policy.current(), 32768U);
    QVERIFY(!policy.decide(0)); // the first call starts the clock
    observeMany(policy, StackCopyPolicy::kSettleSamples - 1, 1500);
    QVERIFY(!policy.decide(10 * kSecond)); // long enough, but too few samples
    observeMany(policy, 1, 1500);
    QVERIFY(!policy.decide(StackCopyPolicy::kSettleNs - 1)); // enough samples, too soon
    QCOMPARE(policy.current(), 32768U);
}

// If this fails, a learned copy is too tight for the stacks seen (no headroom), or not rounded to pages.
void TestStackCopyPolicy::shrinksToTheDeepestStackWithHeadroom()
{
    StackCopyPolicy policy(StackCopyPolicy::Limits{});
    QVERIFY(!policy.decide(0));
    observeMany(policy, 1000, 1500);
    const auto small = policy.decide(StackCopyPolicy::kSettleNs);
    QVERIFY(small);
    QCOMPARE(*small, 8192U); // 1500 + 2048 rounds to 4096, under the 8192 floor
    QCOMPARE(policy.current(), 8192U);
    QCOMPARE(policy.changes(), 1U);

    StackCopyPolicy deeper(StackCopyPolicy::Limits{});
    QVERIFY(!deeper.decide(0));
    observeMany(deeper, 999, 3000);
    observeMany(deeper, 1, 12000);
    const auto fits = deeper.decide(StackCopyPolicy::kSettleNs);
    QVERIFY(fits);
    QCOMPARE(*fits, 20480U); // the deepest (12000) and half again, in whole pages
    QCOMPARE(deeper.deepest(), uint64_t(12000));
}

// If this fails, the sampler's events are reopened for a saving of a few KiB.
void TestStackCopyPolicy::keepsASizeThatSavesLittle()
{
    StackCopyPolicy policy(StackCopyPolicy::Limits{});
    QVERIFY(!policy.decide(0));
    observeMany(policy, 1000, 17000); // needs 25500 -> 28672, under a quarter less than 32768
    QVERIFY(!policy.decide(10 * kSecond));
    QCOMPARE(policy.current(), 32768U);
}

// If this fails, stacks deeper than the learned copy stay cut short, or one stray walk makes the copy grow.
void TestStackCopyPolicy::growsWhenStacksAreCutShort()
{
    StackCopyPolicy policy(StackCopyPolicy::Limits{8192, 8192, 65000});
    QVERIFY(!policy.decide(0));
    policy.observe(8192, 8192, true, 12000);
    QVERIFY(!policy.decide(1)); // one could be a walk gone astray
    policy.observe(8192, 8192, true, 9000);
    const auto grown = policy.decide(2);
    QVERIFY(grown);
    QCOMPARE(*grown, 16384U); // twice as far, which also holds 12000 and a quarter
    QCOMPARE(policy.deepest(), uint64_t(12000));

    // Deeper than twice the copy: as far as the stack needed, and a quarter more.
    policy.observe(16384, 16384, true, 40000);
    policy.observe(16384, 16384, true, 40000);
    const auto far = policy.decide(3);
    QVERIFY(far);
    QCOMPARE(*far, 53248U);
    // It does not shrink back under what was seen.
    observeMany(policy, 5000, 1000);
    QVERIFY(!policy.decide(100 * kSecond));
}

// If this fails, samples still in the buffers from before a change are taken for samples at the new size.
void TestStackCopyPolicy::ignoresSamplesTakenAtAnotherSize()
{
    StackCopyPolicy policy(StackCopyPolicy::Limits{});
    QVERIFY(!policy.decide(0));
    observeMany(policy, 1000, 1000);
    QCOMPARE(*policy.decide(StackCopyPolicy::kSettleNs), 8192U);
    // Cut short at the old, larger size: says nothing of the new one, but the depth counts.
    policy.observe(32768, 5000, true, 6000);
    policy.observe(32768, 5000, true, 6000);
    QVERIFY(!policy.decide(StackCopyPolicy::kSettleNs + 1));
    QCOMPARE(policy.current(), 8192U);
    QCOMPARE(policy.deepest(), uint64_t(6000));
    // Samples at another size do not count towards settling either.
    for (int i = 0; i < 1000; ++i)
        policy.observe(32768, 500, false, 0);
    QVERIFY(!policy.decide(10 * kSecond));
}

// If this fails, a program deeper than the largest copy makes the policy ask for the same size again and again.
void TestStackCopyPolicy::staysAtTheLargestCopy()
{
    StackCopyPolicy policy(StackCopyPolicy::Limits{8192, 65000, 65000});
    QCOMPARE(policy.current(), 65000U);
    QVERIFY(!policy.decide(0));
    for (int i = 0; i < 10; ++i)
        policy.observe(65000, 65000, true, 200000);
    QVERIFY(!policy.decide(1));
    QVERIFY(!policy.decide(2));
    QCOMPARE(policy.changes(), 0U);
}

// If this fails, a sampler that cannot reopen its events is asked to, at every flush, all session long.
void TestStackCopyPolicy::rejectedSizeFreezesThePrevious()
{
    StackCopyPolicy policy(StackCopyPolicy::Limits{});
    QVERIFY(!policy.decide(0));
    observeMany(policy, 1000, 1000);
    QVERIFY(policy.decide(StackCopyPolicy::kSettleNs));
    policy.rejected();
    QCOMPARE(policy.current(), 32768U);
    QCOMPARE(policy.changes(), 0U);
    policy.observe(32768, 32768, true, 50000);
    policy.observe(32768, 32768, true, 50000);
    observeMany(policy, 1000, 1000);
    QVERIFY(!policy.decide(100 * kSecond));
}

// If this fails, a machine with few CPUs gets rings too small for many threads' copies (records lost when the
// session is kept off its CPU), one with many CPUs pins far more memory than the samples need, or a user whose
// locked memory the kernel limits gets a first ring that leaves the others too little.
void TestStackCopyPolicy::ringsShareABudgetAcrossCpus()
{
    QCOMPARE(ringPagesPerCpu(1, false), 2048U); // 8 MiB, the most a CPU gets
    QCOMPARE(ringPagesPerCpu(2, false), 2048U);
    QCOMPARE(ringPagesPerCpu(3, false), 1024U); // a power of two within the share
    QCOMPARE(ringPagesPerCpu(4, false), 1024U);
    QCOMPARE(ringPagesPerCpu(64, false), 1024U); // 4 MiB, the least
    QCOMPARE(ringPagesPerCpu(0, false), 2048U);  // sysconf failed: treated as one CPU
    QCOMPARE(ringPagesPerCpu(1, true), 1024U);   // locked memory limited: what the default limits hold
    QCOMPARE(ringPagesPerCpu(2, true), 1024U);
    QCOMPARE(ringWakeupBytes(2048), 1U << 20); // a larger ring wakes the session as often as a 4 MiB one
    QCOMPARE(ringWakeupBytes(1024), 1U << 20);
    QCOMPARE(ringWakeupBytes(64), 64U * 1024); // a small ring: a quarter of it
}

QTEST_APPLESS_MAIN(TestStackCopyPolicy)
#include "tst_stack_copy_policy.moc"
