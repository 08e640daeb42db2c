#pragma once

#include "engine/compare/diff_tree.h"
#include "ui/flamegraph/flame_node_style.h"

#include <QColor>

#include <cstdint>
#include <memory>
#include <string>

namespace emberline::ui {

// The colours of a differential flame graph: red where a path grew, blue where it shrank, the intensity following
// the relative change (engine::relativeChange, in [-1, 1]), neutral grey where it is unchanged. The legend draws
// the same function.
QColor diffColor(double relativeChange);
QColor diffColor(int64_t base, int64_t next);
QColor diffNeutralColor();
// A colour faded towards grey, for frames outside a search or beneath the zoomed frame.
QColor diffDimmed(const QColor &color);

// Colours and tooltips of a differential tree's nodes: colour by the change of the node's total, tooltip with
// base, new, change and change %, and whether the path exists on one side only.
//
// Thread: GUI thread; the tree is immutable and shared.
class DiffFlameStyle : public FlameNodeStyle {
public:
    DiffFlameStyle(std::shared_ptr<const engine::DiffTree> tree, std::string unit);
    QColor fill(uint32_t node) const override;
    QList<QPair<QString, QString>> toolTipRows(uint32_t node) const override;
    const engine::DiffTree &tree() const { return *m_tree; }

private:
    std::shared_ptr<const engine::DiffTree> m_tree;
    std::string m_unit;
};

} // namespace emberline::ui
