#include "ui/views/live/session_status_bar.h"

#include "engine/model/units.h"

#include <QHBoxLayout>
#include <QLabel>

#include <algorithm>
#include <cmath>

namespace emberline::ui {
namespace {

QString elapsedText(int64_t ns)
{
    const int64_t s = ns / 1'000'000'000;
    return QStringLiteral("%1:%2").arg(s / 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QString percent(uint64_t part, uint64_t whole)
{
    return QString::number(whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0, 'f', 2) +
           QLatin1Char('%');
}

// Below a tenth of a core on average, the target's CPU is too little to set Emberline's against: its own fixed costs
// (reading /proc, flushing, symbolizing) over a mostly idle target read as several hundred per cent of nothing.
// `emberline record` (app/record_command.cpp) draws the same line.
constexpr double kComparableTargetCores = 0.1;

double shareOfCore(int64_t cpuNs, int64_t wallNs)
{
    return wallNs > 0 ? 100.0 * static_cast<double>(cpuNs) / static_cast<double>(wallNs) : 0.0;
}

QString cpuText(int64_t ns)
{
    return QString::fromStdString(engine::formatValue(ns, "nanoseconds"));
}

} // namespace

SessionStatusBar::SessionStatusBar(QWidget *parent) : QWidget(parent)
{
    setupUi();
}

QLabel *SessionStatusBar::addLabel(const char *name, const QString &toolTip)
{
    auto *label = new QLabel(this);
    label->setObjectName(QLatin1String(name));
    label->setToolTip(toolTip);
    // Plain, not selectable: these change every second, and a selectable label lays its text out as a rich text
    // document each time the window's layout asks its size.
    label->setTextFormat(Qt::PlainText);
    layout()->addWidget(label);
    return label;
}

namespace {

QString bytesText(double bytes)
{
    return QString::fromStdString(engine::formatValue(static_cast<int64_t>(std::llround(bytes)), "bytes"));
}

// "1.2 MiB ±80.0 KiB": an estimate and the half-width of its sampling's 95% range, when it has one.
QString estimateText(double bytes, double margin)
{
    if (margin < 1 || bytes <= 0) // a range under a byte (a calibrated heap's) says nothing
        return bytesText(bytes);
    return QStringLiteral("%1 \u00b1%2").arg(bytesText(bytes), bytesText(margin));
}

} // namespace

void SessionStatusBar::setupUi()
{
    setObjectName(QStringLiteral("sessionStatusBar"));
    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(4, 2, 4, 2);
    row->setSpacing(18);
    row->setSizeConstraint(QLayout::SetNoConstraint); // the bar fits its labels to its width (fitToWidth)
    m_state = addLabel("sessionStateLabel", tr("What the session is doing"));
    QFont bold = m_state->font();
    bold.setBold(true);
    m_state->setFont(bold);
    m_elapsed = addLabel("elapsedLabel", tr("Time since the session started"));
    m_samples = addLabel("samplesLabel", tr("Samples taken so far"));
    m_rate = addLabel("rateLabel", tr("Samples per second actually taken (all threads)"));
    m_lost = addLabel("lostLabel", tr("Samples the kernel dropped because the ring buffers were full"));
    m_foreign = addLabel("foreignLabel", tr("Samples of processes outside the profiled program and its children, "
                                            "which the kernel delivered and Emberline dropped"));
    m_incomplete = addLabel("incompleteLabel", tr("CPU samples whose stacks could not be unwound to main or a thread "
                                                  "start (the Health tab's table also counts the stacks of off-CPU "
                                                  "waits)"));
    m_profilerCpu = addLabel("profilerCpuLabel", tr("Emberline's own CPU use, in % of one core"));
    m_heap = addLabel("heapLabel", tr("Memory profiling: the live heap, estimated from the sampled allocations and "
                                      "calibrated to the agent's exact count of it (\u00b1: the range that leaves it), "
                                      "and the bytes allocated so far"));
    m_heap->hide(); // shown by a session that profiles memory, when it fits
    m_sampler = addLabel("samplerLabel", tr("The sampler in use"));
    m_sampler->setMinimumWidth(10);
    m_sampler->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    row->setStretchFactor(m_sampler, 1);
    setStateText(tr("Starting…"));
    fitLiveTexts();
}

void SessionStatusBar::fitTo(QLabel *label, std::initializer_list<QString> widest)
{
    const QFontMetrics metrics(label->font());
    int width = 0;
    for (const QString &text : widest)
        width = std::max(width, metrics.horizontalAdvance(text));
    const QMargins margins = label->contentsMargins();
    label->setFixedSize(width + margins.left() + margins.right() + 2 * label->margin() + 2, label->sizeHint().height());
}

void SessionStatusBar::fitLiveTexts()
{
    // The numbers change every second; a label whose size is fixed does not ask the window to lay itself out
    // again each time (a pass over every widget of it), which a label sized by its text does.
    fitTo(m_elapsed, {tr("Elapsed %1").arg(QStringLiteral("888:88"))});
    fitTo(m_samples, {tr("%1 samples").arg(QStringLiteral("8888888888"))});
    fitTo(m_rate, {tr("%1 /s").arg(QStringLiteral("888888"))});
    fitTo(m_lost, {tr("%1 lost").arg(QStringLiteral("88888888"))});
    fitTo(m_foreign, {tr("%1 foreign dropped").arg(QStringLiteral("88888888"))});
    fitTo(m_incomplete, {tr("%1 incomplete").arg(QStringLiteral("100.00%"))});
    fitTo(m_profilerCpu, {tr("profiler CPU %1% of a core").arg(QStringLiteral("888.8"))});
}

void SessionStatusBar::setStats(const engine::SessionStats &s)
{
    m_elapsed->setText(tr("Elapsed %1").arg(elapsedText(s.elapsedNs)));
    m_samples->setText(tr("%1 samples").arg(s.samples));
    m_rate->setText(tr("%1 /s").arg(s.rateHz, 0, 'f', 0));
    m_lost->setText(tr("%1 lost").arg(s.lost));
    m_foreign->setText(tr("%1 foreign dropped").arg(s.foreignDropped));
    m_incomplete->setText(tr("%1 incomplete").arg(percent(s.incomplete, s.samples)));
    m_profilerCpu->setText(tr("profiler CPU %1% of a core").arg(s.profilerCpuPercent, 0, 'f', 1));
    m_samplerWhy = QString::fromStdString(s.samplerChoice);
    setSamplerText(QString::fromStdString(s.samplerDescription));
    if (s.memory) {
        m_heap->setText(tr("heap %1 live, %2 allocated")
                            .arg(estimateText(s.liveBytes, s.liveBytesMargin), bytesText(s.allocatedBytes)));
        if (!m_heapWanted) {
            m_heapWanted = true;
            fitToWidth();
        }
    }
}

void SessionStatusBar::setSummary(const engine::SessionSummary &s)
{
    if (!m_summaryWidths) { // the summary's texts are longer; set once, when the session ends
        m_summaryWidths = true;
        fitTo(m_elapsed, {tr("Lasted %1").arg(QStringLiteral("888:88"))});
        fitTo(m_profilerCpu, {tr("profiler CPU %1% of a core (%2% of the target's)")
                                  .arg(QStringLiteral("888.8"), QStringLiteral("888.8"))});
    }
    m_elapsed->setText(tr("Lasted %1").arg(elapsedText(s.durationNs)));
    m_samples->setText(tr("%1 samples").arg(s.samples));
    m_rate->setText(tr("%1 /s").arg(s.realRateHz, 0, 'f', 0));
    m_lost->setText(tr("%1 lost").arg(s.lost));
    m_foreign->setText(tr("%1 foreign dropped").arg(s.foreignDropped));
    m_incomplete->setText(tr("%1 incomplete").arg(percent(s.incomplete, s.samples)));
    setProfilerCpu(s);
    QStringList why{QString::fromStdString(s.samplerChoice)};
    for (const std::string &problem : s.samplerProblems)
        why << QString::fromStdString(problem);
    why.removeAll(QString());
    m_samplerWhy = why.join(QLatin1Char('\n'));
    if (!s.samplerDescription.empty())
        setSamplerText(QString::fromStdString(s.samplerDescription));
    m_sampler->setToolTip(m_samplerText + (m_samplerWhy.isEmpty() ? QString() : QLatin1Char('\n') + m_samplerWhy));
    if (s.memory) {
        const engine::MemorySummary &m = *s.memory;
        m_heap->setText(tr("heap peak %1, %2 still live at the end")
                            .arg(bytesText(m.highWaterBytes), estimateText(m.leakedBytes, m.leakedBytesMargin)));
        QStringList tip{tr("%1 allocated in %2 allocations; %3 sampled allocations lost to a full ring")
                            .arg(estimateText(m.allocatedBytes, m.allocatedBytesMargin))
                            .arg(m.allocatedObjects, 0, 'f', 0)
                            .arg(m.allocsDropped)};
        for (const std::string &problem : m.problems)
            tip << QString::fromStdString(problem);
        m_heap->setToolTip(tip.join(QLatin1Char('\n')));
        m_heapWanted = true;
    }
    fitToWidth(); // the summary's labels are wider
}

void SessionStatusBar::setProfilerCpu(const engine::SessionSummary &s)
{
    const double own = shareOfCore(s.profilerCpuNs, s.durationNs);
    const double target = shareOfCore(s.targetCpuNs, s.durationNs);
    QString tip = tr("Emberline used %1 of CPU over the session's %2: %3% of one core.")
                      .arg(cpuText(s.profilerCpuNs), cpuText(s.durationNs))
                      .arg(own, 0, 'f', 1);
    if (s.durationNs > 0 && target >= 100.0 * kComparableTargetCores && s.targetCpuNs > 0) {
        const double ofTarget = 100.0 * static_cast<double>(s.profilerCpuNs) / static_cast<double>(s.targetCpuNs);
        m_profilerCpu->setText(
            tr("profiler CPU %1% of a core (%2% of the target's)").arg(own, 0, 'f', 1).arg(ofTarget, 0, 'f', 1));
        tip += QLatin1Char('\n') + tr("The program's sampled CPU was %1 (%2% of one core); Emberline's is %3% of it.")
                                       .arg(cpuText(s.targetCpuNs))
                                       .arg(target, 0, 'f', 1)
                                       .arg(ofTarget, 0, 'f', 1);
    } else {
        m_profilerCpu->setText(tr("profiler CPU %1% of a core").arg(own, 0, 'f', 1));
        tip += QLatin1Char('\n') + tr("The program's sampled CPU was %1 (%2% of one core): too little for a "
                                      "comparison with Emberline's to mean anything.")
                                       .arg(cpuText(s.targetCpuNs))
                                       .arg(target, 0, 'f', 1);
    }
    m_profilerCpu->setToolTip(tip);
}

void SessionStatusBar::setSamplerText(const QString &text)
{
    if (text == m_samplerText)
        return;
    m_samplerText = text;
    // The tooltip has it whole, with which sampler runs and why.
    m_sampler->setToolTip(text + (m_samplerWhy.isEmpty() ? QString() : QLatin1Char('\n') + m_samplerWhy));
    fitToWidth();
}

QSize SessionStatusBar::minimumSizeHint() const
{
    // The state alone: the other labels go when the bar is narrow (fitToWidth).
    const QMargins margins = contentsMargins() + layout()->contentsMargins();
    return {m_state->sizeHint().width() + margins.left() + margins.right(), QWidget::minimumSizeHint().height()};
}

void SessionStatusBar::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitToWidth();
}

void SessionStatusBar::fitToWidth()
{
    const int spacing = layout()->spacing();
    const QMargins margins = layout()->contentsMargins();
    // The sampler's label keeps its minimum and its spacing even when its text is elided away.
    int left =
        width() - margins.left() - margins.right() - m_state->sizeHint().width() - spacing - m_sampler->minimumWidth();
    for (QLabel *label : {m_elapsed, m_samples, m_lost, m_incomplete, m_rate, m_profilerCpu, m_foreign, m_heap}) {
        const bool wanted = label != m_heap || m_heapWanted;
        const int needed = spacing + label->sizeHint().width();
        const bool fits = wanted && needed <= left;
        if (fits)
            left -= needed;
        if (label->isVisibleTo(this) != fits)
            label->setVisible(fits);
    }
    const int room = std::max(0, left + m_sampler->minimumWidth());
    const QString elided = m_sampler->fontMetrics().elidedText(m_samplerText, Qt::ElideRight, room);
    if (m_sampler->text() != elided)
        m_sampler->setText(elided);
}

void SessionStatusBar::setStateText(const QString &text)
{
    m_state->setText(text);
    fitToWidth();
}

} // namespace emberline::ui
