// LiveSessionView: the Memory tab of a session that profiles memory (the live heap and the program's resident memory
// over the session's time), and the selection shown on every chart of the session's time.
#include "ui/views/live/live_session_view.h"

#include "ui/timeline/timeline_view.h"
#include "ui/views/memory/memory_chart.h"
#include "ui/views/memory/memory_summary_view.h"
#include "ui/views/memory/rss_sampler.h"

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
    m_rss = new RssSampler(250, this);
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
    connect(m_rss, &RssSampler::sampled, m_memoryChart, &MemoryChart::addResident);
    // The program's pid is known once it runs; a program that execs or forks keeps the root pid.
    connect(m_session, &engine::ProfilingSession::statsUpdated, this, [this](const engine::SessionStats &stats) {
        if (stats.targetPid > 0 && stats.targetPid != m_rss->process() && m_session->isActive())
            m_rss->setProcess(stats.targetPid);
        if (stats.memory && stats.realNs > 0 && m_session->isActive())
            m_memoryChart->addHeapReading(stats.realNs, static_cast<int64_t>(std::llround(stats.liveBytes)));
    });
    connect(m_session, &engine::ProfilingSession::finished, m_rss, [this] { m_rss->setProcess(0); });
    connect(m_session, &engine::ProfilingSession::failed, m_rss, [this] { m_rss->setProcess(0); });
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

void LiveSessionView::endMemory(const engine::SessionSummary &summary)
{
    if (!m_memoryChart || !summary.memory)
        return;
    // What the programs still held when they ended: in the chart, a mark at the end; in the summary, the leaks of
    // the session's profile for what was in use then.
    m_memoryChart->setLeaked(static_cast<int64_t>(summary.memory->leakedBytes));
    if (!summary.sessionProfilePath.empty())
        m_memorySummary->setSessionEnded(QString::fromStdString(summary.sessionProfilePath));
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
