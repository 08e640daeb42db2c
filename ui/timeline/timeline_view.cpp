#include "ui/timeline/timeline_view.h"

#include "ui/timeline/activity_strip.h"
#include "ui/timeline/live_thread_model.h"
#include "ui/timeline/timeline_chart_view.h"

#include <QChart>
#include <QHBoxLayout>
#include <QLineSeries>
#include <QListView>
#include <QMenu>
#include <QPen>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace emberline::ui {
namespace {

constexpr int kAxisRoom = 64;        // pixels left of the plot area, for the value axis
constexpr int kCpuChartMinimum = 80; // the plot margins and a few tens of pixels of plot
constexpr int kCpuChartRoomy = 140;  // the CPU chart's height before the flush chart is shown beside it
constexpr int kFlushChartMinimum = 90;
constexpr size_t kMaxCpuSeries = 16; // the busiest shown threads get a line; the strip shows every one

// The smallest 1, 2 or 5 times a power of ten at or above v.
double niceCeiling(double v)
{
    double step = 1;
    while (step * 10 <= v)
        step *= 10;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (step * m >= v)
            return step * m;
    }
    return step * 10;
}

QString seconds(double s)
{
    return QStringLiteral("%1 s").arg(s, 0, 'f', s < 10 ? 2 : 1);
}

} // namespace

TimelineView::TimelineView(QWidget *parent) : QWidget(parent)
{
    m_partTimer = new QTimer(this);
    m_partTimer->setSingleShot(true);
    m_partTimer->setTimerType(Qt::PreciseTimer);
    m_partTimer->setInterval(1);
    connect(m_partTimer, &QTimer::timeout, this, &TimelineView::applyNextPart);
    setupUi();
    connectSignals();
}

void TimelineView::setupUi()
{
    setObjectName(QStringLiteral("timelineView"));
    m_cpuView = new TimelineChartView(createChart(m_cpuX, m_cpuY, tr("CPU %")), this);
    m_cpuView->setObjectName(QStringLiteral("cpuChart"));
    m_cpuView->setMinimumHeight(kCpuChartMinimum);
    m_strip = new ActivityStrip(this);
    m_flushView = new TimelineChartView(createChart(m_flushX, m_flushY, tr("per flush")), this);
    m_flushView->setObjectName(QStringLiteral("flushChart"));
    m_flushView->setMinimumHeight(kFlushChartMinimum);
    // Both charts keep the same room for labels, so that their time axes (and the strip's) line up.
    m_cpuView->setPlotMargins(QMargins(kAxisRoom, 6, 10, 22));
    m_flushView->setPlotMargins(QMargins(kAxisRoom, 6, 10, 22));
    m_flushY->setTitleText(tr("per flush"));
    m_samplesSeries = new QLineSeries(m_flushView->chart());
    m_samplesSeries->setName(tr("samples"));
    m_lostSeries = new QLineSeries(m_flushView->chart());
    m_lostSeries->setName(tr("lost"));
    for (QLineSeries *series : {m_samplesSeries, m_lostSeries}) {
        series->setPointsVisible(true);
        m_flushView->chart()->addSeries(series);
        series->attachAxis(m_flushX);
        series->attachAxis(m_flushY);
    }
    m_samplesSeries->setColor(QColor(0x1f, 0x78, 0xb4));
    m_lostSeries->setColor(QColor(0xe3, 0x1a, 0x1c));

    auto *charts = new QVBoxLayout;
    charts->setContentsMargins(0, 0, 0, 0);
    charts->setSpacing(0);
    charts->addWidget(m_cpuView, 3);
    charts->addWidget(m_strip);
    charts->addWidget(m_flushView, 2);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(createThreadPane());
    layout->addLayout(charts, 1);
}

QWidget *TimelineView::createThreadPane()
{
    auto *pane = new QWidget(this);
    pane->setMaximumWidth(260);
    m_threadModel = new LiveThreadModel(this);
    m_threadList = new QListView(pane);
    m_threadList->setObjectName(QStringLiteral("timelineThreadList"));
    m_threadList->setModel(m_threadModel);
    m_threadList->setContextMenuPolicy(Qt::CustomContextMenu);
    m_threadList->setToolTip(tr("Uncheck a thread to hide it; Isolate shows the selected thread alone"));
    m_isolate = new QToolButton(pane);
    m_isolate->setObjectName(QStringLiteral("isolateThreadButton"));
    m_isolate->setText(tr("Isolate"));
    m_isolate->setToolTip(tr("Show only the selected thread"));
    m_showAll = new QToolButton(pane);
    m_showAll->setObjectName(QStringLiteral("showAllThreadsButton"));
    m_showAll->setText(tr("Show all"));
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_isolate);
    buttons->addWidget(m_showAll);
    buttons->addStretch();
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 4, 0);
    layout->addWidget(m_threadList, 1);
    layout->addLayout(buttons);
    return pane;
}

QChart *TimelineView::createChart(QValueAxis *&x, QValueAxis *&y, const QString &yTitle)
{
    auto *chart = new QChart;
    chart->legend()->setVisible(false);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->setBackgroundRoundness(0);
    x = new QValueAxis(chart);
    x->setLabelFormat(QStringLiteral("%.0f s"));
    x->setRange(0, 1);
    x->setTickCount(2); // before the first flush: "0 s" and "1 s", not "0 s 0 s 1 s 1 s 1 s"
    y = new QValueAxis(chart);
    y->setTitleText(yTitle);
    y->setLabelFormat(QStringLiteral("%.0f"));
    y->setRange(0, 100);
    y->setTickCount(3);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    // One-pixel cosmetic pens (width 0) for the axis lines, ticks and grid: they draw alike, but a line item
    // with a wider pen strokes a path to find its bounds each time the scene asks, several times per repaint.
    for (QValueAxis *axis : {x, y}) {
        QPen pen = axis->linePen();
        pen.setWidth(0);
        axis->setLinePen(pen);
        pen = axis->gridLinePen();
        pen.setWidth(0);
        axis->setGridLinePen(pen);
        pen = axis->minorGridLinePen();
        pen.setWidth(0);
        axis->setMinorGridLinePen(pen);
    }
    return chart;
}

void TimelineView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitCharts();
}

void TimelineView::fitCharts()
{
    const int strip = m_strip->sizeHint().height();
    const bool room = height() >= kCpuChartRoomy + strip + kFlushChartMinimum;
    // Hidden, its minimum leaves the layout's, so the CPU chart and the strip never overlap in a short room.
    if (m_flushView->isVisibleTo(this) != room)
        m_flushView->setVisible(room);
}

void TimelineView::connectSignals()
{
    for (TimelineChartView *view : {m_cpuView, m_flushView}) {
        connect(view, &TimelineChartView::rangeSelected, this, &TimelineView::rangeSelected);
        connect(view, &TimelineChartView::comparedRangeSelected, this, &TimelineView::comparedRangeSelected);
    }
    connect(m_strip, &ActivityStrip::rangeSelected, this, &TimelineView::rangeSelected);
    connect(m_strip, &ActivityStrip::comparedRangeSelected, this, &TimelineView::comparedRangeSelected);
    connect(m_cpuView, &TimelineChartView::hovered, this,
            [this](int64_t t, const QPoint &pos) { QToolTip::showText(pos, cpuToolTip(t), m_cpuView); });
    connect(m_flushView, &TimelineChartView::hovered, this,
            [this](int64_t t, const QPoint &pos) { QToolTip::showText(pos, flushToolTip(t), m_flushView); });
    connect(m_strip, &ActivityStrip::hovered, this, [this](int64_t t, uint32_t thread, const QPoint &pos) {
        if (!m_activity || !m_snapshot || thread >= m_snapshot->threads.size())
            return;
        const size_t bucket = m_activity->bucketAt(t);
        QToolTip::showText(pos,
                           tr("%1 at %2: %3% CPU")
                               .arg(QString::fromStdString(m_snapshot->threads[thread].displayName()),
                                    seconds(m_cpuView->axis().toSeconds(t)))
                               .arg(m_activity->cpuPercent(thread, bucket), 0, 'f', 0),
                           m_strip);
    });
    connect(m_cpuView->chart(), &QChart::plotAreaChanged, this, &TimelineView::updateStrip);
    connect(m_cpuView->chart(), &QChart::plotAreaChanged, this, &TimelineView::updateCpuTicks);
    connect(m_threadModel, &LiveThreadModel::hiddenThreadsChanged, this, [this] {
        updateCpuSeries();
        updateStrip();
        Q_EMIT hiddenThreadsChanged();
    });
    connect(m_isolate, &QToolButton::clicked, this,
            [this] { m_threadModel->isolate(m_threadList->currentIndex().row()); });
    connect(m_showAll, &QToolButton::clicked, m_threadModel, &LiveThreadModel::showAll);
    connect(m_threadList, &QListView::customContextMenuRequested, this, [this](const QPoint &pos) {
        const QModelIndex index = m_threadList->indexAt(pos);
        QMenu menu(this);
        QAction *isolate =
            menu.addAction(tr("Isolate this thread"), this, [this, index] { m_threadModel->isolate(index.row()); });
        isolate->setEnabled(index.isValid());
        menu.addAction(tr("Show all threads"), m_threadModel, &LiveThreadModel::showAll);
        menu.exec(m_threadList->viewport()->mapToGlobal(pos));
    });
}

void TimelineView::setData(std::shared_ptr<const engine::LiveSnapshot> snapshot,
                           std::shared_ptr<const engine::ThreadActivity> activity)
{
    m_snapshot = std::move(snapshot);
    m_activity = std::move(activity);
    if (!m_snapshot)
        return;
    m_threadModel->setThreads(m_snapshot->threads);
    // A new time range makes every series lay out its line again, and so do its new points: a chart's lines are
    // emptied first so that each is laid out once, with its new points over the new range.
    for (auto &[thread, series] : m_cpuSeries)
        series->clear();
    m_cpuView->setTimeRange(m_snapshot->startNs, m_snapshot->endNs);
    updateCpuSeries();
    // The flush chart and the strip follow in later passes of the event loop, each chart laying itself out and
    // repainting in between: a flush's work on this thread comes in slices of a few milliseconds with input and
    // timers served between them, rather than in one piece that a target keeping every core busy stretches into
    // a stall. The next part waits on a 1 ms timer, not a posted call: posted events are delivered together, so
    // a posted part would run in the same pass as the previous part's repaint.
    m_nextPart = Part::FlushChart;
    if (!m_partTimer->isActive())
        m_partTimer->start();
}

void TimelineView::applyNextPart()
{
    if (!m_snapshot)
        return;
    switch (m_nextPart) {
    case Part::None:
        return;
    case Part::FlushChart:
        m_samplesSeries->clear();
        m_lostSeries->clear();
        m_flushView->setTimeRange(m_snapshot->startNs, m_snapshot->endNs);
        updateFlushSeries();
        m_nextPart = Part::Strip;
        m_partTimer->start();
        return;
    case Part::Strip:
        updateStrip();
        m_nextPart = Part::None;
        Q_EMIT dataShown();
        return;
    }
}

void TimelineView::setSelection(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_cpuView->setSelection(range);
    m_flushView->setSelection(range);
    m_strip->setSelection(range);
}

void TimelineView::setComparedRange(std::optional<std::pair<int64_t, int64_t>> range)
{
    m_cpuView->setComparedRange(range);
    m_flushView->setComparedRange(range);
    m_strip->setComparedRange(range);
}

std::vector<uint32_t> TimelineView::shownThreads() const
{
    std::vector<uint32_t> out;
    if (!m_snapshot)
        return out;
    for (uint32_t t = 0; t < m_snapshot->threads.size(); ++t) {
        if (!m_threadModel->isHidden(t))
            out.push_back(t);
    }
    return out;
}

void TimelineView::updateCpuSeries()
{
    if (!m_snapshot || !m_activity)
        return;
    std::vector<uint32_t> shown = shownThreads();
    std::stable_sort(shown.begin(), shown.end(),
                     [&](uint32_t a, uint32_t b) { return m_snapshot->threads[a].hits > m_snapshot->threads[b].hits; });
    if (shown.size() > kMaxCpuSeries)
        shown.resize(kMaxCpuSeries);
    for (auto it = m_cpuSeries.begin(); it != m_cpuSeries.end();) {
        if (std::find(shown.begin(), shown.end(), it->first) == shown.end()) {
            m_cpuView->chart()->removeSeries(it->second);
            delete it->second;
            it = m_cpuSeries.erase(it);
        } else {
            ++it;
        }
    }
    const engine::ThreadActivity &a = *m_activity;
    const TimeAxis &axis = m_cpuView->axis();
    double peak = 100;
    for (uint32_t thread : shown) {
        QLineSeries *&series = m_cpuSeries[thread];
        if (!series) {
            series = new QLineSeries;
            series->setColor(threadColor(thread));
            m_cpuView->chart()->addSeries(series);
            series->attachAxis(m_cpuX);
            series->attachAxis(m_cpuY);
        }
        series->setName(QString::fromStdString(m_snapshot->threads[thread].displayName()));
        series->replace(cpuPoints(a, thread, axis, peak));
    }
    m_cpuTop = std::ceil(peak / 50.0) * 50.0;
    updateCpuTicks();
}

void TimelineView::updateCpuTicks()
{
    // A label every 50% while they fit the plot's height, else every 100%, 200%…: QtCharts gives each label the
    // axis' height over the labels' count, less its padding, and elides a taller label to "…". Above the top
    // label, room for its upper half: QtCharts hides a label that crosses the plot's top.
    const double plot = std::max(1.0, m_cpuView->chart()->plotArea().height());
    const int label = m_cpuView->fontMetrics().height();
    double interval = 50;
    while ((std::floor(m_cpuTop / interval) + 1) * (label + 12) > plot && interval < m_cpuTop)
        interval *= 2;
    const double max = m_cpuTop * (1 + (label / 2.0 + 2) / plot);
    if (m_cpuY->tickType() != QValueAxis::TicksDynamic) {
        m_cpuY->setTickType(QValueAxis::TicksDynamic);
        m_cpuY->setTickAnchor(0);
    }
    if (m_cpuY->tickInterval() != interval) // each change lays the axis' labels out again
        m_cpuY->setTickInterval(interval);
    if (std::abs(m_cpuY->max() - max) > 0.5 || m_cpuY->min() != 0)
        m_cpuY->setRange(0, max);
}

QList<QPointF> TimelineView::thinLine(const QList<QPointF> &points, double pixels)
{
    // More points than pixels cannot all be seen: each four-pixel column keeps its lowest and its highest point,
    // in time order, so the line's envelope and every peak and dip stay while the chart draws (and hit-tests, the
    // larger part of a refresh's cost in the chart) about one point per two pixels, however long the session.
    const auto columns = static_cast<size_t>(std::max(1.0, pixels / 4));
    const auto n = static_cast<size_t>(points.size());
    if (n <= 2 * columns)
        return points;
    QList<QPointF> out;
    out.reserve(static_cast<qsizetype>(columns) * 2 + 2);
    out.append(points.front()); // the line spans the whole time, from its first point to its last
    for (size_t c = 0; c < columns; ++c) {
        const size_t begin = c * n / columns;
        const size_t end = (c + 1) * n / columns;
        if (begin == end)
            continue;
        size_t low = begin;
        size_t high = begin;
        for (size_t k = begin; k < end; ++k) {
            if (points[qsizetype(k)].y() < points[qsizetype(low)].y())
                low = k;
            if (points[qsizetype(k)].y() > points[qsizetype(high)].y())
                high = k;
        }
        const size_t first = std::min(low, high);
        const size_t second = std::max(low, high);
        if (first != 0) // the first point is in already
            out.append(points[qsizetype(first)]);
        if (second != first)
            out.append(points[qsizetype(second)]);
    }
    if (out.back() != points.back())
        out.append(points.back());
    return out;
}

QList<QPointF> TimelineView::cpuPoints(const engine::ThreadActivity &a, uint32_t thread, const TimeAxis &axis,
                                       double &peak)
{
    QList<QPointF> points;
    points.reserve(static_cast<qsizetype>(a.bucketCount));
    for (size_t b = 0; b < a.bucketCount; ++b) {
        const double cpu = a.cpuPercent(thread, b);
        peak = std::max(peak, cpu);
        points.append({axis.toSeconds(a.bucketStart(b) + a.bucketNs / 2), cpu});
    }
    return thinLine(points, axis.width());
}

void TimelineView::updateFlushSeries()
{
    QList<QPointF> samples, lost;
    double peak = 10;
    const TimeAxis &axis = m_flushView->axis();
    for (const auto &chunk : m_snapshot->chunks) {
        const double x = axis.toSeconds(chunk->endNs);
        samples.append({x, static_cast<double>(chunk->samples)});
        lost.append({x, static_cast<double>(chunk->lost)});
        peak = std::max(peak, static_cast<double>(std::max(chunk->samples, chunk->lost)));
    }
    // A marker per flush while they have room (eight pixels each); a plain, thinned line after that.
    const bool markers = static_cast<double>(samples.size()) * 8 <= axis.width();
    for (QLineSeries *series : {m_samplesSeries, m_lostSeries}) {
        if (series->pointsVisible() != markers)
            series->setPointsVisible(markers);
    }
    m_samplesSeries->replace(thinLine(samples, axis.width()));
    m_lostSeries->replace(thinLine(lost, axis.width()));
    if (const double top = niceCeiling(peak); m_flushY->max() != top || m_flushY->min() != 0)
        m_flushY->setRange(0, top);
    if (m_flushY->tickCount() != 3)
        m_flushY->setTickCount(3);
}

void TimelineView::updateStrip()
{
    const std::vector<uint32_t> shown = shownThreads();
    std::vector<QString> names;
    names.reserve(shown.size());
    for (uint32_t t : shown)
        names.push_back(QString::fromStdString(m_snapshot->threads[t].displayName()));
    m_strip->setAxis(m_cpuView->axis());
    if (m_activity)
        m_strip->setActivity(m_activity, shown, std::move(names));
    fitCharts(); // the strip's height follows the shown threads
}

QString TimelineView::cpuToolTip(int64_t timeNs) const
{
    if (!m_activity || !m_snapshot || m_activity->bucketCount == 0)
        return {};
    const size_t bucket = m_activity->bucketAt(timeNs);
    const TimeAxis &axis = m_cpuView->axis();
    QStringList lines{tr("%1 – %2").arg(seconds(axis.toSeconds(m_activity->bucketStart(bucket))),
                                        seconds(axis.toSeconds(m_activity->bucketStart(bucket + 1))))};
    std::vector<std::pair<double, uint32_t>> rows;
    for (uint32_t t : shownThreads())
        rows.emplace_back(m_activity->cpuPercent(t, bucket), t);
    std::stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    for (const auto &[cpu, t] : rows)
        lines
            << tr("%1: %2% CPU").arg(QString::fromStdString(m_snapshot->threads[t].displayName())).arg(cpu, 0, 'f', 0);
    return lines.join(QLatin1Char('\n'));
}

QString TimelineView::flushToolTip(int64_t timeNs) const
{
    if (!m_snapshot)
        return {};
    const engine::TimelineChunk *nearest = nullptr;
    for (const auto &chunk : m_snapshot->chunks) {
        if (!nearest || std::llabs(chunk->endNs - timeNs) < std::llabs(nearest->endNs - timeNs))
            nearest = chunk.get();
    }
    if (!nearest)
        return {};
    const TimeAxis &axis = m_flushView->axis();
    return tr("Flush %1 (%2 – %3): %4 samples, %5 lost")
        .arg(nearest->sequence)
        .arg(seconds(axis.toSeconds(nearest->startNs)), seconds(axis.toSeconds(nearest->endNs)))
        .arg(nearest->samples)
        .arg(nearest->lost);
}

} // namespace emberline::ui
