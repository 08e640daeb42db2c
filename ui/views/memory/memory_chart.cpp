#include "ui/views/memory/memory_chart.h"

#include "engine/analysis/heap_summary.h"

#include "ui/common/value_text.h"
#include "ui/timeline/timeline_chart_view.h"
#include "ui/timeline/timeline_view.h"

#include <QAreaSeries>
#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QScatterSeries>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace emberline::ui {

MemoryChart::MemoryChart(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void MemoryChart::setupUi()
{
    setObjectName(QStringLiteral("memoryChart"));
    auto *chart = new QChart;
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->setBackgroundRoundness(0);
    chart->legend()->setAlignment(Qt::AlignTop);
    m_x = new QValueAxis(chart);
    m_x->setLabelFormat(QStringLiteral("%.0f s"));
    m_y = new QValueAxis(chart);
    m_y->setLabelFormat(QStringLiteral("%.0f B"));
    m_y->setRange(0, 1);
    chart->addAxis(m_x, Qt::AlignBottom);
    chart->addAxis(m_y, Qt::AlignLeft);
    // The live heap's sampling range, first: series draw in the order they were added, and the band goes under the
    // lines. Hidden (and out of the legend) until a flush has a margin.
    m_rangeLow = new QLineSeries(this);
    m_rangeHigh = new QLineSeries(this);
    m_range = new QAreaSeries(m_rangeHigh, m_rangeLow);
    m_range->setName(tr("Sampling range (95%)"));
    m_range->setColor(QColor(200, 60, 40, 50));
    m_range->setBorderColor(QColor(200, 60, 40, 90));
    chart->addSeries(m_range);
    m_range->attachAxis(m_x);
    m_range->attachAxis(m_y);
    m_range->setVisible(false);
    m_heap = new QLineSeries(chart);
    m_heap->setName(tr("Live heap at each flush"));
    m_heap->setPointsVisible(true);
    m_heapReadings = new QLineSeries(chart);
    m_heapReadings->setName(tr("Live heap every quarter second"));
    m_resident = new QLineSeries(chart);
    m_resident->setName(tr("Resident (RSS)"));
    for (QLineSeries *series : {m_heap, m_heapReadings, m_resident}) {
        chart->addSeries(series);
        series->attachAxis(m_x);
        series->attachAxis(m_y);
    }
    m_heap->setColor(QColor(200, 60, 40));
    m_heapReadings->setPen(QPen(QColor(200, 60, 40, 160), 1.5, Qt::DashLine));
    m_resident->setColor(QColor(60, 110, 200));
    m_view = new TimelineChartView(chart, this);
    m_view->setObjectName(QStringLiteral("memoryChartView"));
    m_view->setToolTip(tr("Drag across the chart to select a time range; Shift+drag to compare it with the one "
                          "selected before"));
    m_relayout = new QTimer(this);
    m_relayout->setSingleShot(true);
    m_relayout->setInterval(500);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
}

void MemoryChart::connectSignals()
{
    connect(m_view, &TimelineChartView::rangeSelected, this, &MemoryChart::rangeSelected);
    connect(m_view, &TimelineChartView::comparedRangeSelected, this, &MemoryChart::comparedRangeSelected);
    connect(m_view, &TimelineChartView::hovered, this,
            [this](int64_t t, const QPoint &pos) { QToolTip::showText(pos, toolTipAt(t), m_view); });
    connect(m_relayout, &QTimer::timeout, this, &MemoryChart::relayout);
    connect(m_view->chart(), &QChart::plotAreaChanged, this, [this](const QRectF &area) {
        if (std::abs(area.height() - m_fittedHeight) >= 1) {
            m_fittedHeight = area.height();
            fitBytesAxis();
        }
    });
}

std::vector<std::pair<int64_t, int64_t>> MemoryChart::heapPoints(const engine::LiveSnapshot &snapshot)
{
    std::vector<std::pair<int64_t, int64_t>> points;
    const int column = engine::inUseBytesColumn(snapshot);
    if (column < 0)
        return points;
    points.reserve(snapshot.chunks.size());
    for (const auto &chunk : snapshot.chunks) {
        const std::vector<int64_t> &totals = chunk->memory.totals();
        points.emplace_back(chunk->endNs, static_cast<size_t>(column) < totals.size() ? totals[column] : 0);
    }
    return points;
}

std::vector<double> MemoryChart::heapMargins(const engine::LiveSnapshot &snapshot)
{
    std::vector<double> margins;
    if (engine::inUseBytesColumn(snapshot) < 0)
        return margins; // no heap points either
    margins.reserve(snapshot.chunks.size());
    for (const auto &chunk : snapshot.chunks)
        margins.push_back(std::max(0.0, chunk->inUseBytesMargin));
    return margins;
}

void MemoryChart::setSnapshot(const std::shared_ptr<const engine::LiveSnapshot> &snapshot)
{
    if (!snapshot)
        return;
    m_heapPoints = heapPoints(*snapshot);
    m_heapMargins = heapMargins(*snapshot);
    m_sessionStartNs = snapshot->startNs;
    m_sessionEndNs = snapshot->endNs;
    if (!snapshot->chunks.empty() && snapshot->chunks.back()->final && !m_heapPoints.empty())
        setLeaked(m_heapPoints.back().second); // relays out
    else
        relayout();
}

void MemoryChart::addResident(int64_t timeNs, int64_t bytes)
{
    addReading(m_residentPoints, timeNs, bytes);
}

void MemoryChart::addHeapReading(int64_t timeNs, int64_t bytes)
{
    addReading(m_readings, timeNs, bytes);
}

void MemoryChart::addReading(std::vector<std::pair<int64_t, int64_t>> &readings, int64_t timeNs, int64_t bytes)
{
    if (!readings.empty() && timeNs < readings.back().first)
        return; // out of order: dropped
    readings.emplace_back(timeNs, bytes);
    if (!m_relayout->isActive())
        m_relayout->start();
}

void MemoryChart::setAttachedAt(int64_t timeNs)
{
    if (timeNs <= 0 || timeNs == m_attachedNs)
        return;
    if (!m_attach) {
        m_attach = new QLineSeries(m_view->chart());
        m_attach->setName(tr("Attached (the heap from before is in the RSS alone)"));
        m_attach->setPen(QPen(QColor(90, 90, 90), 1.5, Qt::DotLine));
        m_view->chart()->addSeries(m_attach);
        m_attach->attachAxis(m_x);
        m_attach->attachAxis(m_y);
    }
    m_attachedNs = timeNs;
    relayout();
}

void MemoryChart::setLeaked(int64_t bytes)
{
    if (!m_leaked) {
        m_leaked = new QScatterSeries(m_view->chart());
        m_leaked->setName(tr("Still in use when the program ended"));
        m_leaked->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        m_leaked->setMarkerSize(9);
        m_leaked->setColor(QColor(120, 20, 10));
        m_leaked->setBorderColor(QColor(120, 20, 10));
        m_view->chart()->addSeries(m_leaked);
        m_leaked->attachAxis(m_x);
        m_leaked->attachAxis(m_y);
    }
    m_leakedBytes = bytes;
    relayout();
}

void MemoryChart::setSelection(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_view->setSelection(range);
}

void MemoryChart::setComparedRange(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_view->setComparedRange(range);
}

void MemoryChart::relayout()
{
    // The session's span as the thread timelines show it, stretched to the newest RSS reading (it runs ahead of
    // the flushes); before the first flush, the readings' own span.
    const bool flushed = !m_heapPoints.empty();
    if (!flushed && m_residentPoints.empty())
        return;
    const int64_t start = flushed ? m_sessionStartNs : m_residentPoints.front().first;
    int64_t end = flushed ? m_sessionEndNs : start;
    if (!m_residentPoints.empty())
        end = std::max(end, m_residentPoints.back().first);
    if (!m_readings.empty())
        end = std::max(end, m_readings.back().first);
    end = std::max(end, start + 1'000'000);
    double peak = std::max<double>(0, static_cast<double>(m_leakedBytes));
    for (const auto &points : {&m_heapPoints, &m_residentPoints, &m_readings}) {
        for (const auto &[t, bytes] : *points) {
            if (t >= start)
                peak = std::max(peak, static_cast<double>(bytes));
        }
    }
    bool ranged = false;
    for (size_t i = 0; i < m_heapPoints.size() && i < m_heapMargins.size(); ++i) {
        if (m_heapPoints[i].first >= start && m_heapMargins[i] > 0) {
            ranged = true;
            peak = std::max(peak, static_cast<double>(m_heapPoints[i].second) + m_heapMargins[i]);
        }
    }
    const ByteScale scale = byteScale(peak);
    // Emptied before the new range is set, so that each line is laid out once, with its new points.
    m_heap->clear();
    m_heapReadings->clear();
    m_resident->clear();
    m_view->setTimeRange(start, end);
    const TimeAxis &axis = m_view->axis();
    const auto toChart = [&](const std::vector<std::pair<int64_t, int64_t>> &points) {
        QList<QPointF> out;
        out.reserve(static_cast<qsizetype>(points.size()));
        for (const auto &[t, bytes] : points) {
            if (t >= start)
                out.append(QPointF(axis.toSeconds(t), static_cast<double>(bytes) / scale.divisor));
        }
        return out;
    };
    m_heap->replace(toChart(m_heapPoints));
    m_heapReadings->replace(TimelineView::thinLine(toChart(m_readings), std::max(axis.width(), 100.0)));
    m_range->setVisible(ranged);
    for (QLegendMarker *marker : m_view->chart()->legend()->markers(m_range))
        marker->setVisible(ranged);
    if (ranged) {
        QList<QPointF> low;
        QList<QPointF> high;
        for (size_t i = 0; i < m_heapPoints.size() && i < m_heapMargins.size(); ++i) {
            const auto [t, bytes] = m_heapPoints[i];
            if (t < start)
                continue;
            const double x = axis.toSeconds(t);
            const double b = static_cast<double>(bytes);
            low.append(QPointF(x, std::max(0.0, b - m_heapMargins[i]) / scale.divisor));
            high.append(QPointF(x, (b + m_heapMargins[i]) / scale.divisor));
        }
        m_rangeLow->replace(low);
        m_rangeHigh->replace(high);
    }
    m_resident->replace(TimelineView::thinLine(toChart(m_residentPoints), std::max(axis.width(), 100.0)));
    if (m_leaked && flushed && m_leakedBytes >= 0)
        m_leaked->replace(toChart({{m_heapPoints.back().first, m_leakedBytes}}));
    m_bytesTop = std::max(peak / scale.divisor * 1.05, 1.0);
    m_bytesUnit = scale.unit;
    if (m_attach && m_attachedNs > 0) {
        // At the start of the chart or inside it: the session began at the attach.
        const double x = axis.toSeconds(std::max(m_attachedNs, start));
        m_attach->replace({QPointF(x, 0), QPointF(x, m_bytesTop)});
    }
    fitBytesAxis();
}

void MemoryChart::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    // In a short pane the legend goes beside the plot, which keeps the height for the bytes axis' labels.
    const Qt::Alignment side = height() < kLegendAboveHeight ? Qt::AlignRight : Qt::AlignTop;
    if (m_view->chart()->legend()->alignment() != side)
        m_view->chart()->legend()->setAlignment(side);
}

void MemoryChart::fitBytesAxis()
{
    // Ticks on round numbers of the unit (0, 20, 40, ... MiB), with room above the highest point; as many as the
    // plot's height holds, up to five: QtCharts gives each label the axis' height over the labels' count and elides
    // a taller one to "...", which a short pane (the timelines at a fifth of a window) showed for every label.
    const double plot = std::max(1.0, m_view->chart()->plotArea().height());
    const int ticks = std::clamp(static_cast<int>(plot / (m_view->fontMetrics().height() + 12)) + 1, 2, 5);
    m_y->setRange(0, m_bytesTop);
    m_y->setTickCount(ticks);
    m_y->applyNiceNumbers();
    m_y->setLabelFormat(m_y->max() < 10 ? QStringLiteral("%.1f ") + m_bytesUnit
                                        : QStringLiteral("%.0f ") + m_bytesUnit);
}

QString MemoryChart::toolTipAt(int64_t timeNs) const
{
    // The index of the last point at or before timeNs, -1 when none is.
    const auto before = [timeNs](const std::vector<std::pair<int64_t, int64_t>> &points) -> std::ptrdiff_t {
        const auto it = std::upper_bound(points.begin(), points.end(), timeNs,
                                         [](int64_t t, const std::pair<int64_t, int64_t> &p) { return t < p.first; });
        return std::distance(points.begin(), it) - 1;
    };
    QStringList lines;
    lines << tr("%1 s").arg(static_cast<double>(timeNs - m_view->axis().startNs()) / 1e9, 0, 'f', 1);
    if (const std::ptrdiff_t i = before(m_heapPoints); i >= 0) {
        const int64_t heap = m_heapPoints[static_cast<size_t>(i)].second;
        const double margin = static_cast<size_t>(i) < m_heapMargins.size() ? m_heapMargins[static_cast<size_t>(i)] : 0;
        lines << (margin > 0 ? tr("Live heap: %1 \u00b1%2 (calibrated to the agent's exact count of it)")
                                   .arg(valueText(heap, "bytes"),
                                        valueText(static_cast<int64_t>(std::llround(margin)), "bytes"))
                             : tr("Live heap: %1").arg(valueText(heap, "bytes")));
    }
    if (const std::ptrdiff_t i = before(m_readings); i >= 0)
        lines << tr("Live heap at the quarter second: %1")
                     .arg(valueText(m_readings[static_cast<size_t>(i)].second, "bytes"));
    if (const std::ptrdiff_t i = before(m_residentPoints); i >= 0)
        lines << tr("Resident: %1").arg(valueText(m_residentPoints[static_cast<size_t>(i)].second, "bytes"));
    if (m_attachedNs > 0)
        lines << tr("Attached %1 s into the chart: blocks allocated before are not in the live heap (the RSS holds "
                    "them)")
                     .arg(static_cast<double>(std::max<int64_t>(0, m_attachedNs - m_view->axis().startNs())) / 1e9, 0,
                          'f', 1);
    if (m_leakedBytes >= 0 && !m_heapPoints.empty() && timeNs >= m_heapPoints.back().first)
        lines << tr("Still in use when the program ended: %1").arg(valueText(m_leakedBytes, "bytes"));
    return lines.join(QLatin1Char('\n'));
}

} // namespace emberline::ui
