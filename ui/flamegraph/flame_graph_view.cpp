#include "ui/flamegraph/flame_graph_view.h"

#include "engine/model/python_frame.h"
#include "engine/model/units.h"
#include "ui/common/frame_source.h"
#include "ui/common/short_name.h"
#include "ui/flamegraph/diff_colors.h"
#include "ui/flamegraph/flame_graph_svg.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QImage>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QSettings>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace emberline::ui {
namespace {

constexpr double kTextPadding = 4.0;

QString formatValue(int64_t value, const std::string &unit)
{
    return QString::fromStdString(engine::formatValue(value, unit));
}

QString formatPercent(int64_t part, int64_t total)
{
    return QString::fromStdString(engine::formatPercent(part, total));
}

} // namespace

FlameGraphView::FlameGraphView(QWidget *parent) : QAbstractScrollArea(parent)
{
    setupUi();
    connectSignals();
}

void FlameGraphView::setupUi()
{
    setObjectName(QStringLiteral("flameGraph"));
    setFocusPolicy(Qt::StrongFocus);
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    verticalScrollBar()->setObjectName(QStringLiteral("flameGraphScrollBar"));
    viewport()->setMouseTracking(true);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(200, 60);
    // View > Short Function Names, as the user last left it.
    m_shortNames = QSettings().value(QStringLiteral("view/shortNames"), true).toBool();
    updateFontMetrics();
}

void FlameGraphView::connectSignals()
{
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, &FlameGraphView::onScrollBarMoved);
}

std::vector<uint32_t> FlameGraphView::translateFrames(std::span<const uint32_t> ids, const engine::FrameTable &from,
                                                      const engine::FrameTable &to)
{
    // A live session's next profile has its own frame table: the zoom path is carried over by frame name (a
    // Python function to a Python function, when native code has the same name).
    std::vector<uint32_t> out;
    for (uint32_t id : ids) {
        if (id >= from.size())
            break;
        const bool python = engine::isPythonFrame(from.frame(id));
        const std::vector<uint32_t> found = to.findByName(from.frame(id).name);
        const auto same = std::find_if(found.begin(), found.end(),
                                       [&](uint32_t f) { return engine::isPythonFrame(to.frame(f)) == python; });
        if (same == found.end())
            break;
        out.push_back(*same);
    }
    return out;
}

void FlameGraphView::setTree(std::shared_ptr<const engine::CallTree> tree,
                             std::shared_ptr<const engine::FrameTable> frames, const std::string &unit, bool keepZoom,
                             std::shared_ptr<const std::vector<QString>> names)
{
    std::vector<uint32_t> zoomPath;
    if (keepZoom && m_layout.tree())
        zoomPath = m_layout.tree()->pathTo(m_layout.zoomNode());
    const bool newFrames = frames.get() != m_layout.frames();
    if (newFrames && !zoomPath.empty() && m_layout.frames() && frames)
        zoomPath = translateFrames(zoomPath, *m_layout.frames(), *frames);
    const double scroll = m_layout.scrollOffset();
    m_unit = unit;
    m_layout.setTree(std::move(tree), std::move(frames), std::move(names));
    if (newFrames) {
        m_palette.reset(m_layout.frames());
        m_textWidth.assign(m_layout.frames() ? m_layout.frames()->size() : 0, -1.0f);
        m_shortName.assign(m_textWidth.size(), QString());
    }
    if (!zoomPath.empty())
        m_layout.setZoomNode(m_layout.findByFramePath(zoomPath));
    if (keepZoom)
        m_layout.setScrollOffset(scroll);
    m_hovered = engine::kNoIndex;
    m_pressed = engine::kNoIndex;
    updateScrollBar();
    viewport()->update();
    emitSearchResult();
    Q_EMIT zoomChanged(m_layout.zoomNode());
}

void FlameGraphView::setNodeStyle(std::shared_ptr<const FlameNodeStyle> style)
{
    m_style = std::move(style);
    viewport()->update();
}

void FlameGraphView::setOrientation(FlameGraphLayout::Orientation orientation)
{
    if (orientation == m_layout.orientation())
        return;
    m_layout.setOrientation(orientation);
    updateScrollBar();
    viewport()->update();
}

void FlameGraphView::setSearch(const QString &text)
{
    m_layout.setSearch(text);
    viewport()->update();
    emitSearchResult();
}

void FlameGraphView::setSelectedFrame(uint32_t frame)
{
    m_layout.setSelectedFrame(frame);
    viewport()->update();
}

void FlameGraphView::zoomTo(uint32_t node)
{
    if (m_layout.isEmpty())
        return;
    const uint32_t before = m_layout.zoomNode();
    m_layout.setZoomNode(node);
    m_layout.setScrollOffset(0); // the zoomed frame and its callees start at the root edge
    updateScrollBar();
    viewport()->update();
    if (m_layout.zoomNode() != before)
        Q_EMIT zoomChanged(m_layout.zoomNode());
}

void FlameGraphView::emitSearchResult()
{
    Q_EMIT searchResultChanged(m_layout.matchedTotal(), m_layout.matchedShare(), m_layout.matchedFrameCount());
}

QString FlameGraphView::toolTipFor(uint32_t node) const
{
    const engine::CallTree *tree = m_layout.tree();
    if (!tree || node >= tree->size())
        return {};
    const auto &n = tree->node(node);
    QString text = QStringLiteral("<b>%1</b><table>").arg(m_layout.nodeName(node).toHtmlEscaped());
    const auto row = [&text](const QString &label, const QString &value) {
        text += QStringLiteral("<tr><td style=\"white-space:nowrap\">%1</td>"
                               "<td style=\"white-space:nowrap\">&nbsp;%2</td></tr>")
                    .arg(label, value.toHtmlEscaped());
    };
    if (m_style) {
        for (const auto &[label, value] : m_style->toolTipRows(node))
            row(label, value);
    } else {
        row(tr("Total"),
            QStringLiteral("%1 (%2 of all)").arg(formatValue(n.total, m_unit), formatPercent(n.total, tree->total())));
        row(tr("Self"),
            QStringLiteral("%1 (%2 of all)").arg(formatValue(n.self, m_unit), formatPercent(n.self, tree->total())));
    }
    if (n.frame != engine::kNoIndex) {
        for (const auto &[label, value] : frameSourceRows(m_layout.frames()->frame(n.frame)))
            row(label, value);
    }
    text += QStringLiteral("</table>");
    return text;
}

void FlameGraphView::updateFontMetrics()
{
    m_metrics = QFontMetricsF(font());
    m_minTextWidth = m_metrics.horizontalAdvance(QStringLiteral("Wi…"));
    m_ellipsisWidth = m_metrics.horizontalAdvance(QChar(0x2026));
    const double rowHeight = std::ceil(m_metrics.height() + 6);
    m_baseline = (rowHeight - 1 - m_metrics.height()) / 2 + m_metrics.ascent();
    m_layout.setRowHeight(rowHeight);
    std::fill(m_textWidth.begin(), m_textWidth.end(), -1.0f);
    updateScrollBar();
}

void FlameGraphView::updateScrollBar()
{
    m_updatingScrollBar = true;
    const int max = static_cast<int>(std::ceil(m_layout.maxScrollOffset()));
    QScrollBar *bar = verticalScrollBar();
    bar->setRange(0, max);
    bar->setPageStep(viewport()->height());
    bar->setSingleStep(static_cast<int>(m_layout.rowHeight()));
    // With the root at the bottom, the bar's bottom end is the root: scrolling up reveals deeper frames.
    const int offset = static_cast<int>(std::lround(m_layout.scrollOffset()));
    bar->setValue(m_layout.orientation() == FlameGraphLayout::Orientation::RootAtTop ? offset : max - offset);
    m_updatingScrollBar = false;
}

void FlameGraphView::onScrollBarMoved(int value)
{
    if (m_updatingScrollBar)
        return;
    const int max = verticalScrollBar()->maximum();
    m_layout.setScrollOffset(m_layout.orientation() == FlameGraphLayout::Orientation::RootAtTop ? value : max - value);
    viewport()->update();
}

void FlameGraphView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    m_layout.setViewportSize(viewport()->size());
    updateScrollBar();
}

void FlameGraphView::changeEvent(QEvent *event)
{
    QAbstractScrollArea::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        updateFontMetrics();
}

void FlameGraphView::paintEvent(QPaintEvent *)
{
    QPainter painter(viewport());
    painter.fillRect(viewport()->rect(), palette().color(QPalette::Base));
    if (m_layout.isEmpty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(viewport()->rect(), Qt::AlignCenter, tr("No samples to show"));
        return;
    }
    painter.setFont(font());
    m_layout.visibleRects(m_rects);
    for (const FlameRect &rect : m_rects)
        paintRect(painter, rect);
}

void FlameGraphView::paintRect(QPainter &painter, const FlameRect &rect)
{
    // Integer edges from the fractional ones: neighbours share an edge exactly, so no pixel is painted twice.
    const int left = static_cast<int>(std::floor(rect.pixels.left()));
    const int right = static_cast<int>(std::floor(rect.pixels.right()));
    const int top = static_cast<int>(std::lround(rect.pixels.top()));
    const int width = std::max(1, right - left - (right - left >= 3 ? 1 : 0));
    const QRect box(left, top, width, static_cast<int>(m_layout.rowHeight()) - 1);

    painter.fillRect(box, fillFor(rect));

    if (m_layout.isSelected(rect.node) && box.width() >= 3) {
        painter.setPen(QPen(QColor(0x10, 0x30, 0x80), 2));
        painter.drawRect(box.adjusted(1, 1, -1, -1));
    } else if (rect.node == m_hovered && box.width() >= 2) {
        painter.setPen(QColor(0x20, 0x20, 0x20));
        painter.drawRect(box.adjusted(0, 0, -1, -1));
    }
    if (box.width() - 2 * kTextPadding >= m_minTextWidth)
        paintLabel(painter, box, rect.node);
}

QByteArray FlameGraphView::toSvg(const QString &title) const
{
    return flameGraphSvg(
        m_layout, [this](const FlameRect &rect) { return fillFor(rect); }, title, m_unit);
}

QImage FlameGraphView::toImage() const
{
    return viewport()->grab().toImage();
}

QColor FlameGraphView::fillFor(const FlameRect &rect) const
{
    const engine::CallTree &tree = *m_layout.tree();
    const auto &node = tree.node(rect.node);
    if (!m_style && node.frame == engine::kNoIndex)
        return FramePalette::rootColor();
    const bool dimmed =
        m_layout.hasSearch() ? !m_layout.isMatch(rect.node) : node.depth < tree.node(m_layout.zoomNode()).depth;
    if (m_layout.hasSearch() && !dimmed)
        return FramePalette::matchColor();
    if (m_style) {
        const QColor fill = m_style->fill(rect.node);
        return dimmed ? diffDimmed(fill) : fill;
    }
    return dimmed ? m_palette.dimmed(node.frame) : m_palette.normal(node.frame);
}

void FlameGraphView::setShortNames(bool shortNames)
{
    if (shortNames == m_shortNames)
        return;
    m_shortNames = shortNames;
    std::fill(m_textWidth.begin(), m_textWidth.end(), -1.0f);
    viewport()->update();
}

QString FlameGraphView::labelFor(uint32_t node) const
{
    const uint32_t frame = m_layout.tree()->node(node).frame;
    if (!m_shortNames || frame == engine::kNoIndex || frame >= m_shortName.size())
        return m_layout.nodeName(node);
    // Shortened when first drawn: a paint shows a few hundred frames, a live profile may hold 100,000.
    QString &cached = m_shortName[frame];
    if (cached.isNull())
        cached = shortFrameName(m_layout.frames()->frame(frame), m_layout.nodeName(node));
    return cached;
}

int FlameGraphView::contentHeightHint() const
{
    return static_cast<int>(std::ceil(m_layout.contentHeight())) + 2 * frameWidth();
}

void FlameGraphView::paintLabel(QPainter &painter, const QRect &box, uint32_t node)
{
    const QString name = labelFor(node);
    const uint32_t frame = m_layout.tree()->node(node).frame;
    const double available = box.width() - 2 * kTextPadding;
    // Measuring text is the expensive part of a paint: a frame's full width is measured once, and eliding
    // happens only for the rectangles too narrow for the whole name.
    double textWidth = 0;
    if (frame == engine::kNoIndex) {
        textWidth = m_metrics.horizontalAdvance(name);
    } else {
        float &cached = m_textWidth[frame];
        if (cached < 0)
            cached = static_cast<float>(m_metrics.horizontalAdvance(name));
        textWidth = cached;
    }
    painter.setPen(QColor(0x1a, 0x1a, 0x1a));
    const QPointF origin(box.left() + kTextPadding, box.top() + m_baseline);
    if (textWidth <= available) {
        painter.drawText(origin, name);
        return;
    }
    const QString elided = m_metrics.elidedText(name, Qt::ElideRight, available);
    if (elided.size() > 1)
        painter.drawText(origin, elided);
}

void FlameGraphView::mouseMoveEvent(QMouseEvent *event)
{
    const uint32_t node = m_layout.nodeAt(event->position());
    if (node != m_hovered) {
        m_hovered = node;
        viewport()->setCursor(node == engine::kNoIndex ? Qt::ArrowCursor : Qt::PointingHandCursor);
        viewport()->update();
    }
    QAbstractScrollArea::mouseMoveEvent(event);
}

void FlameGraphView::mousePressEvent(QMouseEvent *event)
{
    m_pressed = event->button() == Qt::LeftButton ? m_layout.nodeAt(event->position()) : engine::kNoIndex;
    QAbstractScrollArea::mousePressEvent(event);
}

void FlameGraphView::contextMenuEvent(QContextMenuEvent *event)
{
    const uint32_t node = m_layout.nodeAt(event->pos());
    const uint32_t frame = node == engine::kNoIndex ? engine::kNoIndex : m_layout.tree()->node(node).frame;
    if (frame != engine::kNoIndex)
        Q_EMIT frameContextMenuRequested(frame, event->globalPos());
}

void FlameGraphView::mouseReleaseEvent(QMouseEvent *event)
{
    const uint32_t node = m_layout.nodeAt(event->position());
    if (event->button() == Qt::LeftButton && node != engine::kNoIndex && node == m_pressed) {
        zoomTo(node);
        const uint32_t frame = m_layout.tree()->node(node).frame;
        if (frame != engine::kNoIndex)
            Q_EMIT frameClicked(frame);
    }
    m_pressed = engine::kNoIndex;
    QAbstractScrollArea::mouseReleaseEvent(event);
}

void FlameGraphView::leaveEvent(QEvent *event)
{
    if (m_hovered != engine::kNoIndex) {
        m_hovered = engine::kNoIndex;
        viewport()->update();
    }
    QAbstractScrollArea::leaveEvent(event);
}

void FlameGraphView::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Escape && m_layout.zoomNode() != 0) {
        resetZoom();
        return;
    }
    if (event->key() == Qt::Key_Backspace && m_layout.zoomNode() != 0) {
        zoomTo(m_layout.tree()->node(m_layout.zoomNode()).parent);
        return;
    }
    QAbstractScrollArea::keyPressEvent(event);
}

bool FlameGraphView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const uint32_t node = m_layout.nodeAt(help->pos());
        if (node == engine::kNoIndex) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), toolTipFor(node), viewport(),
                               m_layout.nodeRect(node).toAlignedRect());
        }
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

} // namespace emberline::ui
