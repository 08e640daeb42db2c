#pragma once

#include <cstdint>
#include <span>

namespace emberline::engine {

// One thread held stopped by a sampling round: from the moment it was asked to stop until it was let go, and
// how much of a CPU it would have used meanwhile (its CPU time plus its run-queue wait over its previous
// interval, between 0 and 1).
struct StoppedSpan {
    int64_t fromNs = 0;
    int64_t toNs = 0;
    double demand = 1.0;
};

// The CPU time a target could not use because some of its threads were stopped: at every instant, what the
// target as a whole wanted (`totalDemand`, in CPUs, capped by `capacity`) minus what its running threads
// could still use. Threads waiting for a CPU anyway lose nothing when stopped, so on an oversubscribed
// machine only the moments when too few threads are left running count; a lone busy thread loses its whole
// stop. `capacity` is the CPUs the target may use, less the one the sampler occupies (its time is counted
// as its own).
int64_t stoppedTargetCpuNs(std::span<const StoppedSpan> stops, double totalDemand, double capacity);

// The ptrace sampler's overhead budget: everything sampling costs (the sampler's own CPU, including what it
// does between rounds, plus an estimate of what the target loses to its stops) stays under `maxPercent` of
// one CPU. After each round the sampler adds what the round cost and asks when the next round may start.
//
// Rounds are paced, not batched: time earns credit at `maxPercent`, a round spends what it cost, and the next
// round waits until the credit covers a typical round. Unspent credit is kept for two rounds at most, so a
// quiet stretch never buys a burst of rounds followed by a long pause. The samples' weights are the CPU and
// wall time since the thread's previous sample, so uneven intervals would give a few samples most of the
// weight and make the profile noisy. For the same reason, a round that costs more than usual is repaid over
// the following rounds (a quarter of the debt each), and a burst (a flush's symbolization; a round that loads
// a library's unwind tables or meets many new threads, costing over 4 times the typical round) is spread
// over `spreadNs`.
//
// Plain arithmetic on the numbers given, no clock of its own, so that tests can feed it numbers.
// Thread: whichever thread owns it.
class OverheadBudget {
public:
    // `typicalCostNs`: what a round is expected to cost until rounds have been seen.
    OverheadBudget(double maxPercent, int64_t startNs, int64_t typicalCostNs, int64_t spreadNs = 10'000'000'000);

    // A round that started at `startNs` and whose costs, measured at `endNs`, came to `costNs` (everything
    // since the previous measurement).
    void addRound(int64_t startNs, int64_t endNs, int64_t costNs);
    // A cost that will be charged gradually over the following rounds.
    void addSpreadCost(int64_t costNs);
    // When the next round may start: no sooner than `baseIntervalNs` after the previous one (the asked
    // frequency), and no sooner than the credit allows a typical round.
    int64_t nextRoundNs(int64_t baseIntervalNs) const;

    int64_t totalCostNs() const { return m_totalCostNs; }
    int64_t pendingSpreadNs() const { return m_pendingSpreadNs; }
    int64_t typicalCostNs() const { return m_typicalCostNs; }
    // Unspent budget (negative: a debt being repaid).
    int64_t creditNs() const { return m_creditNs; }

private:
    double m_share;
    int64_t m_spreadNs;
    int64_t m_lastEndNs = 0;
    int64_t m_lastStartNs = 0;
    int64_t m_creditNs = 0;
    int64_t m_totalCostNs = 0;
    int64_t m_pendingSpreadNs = 0;
    int64_t m_typicalCostNs = 0; // moving average of what rounds were charged, for spotting spikes
    int64_t m_paceCostNs = 0;    // slower average of the same, for pacing
};

} // namespace emberline::engine
