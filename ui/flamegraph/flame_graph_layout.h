#pragma once

#include "engine/analysis/call_tree.h"
#include "engine/model/frame_table.h"

#include <QPointF>
#include <QRectF>
#include <QSizeF>
#include <QString>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace emberline::ui {

// One frame rectangle of the flame graph. x and width are fractions of the zoomed node's total (0..1); row is
// the node's depth (the root, "all", is row 0); pixels is where it lands in the viewport.
struct FlameRect {
    uint32_t node = 0;
    double x = 0;
    double width = 0;
    uint32_t row = 0;
    QRectF pixels;
};

// The geometry of a flame graph, apart from any painting: call tree → rectangles, zoom (the zoomed node spans
// the full width, its ancestors are shown full width beneath it), orientation (root at the bottom, or at the
// top as an icicle graph), vertical scrolling, hit testing, culling of what is invisible or narrower than a
// pixel, and the search match set with its share of the total.
//
// Setting a tree costs nothing per node: a node's start is the sum of its elder siblings' totals, added up
// while a paint walks down from the zoomed node (which visits only the rectangles it draws plus their immediate
// too-narrow children), and the rows under a node come from the tree's `deepest`. So a live refresh's new tree
// is shown at once, whatever its size.
//
// Thread: GUI thread (owned by FlameGraphView); the tree it points to is immutable and shared.
class FlameGraphLayout {
public:
    enum class Orientation { RootAtBottom, RootAtTop };

    // `names`, when given, are the frame table's names as engine::frameDisplayNames() made them (kept from one refresh
    // to the next while the frame table stays the same); without them they are made here, O(frames).
    void setTree(std::shared_ptr<const engine::CallTree> tree, std::shared_ptr<const engine::FrameTable> frames,
                 std::shared_ptr<const std::vector<QString>> names = nullptr);
    const engine::CallTree *tree() const { return m_tree.get(); }
    const engine::FrameTable *frames() const { return m_frames.get(); }
    bool isEmpty() const { return !m_tree || m_tree->size() == 0 || m_tree->total() <= 0; }
    // The frame's name as a QString, converted once per tree ("all" for the root).
    const QString &nodeName(uint32_t node) const;

    // --- viewport
    void setViewportSize(QSizeF size);
    QSizeF viewportSize() const { return m_viewport; }
    void setRowHeight(double height);
    double rowHeight() const { return m_rowHeight; }
    void setOrientation(Orientation orientation);
    Orientation orientation() const { return m_orientation; }
    // Rectangles this narrow or narrower (in pixels) are neither listed nor hit.
    void setMinimumPixelWidth(double width) { m_minPixelWidth = width; }
    double minimumPixelWidth() const { return m_minPixelWidth; }
    // Rows from the root to the deepest frame under the zoomed node.
    uint32_t rowCount() const;
    double contentHeight() const { return rowCount() * m_rowHeight; }
    // How far the view is scrolled away from the root row, in pixels; clamped to [0, maxScrollOffset()].
    void setScrollOffset(double offset);
    double scrollOffset() const { return m_scroll; }
    double maxScrollOffset() const;
    // Top edge of a row in viewport pixels.
    double rowTop(uint32_t row) const;

    // --- zoom
    void setZoomNode(uint32_t node);
    uint32_t zoomNode() const { return m_zoom; }
    // Nodes from the root down to the zoomed node (the root alone when not zoomed).
    std::vector<uint32_t> breadcrumb() const;
    // The node reached by following frame ids from the root (a zoom path carried across sample types);
    // the deepest node found along the path.
    uint32_t findByFramePath(std::span<const uint32_t> frames) const;
    // The node with the largest total among those whose frame has this exact name; kNoIndex if none.
    uint32_t largestNodeNamed(std::string_view name) const;

    // --- geometry
    bool isShown(uint32_t node) const; // the zoomed node, its ancestors and its descendants
    double fractionX(uint32_t node) const;
    double fractionWidth(uint32_t node) const;
    QRectF nodeRect(uint32_t node) const; // empty when not shown
    // Rectangles that intersect the viewport and are wider than the minimum, ancestors first, then pre-order.
    void visibleRects(std::vector<FlameRect> &out) const;
    std::vector<FlameRect> visibleRects() const;
    uint32_t nodeAt(QPointF point) const; // engine::kNoIndex when the point is on no drawn rectangle

    // --- search and selection
    // Case-insensitive substring match on frame names; an empty text clears the search.
    void setSearch(const QString &text);
    const QString &search() const { return m_search; }
    bool hasSearch() const { return !m_search.isEmpty(); }
    bool isMatch(uint32_t node) const;
    // Value of the samples that pass through at least one match, each sample counted once.
    int64_t matchedTotal() const { return m_matchedTotal; }
    double matchedShare() const;
    size_t matchedFrameCount() const { return m_matchedFrames; }
    void setSelectedFrame(uint32_t frame) { m_selectedFrame = frame; }
    uint32_t selectedFrame() const { return m_selectedFrame; }
    bool isSelected(uint32_t node) const;

private:
    double pixelWidth(uint32_t node) const;
    // Value of the node's elder siblings and of its ancestors' elder siblings up to the zoomed node (which must
    // be the node or one of its ancestors): where the node starts, in sample-value units.
    int64_t offsetFromZoom(uint32_t node) const;
    void recomputeMatches();

    std::shared_ptr<const engine::CallTree> m_tree;
    std::shared_ptr<const engine::FrameTable> m_frames;
    std::shared_ptr<const std::vector<QString>> m_names; // per frame; null when the tree is empty
    QString m_rootName = QStringLiteral("all");

    QSizeF m_viewport{0, 0};
    double m_rowHeight = 18;
    double m_minPixelWidth = 1.0;
    double m_scroll = 0;
    Orientation m_orientation = Orientation::RootAtBottom;
    uint32_t m_zoom = 0;

    QString m_search;
    std::vector<uint8_t> m_frameMatch; // per frame; empty when no search
    // The names and search m_frameMatch was computed for: a refresh with the same frame table keeps it.
    std::shared_ptr<const std::vector<QString>> m_matchedNames;
    QString m_matchedSearch;
    int64_t m_matchedTotal = 0;
    size_t m_matchedFrames = 0;
    uint32_t m_selectedFrame = engine::kNoIndex;
};

} // namespace emberline::ui
