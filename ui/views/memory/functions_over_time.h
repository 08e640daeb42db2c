#pragma once

#include "engine/analysis/heap_summary.h"

#include <QWidget>

#include <cstdint>
#include <vector>

class QChartView;
class QLabel;
class QValueAxis;

namespace emberline::ui {

// The memory summary's "Over time" list: a line per function (the largest holders at the scope's end) of what its
// stacks held at the end of each flush, as heaptrack's consumed-memory chart shows the top allocators. A function
// whose line only climbs is the one to look at for a leak. Times are seconds of the session.
//
// Thread: GUI thread.
class FunctionsOverTime : public QWidget {
    Q_OBJECT
public:
    explicit FunctionsOverTime(QWidget *parent = nullptr);

    // Lines anew; `sessionStartNs` is the time axis' zero. Empty: a note that there is nothing over time to show.
    void setSeries(const std::vector<engine::FunctionOverTime> &series, int64_t sessionStartNs);
    QChartView *chartView() const { return m_view; }
    // The function of each line shown, in order.
    QStringList functions() const;

private:
    QChartView *m_view = nullptr;
    QValueAxis *m_x = nullptr;
    QValueAxis *m_y = nullptr;
    QLabel *m_empty = nullptr;
};

} // namespace emberline::ui
