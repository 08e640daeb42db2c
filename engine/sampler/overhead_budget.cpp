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

OverheadBudget::OverheadBudget(double maxPercent, int64_t startNs, int64_t typicalCostNs, int64_t windowNs,
                               int64_t spreadNs)
    : m_share(std::max(maxPercent, 0.01) / 100.0)
    , m_windowNs(windowNs)
    , m_spreadNs(std::max<int64_t>(spreadNs, 1))
    , m_lastStartNs(startNs)
    , m_typicalCostNs(std::max<int64_t>(typicalCostNs, 1))
{
    m_entries.push_back({startNs, 0});
}

void OverheadBudget::addRound(int64_t startNs, int64_t endNs, int64_t costNs)
{
    costNs = std::max<int64_t>(costNs, 0);
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
        const int64_t since = std::max<int64_t>(endNs - m_entries.back().atNs, 0);
        const int64_t part = since >= m_spreadNs
                                 ? m_pendingSpreadNs
                                 : static_cast<int64_t>(static_cast<double>(m_pendingSpreadNs) *
                                                        static_cast<double>(since) / static_cast<double>(m_spreadNs));
        m_pendingSpreadNs -= part;
        costNs += part;
    }
    m_entries.push_back({endNs, costNs});
    m_windowCostNs += costNs;
    m_totalCostNs += costNs;
    m_lastStartNs = startNs;
    // Keep the anchor and at least the latest round; older rounds leave the window.
    while (m_entries.size() > 2 && m_entries[1].atNs < endNs - m_windowNs) {
        m_entries.pop_front();
        m_windowCostNs -= m_entries.front().costNs;
    }
}

void OverheadBudget::addSpreadCost(int64_t costNs)
{
    m_pendingSpreadNs += std::max<int64_t>(costNs, 0);
}

int64_t OverheadBudget::nextRoundNs(int64_t baseIntervalNs) const
{
    // The window's costs, and the next round's if it costs what the latest did, must not exceed the share of
    // the time from the window's start to the end of that round.
    const int64_t expected = m_windowCostNs + m_entries.back().costNs;
    const auto paidOff =
        m_entries.front().atNs + static_cast<int64_t>(std::ceil(static_cast<double>(expected) / m_share));
    return std::max(m_lastStartNs + baseIntervalNs, paidOff);
}

} // namespace emberline::engine
