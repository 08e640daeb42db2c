#include "ui/flamegraph/flame_graph_layout.h"

#include <algorithm>
#include <cmath>

namespace emberline::ui {

using engine::kNoIndex;

void FlameGraphLayout::setTree(std::shared_ptr<const engine::CallTree> tree,
                               std::shared_ptr<const engine::FrameTable> frames,
                               std::shared_ptr<const std::vector<QString>> names)
{
    m_tree = std::move(tree);
    m_frames = std::move(frames);
    m_zoom = 0;
    m_scroll = 0;
    m_names.reset();
    if (!m_tree || !m_frames || m_tree->size() == 0) {
        recomputeMatches();
        return;
    }
    m_names = names && names->size() == m_frames->size() ? std::move(names) : engine::frameDisplayNames(*m_frames);
    recomputeMatches();
}

const QString &FlameGraphLayout::nodeName(uint32_t node) const
{
    const uint32_t frame = m_tree->node(node).frame;
    return frame == kNoIndex ? m_rootName : (*m_names)[frame];
}

void FlameGraphLayout::setViewportSize(QSizeF size)
{
    m_viewport = size;
    setScrollOffset(m_scroll);
}

void FlameGraphLayout::setRowHeight(double height)
{
    m_rowHeight = std::max(1.0, height);
    setScrollOffset(m_scroll);
}

void FlameGraphLayout::setOrientation(Orientation orientation)
{
    m_orientation = orientation;
}

uint32_t FlameGraphLayout::rowCount() const
{
    return isEmpty() ? 0 : m_tree->node(m_zoom).deepest + 1;
}

void FlameGraphLayout::setScrollOffset(double offset)
{
    m_scroll = std::clamp(offset, 0.0, maxScrollOffset());
}

double FlameGraphLayout::maxScrollOffset() const
{
    return std::max(0.0, contentHeight() - m_viewport.height());
}

double FlameGraphLayout::rowTop(uint32_t row) const
{
    if (m_orientation == Orientation::RootAtTop)
        return row * m_rowHeight - m_scroll;
    return m_viewport.height() - (row + 1) * m_rowHeight + m_scroll;
}

void FlameGraphLayout::setZoomNode(uint32_t node)
{
    m_zoom = (isEmpty() || node >= m_tree->size()) ? 0 : node;
    // A path with no value in this tree (a differential tree's other side) has no width: its nearest ancestor
    // with one is shown instead.
    while (m_zoom != 0 && m_tree->node(m_zoom).total <= 0)
        m_zoom = m_tree->node(m_zoom).parent;
    setScrollOffset(m_scroll);
}

std::vector<uint32_t> FlameGraphLayout::breadcrumb() const
{
    std::vector<uint32_t> path;
    if (isEmpty())
        return path;
    for (uint32_t n = m_zoom; n != kNoIndex; n = m_tree->node(n).parent)
        path.push_back(n);
    std::reverse(path.begin(), path.end());
    return path;
}

uint32_t FlameGraphLayout::findByFramePath(std::span<const uint32_t> frames) const
{
    if (isEmpty())
        return kNoIndex;
    uint32_t node = 0;
    for (uint32_t frame : frames) {
        const auto children = m_tree->children(node);
        const auto it =
            std::find_if(children.begin(), children.end(), [&](uint32_t c) { return m_tree->node(c).frame == frame; });
        if (it == children.end())
            break;
        node = *it;
    }
    return node;
}

uint32_t FlameGraphLayout::largestNodeNamed(std::string_view name) const
{
    if (isEmpty())
        return kNoIndex;
    uint32_t best = kNoIndex;
    for (uint32_t i = 1; i < m_tree->size(); ++i) {
        const auto &node = m_tree->node(i);
        if (m_frames->frame(node.frame).name == name && (best == kNoIndex || node.total > m_tree->node(best).total))
            best = i;
    }
    return best;
}

bool FlameGraphLayout::isShown(uint32_t node) const
{
    if (isEmpty() || node >= m_tree->size())
        return false;
    const uint32_t zoomDepth = m_tree->node(m_zoom).depth;
    if (m_tree->node(node).depth <= zoomDepth) {
        // Shown when it is the zoomed node or one of its ancestors.
        uint32_t n = m_zoom;
        while (m_tree->node(n).depth > m_tree->node(node).depth)
            n = m_tree->node(n).parent;
        return n == node;
    }
    uint32_t n = node;
    while (m_tree->node(n).depth > zoomDepth)
        n = m_tree->node(n).parent;
    return n == m_zoom;
}

double FlameGraphLayout::fractionX(uint32_t node) const
{
    if (!isShown(node) || m_tree->node(node).depth <= m_tree->node(m_zoom).depth)
        return 0.0;
    return static_cast<double>(offsetFromZoom(node)) / static_cast<double>(m_tree->node(m_zoom).total);
}

int64_t FlameGraphLayout::offsetFromZoom(uint32_t node) const
{
    int64_t offset = 0;
    for (uint32_t n = node; n != m_zoom && n != kNoIndex;) {
        const uint32_t parent = m_tree->node(n).parent;
        for (uint32_t sibling : m_tree->children(parent)) {
            if (sibling == n)
                break;
            offset += m_tree->node(sibling).total;
        }
        n = parent;
    }
    return offset;
}

double FlameGraphLayout::fractionWidth(uint32_t node) const
{
    if (!isShown(node))
        return 0.0;
    if (m_tree->node(node).depth <= m_tree->node(m_zoom).depth)
        return 1.0;
    return static_cast<double>(m_tree->node(node).total) / static_cast<double>(m_tree->node(m_zoom).total);
}

double FlameGraphLayout::pixelWidth(uint32_t node) const
{
    return static_cast<double>(m_tree->node(node).total) / static_cast<double>(m_tree->node(m_zoom).total) *
           m_viewport.width();
}

QRectF FlameGraphLayout::nodeRect(uint32_t node) const
{
    if (!isShown(node))
        return {};
    const double w = m_viewport.width();
    return QRectF(fractionX(node) * w, rowTop(m_tree->node(node).depth), fractionWidth(node) * w, m_rowHeight);
}

std::vector<FlameRect> FlameGraphLayout::visibleRects() const
{
    std::vector<FlameRect> out;
    visibleRects(out);
    return out;
}

void FlameGraphLayout::visibleRects(std::vector<FlameRect> &out) const
{
    out.clear();
    if (isEmpty() || m_viewport.width() <= 0 || m_viewport.height() <= 0)
        return;
    const double width = m_viewport.width();
    const auto rowVisible = [&](uint32_t row) {
        const double top = rowTop(row);
        return top < m_viewport.height() && top + m_rowHeight > 0;
    };
    // Rows grow away from the root; once a row is past the far edge, so are all deeper ones.
    const auto pastFarEdge = [&](uint32_t row) {
        return m_orientation == Orientation::RootAtTop ? rowTop(row) >= m_viewport.height()
                                                       : rowTop(row) + m_rowHeight <= 0;
    };

    for (uint32_t n : breadcrumb()) {
        const uint32_t row = m_tree->node(n).depth;
        if (rowVisible(row))
            out.push_back({n, 0.0, 1.0, row, QRectF(0, rowTop(row), width, m_rowHeight)});
    }
    const double zoomTotal = static_cast<double>(m_tree->node(m_zoom).total);
    // Pre-order with each node's start (value from the zoomed node's left edge): children start where their
    // parent does, each after its elder siblings.
    struct Pending {
        uint32_t node;
        int64_t start;
    };
    std::vector<Pending> stack;
    const auto pushChildren = [&](uint32_t parent, int64_t start) {
        const auto children = m_tree->children(parent);
        const size_t first = stack.size();
        for (uint32_t c : children) {
            stack.push_back({c, start});
            start += m_tree->node(c).total;
        }
        std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end()); // eldest on top
    };
    pushChildren(m_zoom, 0);
    while (!stack.empty()) {
        const auto [n, start] = stack.back();
        stack.pop_back();
        const auto &node = m_tree->node(n);
        const double fw = static_cast<double>(node.total) / zoomTotal;
        if (fw * width <= m_minPixelWidth || pastFarEdge(node.depth))
            continue; // children are never wider, nor nearer
        const double fx = static_cast<double>(start) / zoomTotal;
        if (rowVisible(node.depth))
            out.push_back({n, fx, fw, node.depth, QRectF(fx * width, rowTop(node.depth), fw * width, m_rowHeight)});
        pushChildren(n, start);
    }
}

uint32_t FlameGraphLayout::nodeAt(QPointF point) const
{
    if (isEmpty() || point.x() < 0 || point.x() >= m_viewport.width() || point.y() < 0 ||
        point.y() >= m_viewport.height())
        return kNoIndex;
    const double fromRoot =
        m_orientation == Orientation::RootAtTop ? point.y() + m_scroll : m_viewport.height() - point.y() + m_scroll;
    const double rowF = std::floor(fromRoot / m_rowHeight);
    if (rowF < 0 || rowF >= rowCount())
        return kNoIndex;
    const auto row = static_cast<uint32_t>(rowF);
    const uint32_t zoomDepth = m_tree->node(m_zoom).depth;
    if (row <= zoomDepth) {
        uint32_t n = m_zoom;
        while (m_tree->node(n).depth > row)
            n = m_tree->node(n).parent;
        return n;
    }
    // Descend from the zoomed node, choosing at each level the child whose value range holds the point.
    const double value = point.x() / m_viewport.width() * static_cast<double>(m_tree->node(m_zoom).total);
    uint32_t node = m_zoom;
    double start = 0; // where `node` starts, in value from the zoomed node's left edge
    for (uint32_t depth = zoomDepth + 1; depth <= row; ++depth) {
        uint32_t hit = kNoIndex;
        for (uint32_t c : m_tree->children(node)) {
            const double end = start + static_cast<double>(m_tree->node(c).total);
            if (value < end) {
                hit = c;
                break;
            }
            start = end;
        }
        if (hit == kNoIndex || pixelWidth(hit) <= m_minPixelWidth)
            return kNoIndex;
        node = hit;
    }
    return node;
}

void FlameGraphLayout::setSearch(const QString &text)
{
    m_search = text.trimmed();
    recomputeMatches();
}

void FlameGraphLayout::recomputeMatches()
{
    m_matchedTotal = 0;
    if (m_search.isEmpty() || isEmpty()) {
        m_frameMatch.clear();
        m_matchedNames.reset();
        m_matchedFrames = 0;
        return;
    }
    // A live refresh brings a new tree but mostly the same frame table: the per-frame matches stand.
    const std::vector<QString> &names = *m_names;
    if (m_matchedNames != m_names || m_matchedSearch != m_search) {
        m_matchedNames = m_names;
        m_matchedSearch = m_search;
        m_matchedFrames = 0;
        m_frameMatch.assign(names.size(), 0);
        for (size_t f = 0; f < names.size(); ++f) {
            if (names[f].contains(m_search, Qt::CaseInsensitive)) {
                m_frameMatch[f] = 1;
                ++m_matchedFrames;
            }
        }
    }
    // A sample passes through a match when some node on its path matches; counting only the highest matching
    // node of each path counts every such sample exactly once.
    std::vector<uint8_t> covered(m_tree->size(), 0);
    for (uint32_t i = 1; i < m_tree->size(); ++i) {
        const auto &node = m_tree->node(i);
        if (covered[node.parent]) {
            covered[i] = 1;
        } else if (m_frameMatch[node.frame]) {
            covered[i] = 1;
            m_matchedTotal += node.total;
        }
    }
}

bool FlameGraphLayout::isMatch(uint32_t node) const
{
    if (m_frameMatch.empty())
        return false;
    const uint32_t frame = m_tree->node(node).frame;
    return frame != kNoIndex && m_frameMatch[frame];
}

double FlameGraphLayout::matchedShare() const
{
    return isEmpty() ? 0.0 : static_cast<double>(m_matchedTotal) / static_cast<double>(m_tree->total());
}

bool FlameGraphLayout::isSelected(uint32_t node) const
{
    return m_selectedFrame != kNoIndex && m_tree->node(node).frame == m_selectedFrame;
}

} // namespace emberline::ui
