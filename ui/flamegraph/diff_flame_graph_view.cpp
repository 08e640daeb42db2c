#include "ui/flamegraph/diff_flame_graph_view.h"

#include "ui/flamegraph/diff_colors.h"
#include "ui/flamegraph/diff_legend.h"
#include "ui/flamegraph/flame_graph_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace emberline::ui {

DiffFlameGraphView::DiffFlameGraphView(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void DiffFlameGraphView::setupUi()
{
    setObjectName(QStringLiteral("diffFlameGraphView"));
    m_widths = new QComboBox(this);
    m_widths->setObjectName(QStringLiteral("diffWidthsCombo"));
    m_widths->addItem(tr("Widths from new"));
    m_widths->addItem(tr("Widths from base"));
    m_widths->setToolTip(tr("Which profile's values give the frames their widths"));
    m_baseOnly = new QCheckBox(tr("Show frames only in base"), this);
    m_baseOnly->setObjectName(QStringLiteral("diffBaseOnlyToggle"));
    m_baseOnly->setToolTip(tr("Also draw the call paths that exist only in the base, at their base width"));
    m_legend = new DiffLegend(this);
    m_flame = new FlameGraphView(this);

    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(m_widths);
    bar->addWidget(m_baseOnly);
    bar->addStretch();
    bar->addWidget(m_legend);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_flame, 1);
}

void DiffFlameGraphView::connectSignals()
{
    connect(m_widths, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_baseOnly->setEnabled(index == 0); // the base's widths draw every base path already
        showTree(true);
        Q_EMIT widthsChanged(widths());
    });
    connect(m_baseOnly, &QCheckBox::toggled, this, [this] {
        showTree(true);
        Q_EMIT widthsChanged(widths());
    });
}

void DiffFlameGraphView::setDiff(std::shared_ptr<const engine::DiffTree> tree, const std::string &unit, bool keepZoom,
                                 std::shared_ptr<const std::vector<QString>> names)
{
    m_tree = std::move(tree);
    m_unit = unit;
    m_names = std::move(names);
    showTree(keepZoom);
}

void DiffFlameGraphView::setWidthsFromBase(bool fromBase)
{
    m_widths->setCurrentIndex(fromBase ? 1 : 0);
}

void DiffFlameGraphView::setShowBaseOnly(bool show)
{
    m_baseOnly->setChecked(show);
}

engine::DiffTree::Widths DiffFlameGraphView::widths() const
{
    if (m_widths->currentIndex() == 1)
        return engine::DiffTree::Widths::Base;
    return m_baseOnly->isChecked() ? engine::DiffTree::Widths::NewWithBaseOnly : engine::DiffTree::Widths::New;
}

void DiffFlameGraphView::showTree(bool keepZoom)
{
    m_prepare.cancel();
    if (!m_tree) {
        m_flame->setNodeStyle(nullptr);
        m_flame->setTree(nullptr, nullptr, m_unit, false);
        return;
    }
    const engine::DiffTree::Widths chosen = widths();
    if (m_tree->hasWidths(chosen)) {
        drawTree(m_tree->widths(chosen), keepZoom);
        return;
    }
    // Made off the GUI thread (a comparison of millions of nodes takes hundreds of milliseconds); the picture
    // stays as it is until then. A newer tree or choice drops this one.
    m_prepare.run([tree = m_tree, chosen](const std::atomic<bool> *) { return tree->widths(chosen); },
                  [this, keepZoom](const std::shared_ptr<const engine::CallTree> &made) { drawTree(made, keepZoom); });
}

void DiffFlameGraphView::drawTree(const std::shared_ptr<const engine::CallTree> &tree, bool keepZoom)
{
    // The style first: the tree's first paint reads it.
    m_flame->setNodeStyle(std::make_shared<const DiffFlameStyle>(m_tree, m_unit));
    m_flame->setTree(tree, m_tree->frames(), m_unit, keepZoom, m_names);
    Q_EMIT widthsShown();
}

} // namespace emberline::ui
