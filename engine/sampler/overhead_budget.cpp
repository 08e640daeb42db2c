#include "engine/sampler/overhead_budget.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace emberline::engine {

int64_t stoppedTargetCpuNs(std::span<const StoppedSpan> stops, double totalDemand, double capacity)
{
    const double wanted = std::min(std::max(capacity, 0.0), std::max(totalDemand, 0.0));
    if (stops.empty() || wanted <= 0)
        return 0;
    // Sweep the starts and ends of the stops in time order; between two of them the running demand is fixed.
    struct Change {
        int64_t atNs;
        double demand; // negative when a thread stops
    };
    std::vector<Change> changes;
    changes.reserve(stops.size() * 2);
    for (const StoppedSpan &s : stops) {
        if (s.toNs <= s.fromNs)
            continue;
        const double d = std::clamp(s.demand, 0.0, 1.0);
        changes.push_back({s.fromNs, -d});
        changes.push_back({s.toNs, d});
    }
    std::sort(changes.begin(), changes.end(), [](const Change &a, const Change &b) { return a.atNs < b.atNs; });
    double running = totalDemand;
    double lost = 0;
    for (size_t i = 0; i + 1 < changes.size(); ++i) {
        running += changes[i].demand;
        const double usable = std::min(wanted, std::max(running, 0.0));
        lost += (wanted - usable) * static_cast<double>(changes[i + 1].atNs - changes[i].atNs);
    }
    return static_cast<int64_t>(std::llround(lost));
}

OverheadBudget::OverheadBudget(double maxPercent, int64_t startNs, int64_t typicalCostNs, int64_t spreadNs)
    : m_share(std::max(maxPercent, 0.01) / 100.0), m_spreadNs(std::max<int64_t>(spreadNs, 1)), m_lastEndNs(startNs),
      m_lastStartNs(startNs), m_creditNs(std::max<int64_t>(typicalCostNs, 1)),
      m_typicalCostNs(std::max<int64_t>(typicalCostNs, 1)), m_paceCostNs(m_typicalCostNs)
{
}

void OverheadBudget::addRound(int64_t startNs, int64_t endNs, int64_t costNs)
{
    costNs = std::max<int64_t>(costNs, 0);
    const int64_t since = std::max<int64_t>(endNs - m_lastEndNs, 0);
    // A spike beyond 4 typical rounds is spread; the average follows what is charged, so it can grow by
    // 75% a round when rounds really cost more.
    const int64_t spike = 4 * m_typicalCostNs;
    if (costNs > spike) {
        m_pendingSpreadNs += costNs - spike;
        costNs = spike;
    }
    m_typicalCostNs = std::max<int64_t>((3 * m_typicalCostNs + costNs) / 4, 1);
    if (m_pendingSpreadNs > 0) {
        // Spread costs are charged in proportion to the time that passed, so a burst is paid over spreadNs.
        const int64_t part = since >= m_spreadNs
                                 ? m_pendingSpreadNs
                                 : static_cast<int64_t>(static_cast<double>(m_pendingSpreadNs) *
                                                        static_cast<double>(since) / static_cast<double>(m_spreadNs));
        m_pendingSpreadNs -= part;
        costNs += part;
    }
    // Credit earned since the previous round, of which at most two typical rounds' worth is kept.
    const int64_t earned = static_cast<int64_t>(std::llround(static_cast<double>(since) * m_share));
    m_creditNs = std::min(m_creditNs + earned, 2 * m_typicalCostNs) - costNs;
    m_totalCostNs += costNs;
    m_paceCostNs = std::max<int64_t>((15 * m_paceCostNs + costNs) / 16, 1);
    m_lastStartNs = startNs;
    m_lastEndNs = endNs;
}

void OverheadBudget::addSpreadCost(int64_t costNs)
{
    m_pendingSpreadNs += std::max<int64_t>(costNs, 0);
}

int64_t OverheadBudget::nextRoundNs(int64_t baseIntervalNs) const
{
    // The next round is due when the credit covers a round at the slow average of what rounds cost. The
    // credit's deviation from zero (a debt, or what a cheap round left over) counts a quarter, so it is evened
    // out over the next few intervals instead of making the next one long or short: intervals stay even.
    const int64_t missing = m_paceCostNs - m_creditNs / 4;
    const int64_t paced = missing <= 0
                              ? m_lastEndNs
                              : m_lastEndNs + static_cast<int64_t>(std::ceil(static_cast<double>(missing) / m_share));
    return std::max(m_lastStartNs + baseIntervalNs, paced);
}

} // namespace emberline::engine
