#pragma once

#include "engine/health/unwind_health.h"

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
    // True when something needs the user's attention (incomplete stacks, missing names or a fault).
    bool hasProblems() const;

private:
    void setupUi();

    UnwindHealthModel *m_model = nullptr;
    QLabel *m_summary = nullptr;
    QTableView *m_table = nullptr;
    QLabel *m_faults = nullptr;
};

} // namespace emberline::ui
