// The ptrace sampler's overhead budget, on numbers: how long it waits between rounds for given costs, how it
// spreads bursts, and how much CPU it counts as lost by a target whose threads are held stopped. A wrong
// answer here means a sampler that takes more of the target than the budget says, or samples far less than
// it could.

#include "engine/sampler/overhead_budget.h"

#include <QTest>

#include <vector>

using namespace emberline::engine;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

// Runs rounds back to back, each starting as soon as the budget allows; returns the share of one CPU spent.
double steadyShare(OverheadBudget &budget, int rounds, int64_t roundCost, int64_t roundDuration, int64_t base,
                   int64_t &now)
{
    const int64_t start = now;
    int64_t spent = 0;
    for (int i = 0; i < rounds; ++i) {
        const int64_t roundStart = now;
        now += roundDuration;
        budget.addRound(roundStart, now, roundCost);
        spent += roundCost;
        now = std::max(now, budget.nextRoundNs(base));
    }
    return 100.0 * static_cast<double>(spent) / static_cast<double>(now - start);
}

} // namespace

class TestOverheadBudget : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Cheap rounds: the asked frequency decides.
    void cheapRoundsRunAtTheAskedFrequency()
    {
        OverheadBudget budget(2.0, 0, 200 * kUs);
        budget.addRound(0, 50 * kUs, 100 * kUs);
        QCOMPARE(budget.nextRoundNs(10 * kMs), 10 * kMs);
    }

    // 600 us rounds at 2%: one round every 30 ms (33 Hz), and the long-run share stays at 2%.
    void expensiveRoundsAreSpacedToTheBudget()
    {
        OverheadBudget budget(2.0, 0, 600 * kUs);
        int64_t now = 0;
        const double share = steadyShare(budget, 2000, 600 * kUs, 300 * kUs, 10 * kMs, now);
        QVERIFY2(share <= 2.0 && share > 1.95, qPrintable(QString::number(share)));
        const int64_t last = now;
        budget.addRound(last, last + 300 * kUs, 600 * kUs);
        QCOMPARE(budget.nextRoundNs(10 * kMs) - last, 30 * kMs);
    }

    // A quiet stretch (the target paused, every thread asleep) buys no burst: unspent credit is kept for two
    // typical rounds at most, after which rounds are back to the budget's pace.
    void quietStretchBuysNoBurst()
    {
        OverheadBudget budget(2.0, 0, 1 * kMs);
        int64_t now = 0;
        steadyShare(budget, 100, 1 * kMs, 200 * kUs, 10 * kMs, now);
        now += 3'000 * kMs;
        int atAskedRate = 0;
        for (int i = 0; i < 10; ++i) {
            const int64_t roundStart = now;
            budget.addRound(roundStart, roundStart + 200 * kUs, 1 * kMs);
            now = std::max(roundStart + 200 * kUs, budget.nextRoundNs(10 * kMs));
            atAskedRate += now - roundStart == 10 * kMs ? 1 : 0;
        }
        QVERIFY2(atAskedRate <= 2, qPrintable(QString::number(atAskedRate)));
        QVERIFY(budget.creditNs() <= 2 * kMs);
    }

    // Rounds whose cost varies (a deep stack takes longer to unwind than a shallow one) are still evenly
    // spaced: the samples' weights are the time between rounds, and uneven intervals would hand a few samples
    // most of the profile. A sliding window instead alternates bursts at the asked rate with pauses of up to
    // its length.
    void unevenRoundsAreEvenlySpaced()
    {
        OverheadBudget budget(2.0, 0, 200 * kUs);
        int64_t now = 0, spent = 0, shortest = INT64_MAX, longest = 0;
        uint64_t rng = 88172645463325252ull;
        for (int i = 0; i < 2000; ++i) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Between 100 us and 1.5 ms, at random.
            const int64_t cost = 100 * kUs + static_cast<int64_t>(rng % 1400) * kUs;
            const int64_t roundStart = now;
            budget.addRound(roundStart, roundStart + 200 * kUs, cost);
            spent += cost;
            now = std::max(roundStart + 200 * kUs, budget.nextRoundNs(5 * kMs));
            if (i >= 20) {
                shortest = std::min(shortest, now - roundStart);
                longest = std::max(longest, now - roundStart);
            }
        }
        const double share = 100.0 * static_cast<double>(spent) / static_cast<double>(now);
        QVERIFY2(share <= 2.0 && share > 1.9, qPrintable(QString::number(share)));
        // The mean interval is 40 ms (800 us at 2%); no interval is shorter than half or longer than twice it.
        QVERIFY2(shortest >= 20 * kMs && longest <= 80 * kMs,
                 qPrintable(QStringLiteral("%1 .. %2 ms").arg(shortest / 1e6).arg(longest / 1e6)));
    }

    // A burst beyond four typical rounds (a library's unwind tables loaded in one round) is spread over the
    // following rounds: the next round comes as if the round had cost four typical ones, and the rest is
    // charged later, so the long-run share still holds.
    void spikesAreSpread()
    {
        OverheadBudget budget(2.0, 0, 400 * kUs, 10'000 * kMs);
        int64_t now = 0;
        steadyShare(budget, 200, 400 * kUs, 200 * kUs, 10 * kMs, now);
        QCOMPARE(budget.typicalCostNs(), 400 * kUs);
        const int64_t spikeStart = now;
        budget.addRound(spikeStart, spikeStart + 1 * kMs, 40 * kMs);
        // What is beyond four typical rounds waits, less the part due for the time since the previous round.
        QVERIFY(budget.pendingSpreadNs() <= 40 * kMs - 4 * 400 * kUs);
        QVERIFY(budget.pendingSpreadNs() > 38 * kMs);
        QVERIFY2(budget.nextRoundNs(10 * kMs) - spikeStart < 500 * kMs,
                 qPrintable(QString::number(budget.nextRoundNs(10 * kMs) - spikeStart)));
        // Over the next 60 s, everything is charged and the share over the whole run stays at 2%.
        int64_t spent = 0;
        const int64_t start = now;
        now = budget.nextRoundNs(10 * kMs);
        for (int i = 0; i < 3000 && now - start < 60'000 * kMs; ++i) {
            const int64_t roundStart = now;
            now += 200 * kUs;
            budget.addRound(roundStart, now, 400 * kUs);
            spent += 400 * kUs;
            now = std::max(now, budget.nextRoundNs(10 * kMs));
        }
        QVERIFY(budget.pendingSpreadNs() < 1 * kMs);
        const double share = 100.0 * static_cast<double>(spent + 40 * kMs) / static_cast<double>(now - start);
        QVERIFY2(share <= 2.05, qPrintable(QString::number(share)));
    }

    // Helper threads' CPU (the exporter's symbolization at a flush) is spread, never charged at once.
    void spreadCostIsChargedGradually()
    {
        OverheadBudget budget(2.0, 0, 200 * kUs, 10'000 * kMs);
        budget.addSpreadCost(100 * kMs);
        budget.addRound(0, 1'000 * kMs, 0); // one second later: a tenth of the spread is due
        QCOMPARE(budget.pendingSpreadNs(), 90 * kMs);
        QCOMPARE(budget.totalCostNs(), 10 * kMs);
    }

    // A lone busy thread on two CPUs loses its whole stop; the sampler's CPU is counted as its own.
    void loneThreadLosesItsStop()
    {
        const std::vector<StoppedSpan> stops{{1'000 * kUs, 1'100 * kUs, 1.0}};
        QCOMPARE(stoppedTargetCpuNs(stops, 1.0, 2 - 1), 100 * kUs);
    }

    // Eight busy threads on two CPUs (one of them ours during the round): stopping a thread costs nothing
    // while another runnable thread can take the CPU; only the time when all are held counts.
    void oversubscribedTargetLosesOnlyWhenAllAreHeld()
    {
        std::vector<StoppedSpan> stops;
        for (int i = 0; i < 8; ++i)
            stops.push_back({0, (i + 1) * 100 * kUs, 1.0}); // all stopped at 0, let go one by one
        // Until the first is let go (100 us) none runs; afterwards at least one runs and fills the CPU.
        QCOMPARE(stoppedTargetCpuNs(stops, 8.0, 2 - 1), 100 * kUs);
        // On a machine with nine CPUs the target could use eight, and loses each thread's stop.
        QCOMPARE(stoppedTargetCpuNs(stops, 8.0, 9 - 1), 3'600 * kUs);
    }

    // Threads that mostly wait (demand 0.25) lose only their share of the time they are held.
    void partialDemand()
    {
        const std::vector<StoppedSpan> stops{{0, 400 * kUs, 0.25}};
        QCOMPARE(stoppedTargetCpuNs(stops, 0.25, 4 - 1), 100 * kUs);
        // A single CPU machine: the sampler's CPU is all the target lost.
        QCOMPARE(stoppedTargetCpuNs(stops, 0.25, 1 - 1), 0);
        QCOMPARE(stoppedTargetCpuNs({}, 1.0, 1), 0);
    }
};

QTEST_GUILESS_MAIN(TestOverheadBudget)
#include "tst_overhead_budget.moc"
