#include "ui/flamegraph/diff_colors.h"

#include "engine/model/units.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace emberline::ui {
namespace {

const QColor kNeutral(0xd8, 0xd8, 0xd4);
const QColor kGrew(0xe8, 0x4a, 0x3c);
const QColor kShrank(0x4a, 0x7c, 0xe8);

QColor mix(const QColor &from, const QColor &to, double t)
{
    const auto channel = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
    return QColor(channel(from.red(), to.red()), channel(from.green(), to.green()), channel(from.blue(), to.blue()));
}

QString text(const char *source)
{
    return QCoreApplication::translate("DiffFlameStyle", source);
}

} // namespace

QColor diffColor(double relativeChange)
{
    if (relativeChange == 0.0 || std::isnan(relativeChange))
        return kNeutral;
    // A small change must still be visible: intensity rises faster than the change near zero, and any change at
    // all takes at least a tenth of the way.
    const double magnitude = std::min(1.0, std::fabs(relativeChange));
    const double t = 0.1 + 0.9 * std::pow(magnitude, 0.6);
    return mix(kNeutral, relativeChange > 0 ? kGrew : kShrank, t);
}

QColor diffColor(int64_t base, int64_t next)
{
    return diffColor(engine::relativeChange(base, next));
}

QColor diffNeutralColor()
{
    return kNeutral;
}

QColor diffDimmed(const QColor &color)
{
    return mix(color, QColor(0xf0, 0xf0, 0xee), 0.6);
}

DiffFlameStyle::DiffFlameStyle(std::shared_ptr<const engine::DiffTree> tree, std::string unit)
    : m_tree(std::move(tree)), m_unit(std::move(unit))
{
}

QColor DiffFlameStyle::fill(uint32_t node) const
{
    if (node >= m_tree->size())
        return kNeutral;
    const engine::DiffTree::Node &n = m_tree->node(node);
    return diffColor(n.baseTotal, n.newTotal);
}

QList<QPair<QString, QString>> DiffFlameStyle::toolTipRows(uint32_t node) const
{
    QList<QPair<QString, QString>> rows;
    if (node >= m_tree->size())
        return rows;
    const engine::DiffTree::Node &n = m_tree->node(node);
    const auto value = [this](int64_t v) { return QString::fromStdString(engine::formatValue(v, m_unit)); };
    const engine::DiffTree::Node &root = m_tree->node(0);
    rows.append({text("Base"), QStringLiteral("%1 (%2 of base)")
                                   .arg(value(n.baseTotal),
                                        QString::fromStdString(engine::formatPercent(n.baseTotal, root.baseTotal)))});
    rows.append({text("New"), QStringLiteral("%1 (%2 of new)")
                                  .arg(value(n.newTotal),
                                       QString::fromStdString(engine::formatPercent(n.newTotal, root.newTotal)))});
    rows.append({text("Change"), QString::fromStdString(engine::formatChange(n.change(), m_unit))});
    rows.append({text("Change %"), QString::fromStdString(engine::formatChangePercent(n.baseTotal, n.newTotal))});
    rows.append({text("Self (base → new)"), QStringLiteral("%1 → %2").arg(value(n.baseSelf), value(n.newSelf))});
    if (node != 0 && m_tree->isBaseOnly(node))
        rows.append({text("Path"), text("only in the base")});
    else if (node != 0 && m_tree->isNewOnly(node))
        rows.append({text("Path"), text("only in the new profile")});
    return rows;
}

} // namespace emberline::ui
