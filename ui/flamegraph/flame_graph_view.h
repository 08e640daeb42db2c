#pragma once

#include "ui/flamegraph/flame_graph_layout.h"
#include "ui/flamegraph/flame_node_style.h"
#include "ui/flamegraph/frame_colors.h"

#include <QAbstractScrollArea>
#include <QFont>
#include <QFontMetricsF>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace emberline::ui {

// The flame graph widget: paints what FlameGraphLayout lists (visible and wider than a pixel), nothing else.
// Click zooms into a frame (or back to an ancestor), Esc resets the zoom, Backspace zooms out one level, hover
// shows a tooltip, the search and the selected function are highlighted. Scrolls vertically when the stacks
// are deeper than the window.
//
// Thread: GUI thread. The call tree and frame table are immutable results shared with the worker that built them.
class FlameGraphView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit FlameGraphView(QWidget *parent = nullptr);

    // Shows a new tree. When keepZoom is set, the zoom follows the same call path in the new tree (a sample
    // type or thread switch keeps the user where they were).
    void setTree(std::shared_ptr<const engine::CallTree> tree, std::shared_ptr<const engine::FrameTable> frames,
                 const std::string &unit, bool keepZoom, std::shared_ptr<const std::vector<QString>> names = nullptr);
    const FlameGraphLayout &layout() const { return m_layout; }
    const std::string &unit() const { return m_unit; }

    // Colours and tooltips from `style` instead of the frame palette (a differential flame graph); null returns
    // to the palette. Set it with the tree it describes: its node ids are the tree's.
    void setNodeStyle(std::shared_ptr<const FlameNodeStyle> style);
    const FlameNodeStyle *nodeStyle() const { return m_style.get(); }

    void setOrientation(FlameGraphLayout::Orientation orientation);
    void setSearch(const QString &text);
    void setSelectedFrame(uint32_t frame);
    void zoomTo(uint32_t node);
    void resetZoom() { zoomTo(0); }
    // The same frames (by name) in another frame table, up to the first one it lacks.
    static std::vector<uint32_t> translateFrames(std::span<const uint32_t> ids, const engine::FrameTable &from,
                                                 const engine::FrameTable &to);
    // The flame graph as an SVG document (its current zoom, every row) and as a picture of what is on screen.
    QByteArray toSvg(const QString &title) const;
    QImage toImage() const;
    // The tooltip text for a node (name, self, total, share of all, source, module).
    QString toolTipFor(uint32_t node) const;
    // Frames labelled with short C++ names (shortFunctionName: no parameters, template arguments folded); the
    // tooltip keeps the full name. On by default.
    void setShortNames(bool shortNames);
    bool shortNames() const { return m_shortNames; }
    // The label drawn on a node's rectangle: its full or its short name.
    QString labelFor(uint32_t node) const;
    // The height that shows every row of what is shown (the zoomed node and all below it), without scrolling.
    int contentHeightHint() const;

Q_SIGNALS:
    void zoomChanged(uint32_t node);
    void frameClicked(uint32_t frame);
    // A right-click on a frame (for its context menu).
    void frameContextMenuRequested(uint32_t frame, const QPoint &globalPos);
    void searchResultChanged(int64_t matchedTotal, double share, size_t matchedFrames);

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void setupUi();
    void connectSignals();
    void updateFontMetrics();
    void updateScrollBar();
    void onScrollBarMoved(int value);
    void paintRect(QPainter &painter, const FlameRect &rect);
    void paintLabel(QPainter &painter, const QRect &box, uint32_t node);
    QColor fillFor(const FlameRect &rect) const;
    void emitSearchResult();

    FlameGraphLayout m_layout;
    FramePalette m_palette;
    std::shared_ptr<const FlameNodeStyle> m_style;
    std::string m_unit;
    std::vector<FlameRect> m_rects; // reused between paints
    QFontMetricsF m_metrics{QFont()};
    double m_minTextWidth = 0;
    double m_ellipsisWidth = 0;
    double m_baseline = 0;
    mutable std::vector<float> m_textWidth; // per frame, -1 until measured
    bool m_shortNames = true;
    mutable std::vector<QString> m_shortName; // per frame, made when first drawn (null until then)
    uint32_t m_hovered = engine::kNoIndex;
    uint32_t m_pressed = engine::kNoIndex;
    bool m_updatingScrollBar = false;
};

} // namespace emberline::ui
