#pragma once

#include "engine/session/record_session.h"

#include <QWidget>

#include <initializer_list>

class QLabel;

namespace emberline::ui {

// The live numbers of a session in one row: elapsed time, samples, real rate, lost samples, samples of other
// processes dropped, incomplete stacks, the profiler's own CPU and the sampler's description. Each is its own label
// (with an objectName) so that it can be read and tested on its own.
//
// Thread: GUI thread.
class SessionStatusBar : public QWidget {
    Q_OBJECT
public:
    explicit SessionStatusBar(QWidget *parent = nullptr);

    void setStats(const engine::SessionStats &stats);
    void setSummary(const engine::SessionSummary &summary);
    void setStateText(const QString &text);

    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void setupUi();
    // The labels that fit the bar's width, in order of importance (the state, elapsed time, samples, lost,
    // incomplete stacks, rate, profiler CPU, foreign samples, heap), are shown, the rest hidden; the sampler's
    // description takes what is left, elided (its tooltip has it whole).
    void fitToWidth();
    void setSamplerText(const QString &text);
    // Emberline's CPU over the session as a share of one core, and as a share of the target's when the target
    // kept enough of a core busy for the ratio to mean something.
    void setProfilerCpu(const engine::SessionSummary &summary);
    QLabel *addLabel(const char *name, const QString &toolTip);
    // Fixes the label's size to hold the widest of `widest` (texts with the most and widest digits it shows).
    static void fitTo(QLabel *label, std::initializer_list<QString> widest);
    void fitLiveTexts();
    bool m_summaryWidths = false;

    QLabel *m_state = nullptr;
    QLabel *m_elapsed = nullptr;
    QLabel *m_samples = nullptr;
    QLabel *m_rate = nullptr;
    QLabel *m_lost = nullptr;
    QLabel *m_foreign = nullptr;
    QLabel *m_incomplete = nullptr;
    QLabel *m_profilerCpu = nullptr;
    QLabel *m_heap = nullptr; // memory sessions only
    QLabel *m_sampler = nullptr;
    QString m_samplerWhy; // which sampler runs and why, and what kept it from sampling all it should
    QString m_samplerText;
    bool m_heapWanted = false; // a memory session: the heap label is shown when it fits
};

} // namespace emberline::ui
