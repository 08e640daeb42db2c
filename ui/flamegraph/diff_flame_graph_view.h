#pragma once

#include "engine/compare/diff_tree.h"
#include "ui/common/latest_job.h"

#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;

namespace emberline::ui {

class DiffLegend;
class FlameGraphView;

// A differential flame graph: a FlameGraphView over one of a DiffTree's width trees, coloured by change
// (DiffFlameStyle), with its own controls: widths from the new profile or from the base, whether paths that exist
// only in the base are drawn (at their base width), and the colour legend. A new tree (the next comparison, or a
// live session's next flush) keeps the zoom path, the selected function and the search.
//
// Thread: GUI thread; the trees are immutable results built on a worker.
class DiffFlameGraphView : public QWidget {
    Q_OBJECT
public:
    explicit DiffFlameGraphView(QWidget *parent = nullptr);

    void setDiff(std::shared_ptr<const engine::DiffTree> tree, const std::string &unit, bool keepZoom,
                 std::shared_ptr<const std::vector<QString>> names = nullptr);
    const engine::DiffTree *diff() const { return m_tree.get(); }
    void setWidthsFromBase(bool fromBase);
    void setShowBaseOnly(bool show);
    // The width tree chosen: New, NewWithBaseOnly or Base.
    engine::DiffTree::Widths widths() const;
    FlameGraphView *flameGraph() const { return m_flame; }
    // Whether the chosen widths are being made in the background (the picture shows the previous choice).
    bool isPreparingWidths() const { return m_prepare.isPending(); }

Q_SIGNALS:
    // The user chose other widths: the next comparison should come with them made (ComparisonRequest::widths).
    void widthsChanged(engine::DiffTree::Widths widths);
    // The chosen widths are drawn (at once, or once made in the background).
    void widthsShown();

private:
    void setupUi();
    void connectSignals();
    // Draws the chosen widths of the tree; widths the tree has not made yet are made on a pool thread first.
    void showTree(bool keepZoom);
    void drawTree(const std::shared_ptr<const engine::CallTree> &tree, bool keepZoom);

    std::shared_ptr<const engine::DiffTree> m_tree;
    std::shared_ptr<const std::vector<QString>> m_names;
    std::string m_unit;
    QComboBox *m_widths = nullptr;
    QCheckBox *m_baseOnly = nullptr;
    DiffLegend *m_legend = nullptr;
    FlameGraphView *m_flame = nullptr;
    LatestJob<std::shared_ptr<const engine::CallTree>> m_prepare{this};
};

} // namespace emberline::ui
