#pragma once

#include "engine/health/unwind_health.h"

#include <QStringList>
#include <QWidget>

#include <memory>

class QLabel;
class QTableView;

namespace emberline::ui {

class UnwindHealthModel;

// The live session's Health tab: how complete the stacks are and, per module, where incomplete stacks end, why,
// what its symbols are and the fix to try; below, the faults met (bad perf maps, unreadable kallsyms, a binary
// replaced on disk), one line each. Shows the health of the newest flush; the session's end brings the last.
//
// Thread: GUI thread.
class HealthView : public QWidget {
    Q_OBJECT
public:
    explicit HealthView(QWidget *parent = nullptr);

    void setHealth(std::shared_ptr<const engine::UnwindHealth> health);
    UnwindHealthModel *model() const { return m_model; }
    // One line for a tab's tooltip or a status: the share of incomplete stacks.
    QString summaryText() const;
    // What puts the profile's numbers at stake, a line each: incomplete stacks or lost samples above a small
    // share, a module whose frames carry real time but have no names. Empty for a clean run, even one with
    // system libraries without debug symbols or faults that cost nothing (those are said in the tab, unmarked).
    QStringList numbersAtStake() const;
    // True when the tab is marked (⚠): the numbers are at stake.
    bool hasProblems() const { return !numbersAtStake().isEmpty(); }
    // The session's lost samples (the kernel's ring was full), from its live numbers.
    void setLostSamples(uint64_t lost, uint64_t samples);
    // The session's CPU samples and those of them whose stacks are incomplete, from its live numbers (the status
    // bar's share). The health's own counts take in the stacks of off-CPU waits too (wall time); the summary leads
    // with the CPU samples' share, so that the tab and the status bar say the same, and names the other as such.
    void setCpuSamples(uint64_t incomplete, uint64_t samples);
    // The share above which incomplete stacks, lost samples or a module's nameless samples put numbers at stake.
    static constexpr double kAtStakeShare = 0.02;

private:
    void setupUi();

    UnwindHealthModel *m_model = nullptr;
    QLabel *m_summary = nullptr;
    QTableView *m_table = nullptr;
    QLabel *m_faults = nullptr;
    uint64_t m_lost = 0;
    uint64_t m_lostOf = 0; // samples taken besides the lost ones
    uint64_t m_cpuIncomplete = 0;
    uint64_t m_cpuSamples = 0; // 0: not known yet
};

} // namespace emberline::ui
