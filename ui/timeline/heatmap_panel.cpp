#include "ui/timeline/heatmap_panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace emberline::ui {

HeatmapPanel::HeatmapPanel(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void HeatmapPanel::setupUi()
{
    setObjectName(QStringLiteral("heatmapPanel"));
    m_view = new HeatmapView(this);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("heatmapSummary"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setContentsMargins(6, 0, 6, 0);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_summary);
    updateSummary();
}

void HeatmapPanel::connectSignals()
{
    connect(m_view, &HeatmapView::rangeSelected, this, [this](int64_t startNs, int64_t endNs) {
        updateSummary();
        Q_EMIT rangeSelected(startNs, endNs);
    });
    connect(m_view, &HeatmapView::rangesCompared, this, [this](TimeRange a, TimeRange b) {
        updateSummary();
        Q_EMIT rangesCompared(a, b);
    });
    connect(m_view, &HeatmapView::selectionCleared, this, [this] {
        updateSummary();
        Q_EMIT selectionCleared();
    });
}

void HeatmapPanel::setHeatmap(std::shared_ptr<const engine::Heatmap> heatmap, const std::string &unit)
{
    m_view->setValueUnit(unit);
    if (heatmap && !heatmap->hasTimestamps())
        m_view->setEmptyText(tr("The samples carry no timestamps (end_timestamp_ns): there is no heatmap to show."));
    else
        m_view->setEmptyText(tr("No samples yet"));
    m_view->setHeatmap(std::move(heatmap));
    updateSummary();
}

void HeatmapPanel::setMessage(const QString &text)
{
    m_view->setHeatmap(nullptr);
    m_view->setEmptyText(text);
    updateSummary();
}

QString HeatmapPanel::summary() const
{
    return m_summary->text();
}

QString HeatmapPanel::rangeText(const TimeRange &range) const
{
    const int64_t start = m_view->heatmap()->startNs();
    const auto seconds = [start](int64_t t) { return QString::number(static_cast<double>(t - start) / 1e9, 'f', 2); };
    return tr("%1–%2 s (%3)")
        .arg(seconds(range.startNs), seconds(range.endNs), m_view->valueText(m_view->heatmap()->sumIn(range)));
}

void HeatmapPanel::updateSummary()
{
    const auto a = m_view->rangeA();
    const auto b = m_view->rangeB();
    if (!a) {
        m_summary->setText(m_view->heatmap() && m_view->heatmap()->hasTimestamps()
                               ? tr("Drag across the cells to select a time range; Shift+drag to compare it with a "
                                    "second one; Esc clears.")
                               : QString());
        return;
    }
    if (!b) {
        m_summary->setText(tr("Range A: %1. Shift+drag to compare with a second range.").arg(rangeText(*a)));
        return;
    }
    const int64_t totalA = m_view->heatmap()->sumIn(*a);
    const int64_t totalB = m_view->heatmap()->sumIn(*b);
    const QString change =
        totalA > 0 ? QStringLiteral("%1%2%")
                         .arg(totalB >= totalA ? QStringLiteral("+") : QString())
                         .arg(100.0 * static_cast<double>(totalB - totalA) / static_cast<double>(totalA), 0, 'f', 1)
                   : QStringLiteral("–");
    m_summary->setText(tr("Range A: %1   ·   Range B: %2   ·   B − A: %3").arg(rangeText(*a), rangeText(*b), change));
}

} // namespace emberline::ui
