#include "ui/flamegraph/diff_legend.h"

#include "ui/flamegraph/diff_colors.h"

#include <QPainter>

#include <cmath>

namespace emberline::ui {
namespace {

constexpr int kStripWidth = 120;
constexpr int kSteps = 24;
constexpr int kGap = 6;

} // namespace

DiffLegend::DiffLegend(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("diffLegend"));
    setToolTip(tr("Colour: red where a call path grew, blue where it shrank, stronger with a larger relative "
                  "change; grey where it is unchanged"));
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

QSize DiffLegend::sizeHint() const
{
    const QFontMetrics metrics(font());
    const int labels = metrics.horizontalAdvance(tr("shrank")) + metrics.horizontalAdvance(tr("grew"));
    return {labels + kStripWidth + 4 * kGap, metrics.height() + 6};
}

void DiffLegend::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    const QFontMetrics metrics(font());
    const QString shrank = tr("shrank");
    const QString grew = tr("grew");
    const int h = height();
    const int stripLeft = metrics.horizontalAdvance(shrank) + 2 * kGap;
    const int stripTop = 3;
    const int stripHeight = h - 6;
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRect(0, 0, stripLeft - kGap, h), Qt::AlignRight | Qt::AlignVCenter, shrank);
    // The strip's middle step is exactly unchanged; the ends are full decrease and full increase.
    for (int i = 0; i < kSteps; ++i) {
        const double change = -1.0 + 2.0 * i / (kSteps - 1);
        const int x0 = stripLeft + kStripWidth * i / kSteps;
        const int x1 = stripLeft + kStripWidth * (i + 1) / kSteps;
        painter.fillRect(QRect(x0, stripTop, x1 - x0, stripHeight), diffColor(std::abs(change) < 0.05 ? 0.0 : change));
    }
    painter.drawText(QRect(stripLeft + kStripWidth + kGap, 0, width(), h), Qt::AlignLeft | Qt::AlignVCenter, grew);
}

} // namespace emberline::ui
