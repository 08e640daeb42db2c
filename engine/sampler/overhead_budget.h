#pragma once

#include <cstdint>
#include <deque>
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
// one CPU over a sliding window. After each round the sampler adds what the round cost and asks when the
// next round may start. Costs that arrive in bursts (a flush's symbolization; a round that loads a library's
// unwind tables, or meets many new threads, costing over 4 times the typical round) are spread over
// `spreadNs` instead of stopping sampling until they are paid off: a long pause would make the next sample
// of every thread carry that much CPU time, and a few heavy samples skew a profile.
//
// Plain arithmetic on the numbers given, no clock of its own, so that tests can feed it numbers.
// Thread: whichever thread owns it.
class OverheadBudget {
public:
    // `typicalCostNs`: what a round is expected to cost until rounds have been seen.
    OverheadBudget(double maxPercent, int64_t startNs, int64_t typicalCostNs, int64_t windowNs = 1'000'000'000,
                   int64_t spreadNs = 10'000'000'000);

    // A round that started at `startNs` and whose costs, measured at `endNs`, came to `costNs` (everything
    // since the previous measurement).
    void addRound(int64_t startNs, int64_t endNs, int64_t costNs);
    // A cost that will be charged gradually over the following rounds.
    void addSpreadCost(int64_t costNs);
    // When the next round may start: no sooner than `baseIntervalNs` after the previous one (the asked
    // frequency), and no sooner than the window's costs allow.
    int64_t nextRoundNs(int64_t baseIntervalNs) const;

    int64_t totalCostNs() const { return m_totalCostNs; }
    int64_t pendingSpreadNs() const { return m_pendingSpreadNs; }
    int64_t typicalCostNs() const { return m_typicalCostNs; }

private:
    struct Entry {
        int64_t atNs;
        int64_t costNs;
    };
    double m_share;
    int64_t m_windowNs;
    int64_t m_spreadNs;
    // m_entries.front() is the anchor: the window starts at its time and its cost is not counted.
    std::deque<Entry> m_entries;
    int64_t m_windowCostNs = 0;
    int64_t m_lastStartNs = 0;
    int64_t m_totalCostNs = 0;
    int64_t m_pendingSpreadNs = 0;
    int64_t m_typicalCostNs = 0; // moving average of what rounds were charged
};

} // namespace emberline::engine
