#pragma once

#include "engine/analysis/sandwich.h"
#include "engine/model/frame_table.h"

#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QLabel;
class QSplitter;

namespace emberline::ui {

class FlameGraphView;

// The sandwich of the selected function, as speedscope shows it: its callers above it (a flame graph with the
// function at the bottom and each caller on top of what it called) and its callees below it (an icicle graph
// with the function at the top). A click on a frame in either selects that function. The two share the height by
// their rows: when both fit, each shows all of its rows; when they do not, each keeps a share, the callers' a whole
// number of rows, so that their outermost row is never cut in half at the top.
//
// Thread: GUI thread; the sandwich is built on a worker (AnalysisRunner).
class SandwichView : public QWidget {
    Q_OBJECT
public:
    explicit SandwichView(QWidget *parent = nullptr);

    // `bottomUp`: the sandwich was built on inverted stacks, where callers and callees trade places.
    void setSandwich(std::shared_ptr<const engine::Sandwich> sandwich,
                     const std::shared_ptr<const engine::FrameTable> &frames,
                     const std::shared_ptr<const std::vector<QString>> &names, const std::string &unit, bool bottomUp);
    void setMessage(const QString &message);
    FlameGraphView *callers() const { return m_callers; }
    FlameGraphView *callees() const { return m_callees; }
    const engine::Sandwich *sandwich() const { return m_sandwich.get(); }
    QString title() const;
    QString message() const;

Q_SIGNALS:
    void frameActivated(uint32_t frame);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void setupUi();
    void fitPanes();

    std::shared_ptr<const engine::Sandwich> m_sandwich;
    QLabel *m_title = nullptr;
    QLabel *m_message = nullptr;
    QSplitter *m_splitter = nullptr;
    FlameGraphView *m_callers = nullptr;
    FlameGraphView *m_callees = nullptr;
};

} // namespace emberline::ui
