#include "ui/flamegraph/flame_graph_svg.h"

#include "ui/common/value_text.h"

#include <cmath>

namespace emberline::ui {
namespace {

constexpr double kTitleHeight = 28;
constexpr double kFontSize = 12;
constexpr double kCharWidth = 7; // an estimate of the average advance at kFontSize, for eliding
constexpr double kPadding = 3;

QString escaped(const QString &text)
{
    return text.toHtmlEscaped();
}

QString number(double value)
{
    return QString::number(value, 'f', 1);
}

QString label(const QString &name, double width)
{
    const int fits = static_cast<int>(std::floor((width - 2 * kPadding) / kCharWidth));
    if (fits < 3)
        return {};
    return name.size() <= fits ? name : name.left(fits - 2) + QStringLiteral("..");
}

} // namespace

QByteArray flameGraphSvg(const FlameGraphLayout &source, const std::function<QColor(const FlameRect &)> &fill,
                         const QString &title, const std::string &unit)
{
    FlameGraphLayout layout = source; // whole height, from the root row
    const double width = source.viewportSize().width();
    layout.setViewportSize(QSizeF(width, std::max(layout.contentHeight(), source.rowHeight())));
    layout.setScrollOffset(0);
    const double height = layout.viewportSize().height() + kTitleHeight;
    const int64_t total = layout.tree() ? layout.tree()->total() : 0;

    QString svg;
    svg += QStringLiteral("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    svg += QStringLiteral("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%1\" height=\"%2\" viewBox=\"0 0 %1 %2\" "
                          "font-family=\"sans-serif\" font-size=\"%3\">\n")
               .arg(number(width), number(height))
               .arg(kFontSize);
    svg += QStringLiteral("<rect x=\"0\" y=\"0\" width=\"%1\" height=\"%2\" fill=\"#ffffff\"/>\n")
               .arg(number(width), number(height));
    svg += QStringLiteral("<text x=\"%1\" y=\"18\" text-anchor=\"middle\" font-size=\"15\">%2</text>\n")
               .arg(number(width / 2), escaped(title));
    for (const FlameRect &rect : layout.visibleRects()) {
        const QRectF box = rect.pixels.translated(0, kTitleHeight);
        const QString &name = layout.nodeName(rect.node);
        const int64_t value = layout.tree()->node(rect.node).total;
        const double share = total > 0 ? 100.0 * static_cast<double>(value) / static_cast<double>(total) : 0.0;
        svg += QStringLiteral("<g><title>%1 (%2, %3%)</title>")
                   .arg(escaped(name), escaped(valueText(value, unit)), QString::number(share, 'f', 2));
        svg += QStringLiteral("<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" fill=\"%5\" stroke=\"#ffffff\" "
                              "stroke-width=\"0.5\"/>")
                   .arg(number(box.x()), number(box.y()), number(box.width()), number(box.height()), fill(rect).name());
        const QString text = label(name, box.width());
        if (!text.isEmpty())
            svg += QStringLiteral("<text x=\"%1\" y=\"%2\">%3</text>")
                       .arg(number(box.x() + kPadding), number(box.y() + box.height() - 5), escaped(text));
        svg += QStringLiteral("</g>\n");
    }
    svg += QStringLiteral("</svg>\n");
    return svg.toUtf8();
}

} // namespace emberline::ui
