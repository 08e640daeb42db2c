#include "ui/views/live/health_view.h"

#include "ui/models/unwind_health_model.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace emberline::ui {

HealthView::HealthView(QWidget *parent) : QWidget(parent)
{
    setupUi();
}

void HealthView::setupUi()
{
    setObjectName(QStringLiteral("healthView"));
    m_model = new UnwindHealthModel(this);
    m_summary = new QLabel(tr("Unwind and symbol health appears with the first flush."), this);
    m_summary->setObjectName(QStringLiteral("healthSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("healthTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_faults = new QLabel(this);
    m_faults->setObjectName(QStringLiteral("healthFaults"));
    m_faults->setWordWrap(true);
    m_faults->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Its own text colour too: on a dark palette the default light text would vanish on the pale background.
    m_faults->setStyleSheet(QStringLiteral("QLabel { background: #fdf0d5; color: #3a2c00; padding: 4px; }"));
    m_faults->setVisible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_faults);
}

void HealthView::setHealth(std::shared_ptr<const engine::UnwindHealth> health)
{
    m_model->setHealth(std::move(health));
    m_summary->setText(summaryText());
    const auto &h = m_model->health();
    QStringList faults;
    if (h) {
        for (const std::string &fault : h->faults)
            faults << QStringLiteral("⚠ ") + QString::fromStdString(fault);
        for (const std::string &note : h->notes)
            faults << QStringLiteral("ℹ ") + QString::fromStdString(note);
    }
    m_faults->setText(faults.join(QLatin1Char('\n')));
    m_faults->setVisible(!faults.isEmpty());
    // The module, numbers and cause fit their text; the symbols and the fix share what is left.
    for (int column :
         {UnwindHealthModel::ModuleColumn, UnwindHealthModel::SamplesColumn, UnwindHealthModel::IncompleteColumn,
          UnwindHealthModel::CauseColumn, UnwindHealthModel::SymbolsColumn})
        m_table->resizeColumnToContents(column);
}

QString HealthView::summaryText() const
{
    const auto &h = m_model->health();
    if (!h)
        return tr("Unwind and symbol health appears with the first flush.");
    const auto percent = [](uint64_t part, uint64_t whole) {
        return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    };
    QString text;
    if (m_cpuSamples == 0) {
        text = tr("%1 of %2 stacks incomplete (%3%)")
                   .arg(h->incomplete)
                   .arg(h->samples)
                   .arg(percent(h->incomplete, h->samples), 0, 'f', 2);
    } else {
        // The status bar's number first; the table's counts (with the off-CPU waits' stacks) after it, named.
        text = tr("%1% of the CPU samples' stacks incomplete (%2 of %3)")
                   .arg(percent(m_cpuIncomplete, m_cpuSamples), 0, 'f', 2)
                   .arg(m_cpuIncomplete)
                   .arg(m_cpuSamples);
        if (h->samples != m_cpuSamples || h->incomplete != m_cpuIncomplete)
            text += tr(" · with the stacks of off-CPU waits, which the table counts too: %1 of %2 (%3%)")
                        .arg(h->incomplete)
                        .arg(h->samples)
                        .arg(percent(h->incomplete, h->samples), 0, 'f', 2);
    }
    if (h->stackBytes > 0)
        text += h->stackCopyLearned ? tr(" · stack copies of %1 bytes, learned from the stacks").arg(h->stackBytes)
                                    : tr(" · stack copies of %1 bytes").arg(h->stackBytes);
    if (h->walkChecks > 0)
        text += tr(" · the agent's own walks checked against %1 copies: %2 differ (%3%)")
                    .arg(h->walkChecks)
                    .arg(h->walkMismatches)
                    .arg(percent(h->walkMismatches, h->walkChecks), 0, 'f', 3);
    if (!h->faults.empty())
        text += tr(" · %n problem(s) below", nullptr, static_cast<int>(h->faults.size()));
    if (h->incomplete == 0 && h->faults.empty())
        text += tr(" · every stack reached main or a thread's start");
    return text;
}

void HealthView::setLostSamples(uint64_t lost, uint64_t samples)
{
    m_lost = lost;
    m_lostOf = samples;
}

void HealthView::setCpuSamples(uint64_t incomplete, uint64_t samples)
{
    if (incomplete == m_cpuIncomplete && samples == m_cpuSamples)
        return;
    m_cpuIncomplete = incomplete;
    m_cpuSamples = samples;
    if (m_model->health())
        m_summary->setText(summaryText());
}

QStringList HealthView::numbersAtStake() const
{
    QStringList reasons;
    const auto share = [](uint64_t part, uint64_t whole) {
        return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    };
    const auto percent = [](double s) { return QString::number(s * 100.0, 'f', 1) + QLatin1Char('%'); };
    if (const double lost = share(m_lost, m_lost + m_lostOf); lost > kAtStakeShare)
        reasons << tr("%1 of the samples were lost (the kernel's buffer was full)").arg(percent(lost));
    const auto &h = m_model->health();
    if (!h)
        return reasons;
    // The CPU samples' share, as the status bar says it; the off-CPU waits' stacks put wall time at stake too.
    if (const double cpu = share(m_cpuIncomplete, m_cpuSamples); cpu > kAtStakeShare)
        reasons
            << tr("%1 of the CPU samples' stacks are incomplete: their callers' totals are too low").arg(percent(cpu));
    else if (const double all = share(h->incomplete, h->samples); all > kAtStakeShare)
        reasons << tr("%1 of the stacks (with those of off-CPU waits) are incomplete: their callers' totals are too "
                      "low")
                       .arg(percent(all));
    for (const engine::ModuleHealth &m : h->modules) {
        const double carried = share(m.samples, h->samples);
        if (m.symbols.status == engine::SymbolStatus::None && carried > kAtStakeShare)
            reasons << tr("%1 has no names, and its frames are on %2 of the stacks")
                           .arg(QString::fromStdString(m.path), percent(carried));
    }
    return reasons;
}

} // namespace emberline::ui
