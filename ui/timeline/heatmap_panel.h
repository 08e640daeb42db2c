#pragma once

#include "ui/timeline/heatmap_view.h"

#include <QWidget>

#include <memory>
#include <string>

class QLabel;

namespace emberline::ui {

// The heatmap with a line under it that says what is selected: the hint before any selection, range A with its
// total, and after a Shift+drag ranges A and B side by side with their totals and the change from A to B. It
// passes the view's selections on: rangeSelected for the views to show range A, rangesCompared as the hook a
// differential view connects to, selectionCleared when Esc drops both.
//
// Thread: GUI thread.
class HeatmapPanel : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapPanel(QWidget *parent = nullptr);

    HeatmapView *view() const { return m_view; }
    void setHeatmap(std::shared_ptr<const engine::Heatmap> heatmap, const std::string &unit = "count");
    // Shown instead of the grid (still computing, no timestamps, an error).
    void setMessage(const QString &text);
    QString summary() const;

Q_SIGNALS:
    void rangeSelected(int64_t startNs, int64_t endNs);
    void rangesCompared(emberline::engine::TimeRange a, emberline::engine::TimeRange b);
    void selectionCleared();

private:
    void setupUi();
    void connectSignals();
    void updateSummary();
    QString rangeText(const TimeRange &range) const;

    HeatmapView *m_view = nullptr;
    QLabel *m_summary = nullptr;
};

} // namespace emberline::ui
