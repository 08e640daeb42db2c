// LiveSessionView: the Memory tab of a session that profiles memory (the live heap and the program's resident memory
// over the session's time), and the selection shown on every chart of the session's time. The tab takes the session's
// live updates (each flush's live heap, the summary's scope, the leaks in the last flush) and, between flushes, the
// live heap and the program's RSS in the session's stats; nothing else.
#include "ui/views/live/live_session_view.h"

#include "ui/timeline/timeline_view.h"
#include "ui/views/memory/memory_chart.h"
#include "ui/views/memory/memory_summary_view.h"

#include <QSplitter>
#include <QTabWidget>

#include <cmath>

namespace emberline::ui {

void LiveSessionView::createMemoryTab()
{
    auto *pane = new QSplitter(Qt::Horizontal, this);
    pane->setObjectName(QStringLiteral("memorySplitter"));
    m_memoryChart = new MemoryChart(pane);
    m_memorySummary = new MemorySummaryView(pane);
    pane->addWidget(m_memoryChart);
    pane->addWidget(m_memorySummary);
    pane->setStretchFactor(0, 3);
    pane->setStretchFactor(1, 2);
    pane->setSizes({900, 600}); // the lists' size hints would otherwise take most of the width
    const int tab = m_timelineTabs->insertTab(1, pane, tr("Memory"));
    m_timelineTabs->setTabToolTip(tab, tr("The live heap the sampled allocations tell, flush by flush and every "
                                          "quarter second between flushes, and the program's resident memory (RSS) "
                                          "every quarter second"));
}

void LiveSessionView::connectMemorySignals()
{
    if (!m_memoryChart)
        return;
    // A range dragged on the chart is a range of the session, as on the thread timelines.
    connect(m_memoryChart, &MemoryChart::rangeSelected, this, &LiveSessionView::selectRange);
    connect(m_memoryChart, &MemoryChart::comparedRangeSelected, this, &LiveSessionView::onComparedRangeSelected);
    // Between flushes: the live heap and the RSS of the program's processes, as the session read them.
    connect(m_session, &engine::ProfilingSession::statsUpdated, this, [this](const engine::SessionStats &stats) {
        if (!stats.memory || stats.realNs <= 0 || !m_session->isActive())
            return;
        m_memoryChart->addHeapReading(stats.realNs, static_cast<int64_t>(std::llround(stats.liveBytes)));
        if (stats.attachedRealNs > 0)
            m_memoryChart->setAttachedAt(stats.attachedRealNs);
        if (stats.residentBytes >= 0)
            m_memoryChart->addResident(stats.realNs, stats.residentBytes);
    });
}

void LiveSessionView::updateMemory(const engine::LiveUpdate &update)
{
    if (!m_memoryChart || !update.snapshot)
        return;
    m_memoryChart->setSnapshot(update.snapshot);
    // The summary follows the views' scope, as the flame graph does: asked again when a flush came in or the scope
    // changed (not for another sample type).
    const engine::LiveSelection &scope = update.selection;
    const bool sameScope = scope.startNs == m_memorySummaryScope.startNs && scope.endNs == m_memorySummaryScope.endNs &&
                           scope.hiddenThreads == m_memorySummaryScope.hiddenThreads;
    if (update.loaded && (update.snapshot->flushes != m_memorySummaryFlushes || !sameScope)) {
        m_memorySummaryFlushes = update.snapshot->flushes;
        m_memorySummaryScope = scope;
        m_memorySummary->showLive(update.loaded, scope);
    }
}

void LiveSessionView::showSelection(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_timeline->setSelection(range);
    if (m_memoryChart)
        m_memoryChart->setSelection(range);
}

void LiveSessionView::showComparedRange(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_timeline->setComparedRange(range);
    if (m_memoryChart)
        m_memoryChart->setComparedRange(range);
}

} // namespace emberline::ui
