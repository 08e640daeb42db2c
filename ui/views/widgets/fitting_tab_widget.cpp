#include "ui/views/widgets/fitting_tab_widget.h"

#include <QAction>
#include <QStringList>
#include <QTabBar>
#include <QToolButton>

#include <algorithm>

namespace emberline::ui {
namespace {

// Room kept free at the bar's ends (the frame's overlap, rounding).
constexpr int kSlack = 8;

QStringList labelsOf(const QTabBar *bar, int index)
{
    const QStringList labels = bar->tabData(index).toStringList();
    return labels.size() == 2 ? labels : QStringList{bar->tabText(index), bar->tabText(index)};
}

} // namespace

// The tab bar, which knows how wide a tab would be with another label (its size hint is the style's).
class FittingTabWidget::Bar : public QTabBar {
public:
    using QTabBar::QTabBar;
    // As narrow as one tab: the tabs shrink into any width (eliding their labels) rather than widen the window; a
    // window at 2× scale was pushed wider than its screen by the sum of the tabs' least widths.
    QSize minimumSizeHint() const override
    {
        const QSize all = QTabBar::minimumSizeHint();
        return count() > 0 ? QSize(std::min(all.width(), minimumTabSizeHint(currentIndex()).width()), all.height())
                           : all;
    }
    int widthWith(int index, const QString &label) const
    {
        const QFontMetrics metrics = fontMetrics();
        return tabSizeHint(index).width() - metrics.size(Qt::TextShowMnemonic, tabText(index)).width() +
               metrics.size(Qt::TextShowMnemonic, label).width();
    }
};

FittingTabWidget::FittingTabWidget(QWidget *parent) : QTabWidget(parent)
{
    m_bar = new Bar(this);
    setTabBar(m_bar);
    setUsesScrollButtons(false);
    setElideMode(Qt::ElideRight);
}

int FittingTabWidget::addTab(QWidget *page, const QString &label, const QString &shortLabel)
{
    const int index = QTabWidget::addTab(page, label);
    m_bar->setTabData(index, QStringList{label, shortLabel});
    fitLabels();
    return index;
}

void FittingTabWidget::setCornerAction(QAction *action, const QString &objectName)
{
    m_corner = new QToolButton(this);
    m_corner->setObjectName(objectName);
    m_corner->setDefaultAction(action);
    m_corner->setAutoRaise(true);
    setCornerWidget(m_corner, Qt::TopRightCorner);
    // The action's text changes with its state ("⤢ Maximize", "⤡ Restore"): the symbol follows.
    connect(action, &QAction::changed, this, [this] {
        const QString text = cornerText(m_compact);
        if (m_corner->defaultAction()->iconText() != text)
            m_corner->defaultAction()->setIconText(m_compact ? text : QString());
    });
    fitLabels();
}

QString FittingTabWidget::cornerText(bool compact) const
{
    if (!m_corner)
        return {};
    const QString text = m_corner->defaultAction()->text();
    return compact ? text.section(QLatin1Char(' '), 0, 0) : text;
}

int FittingTabWidget::cornerWidth(bool compact) const
{
    if (!m_corner)
        return 0;
    const QFontMetrics metrics = m_corner->fontMetrics();
    return m_corner->sizeHint().width() - metrics.horizontalAdvance(m_corner->text()) +
           metrics.horizontalAdvance(cornerText(compact));
}

void FittingTabWidget::resizeEvent(QResizeEvent *event)
{
    QTabWidget::resizeEvent(event);
    fitLabels();
}

void FittingTabWidget::showEvent(QShowEvent *event)
{
    QTabWidget::showEvent(event);
    fitLabels(); // the font is the window's now
}

void FittingTabWidget::tabInserted(int index)
{
    QTabWidget::tabInserted(index);
    if (!m_bar->tabData(index).isValid())
        m_bar->setTabData(index, QStringList{m_bar->tabText(index), m_bar->tabText(index)});
    m_bar->setTabToolTip(index, labelsOf(m_bar, index).first());
    fitLabels();
}

void FittingTabWidget::tabRemoved(int index)
{
    QTabWidget::tabRemoved(index);
    fitLabels();
}

void FittingTabWidget::fitLabels()
{
    if (m_fitting || count() == 0)
        return;
    int full = 0;
    for (int i = 0; i < count(); ++i)
        full += m_bar->widthWith(i, labelsOf(m_bar, i).first());
    showLabels(full + cornerWidth(false) + kSlack > width());
}

void FittingTabWidget::showLabels(bool compact)
{
    m_fitting = true;
    m_compact = compact;
    for (int i = 0; i < count(); ++i) {
        const QStringList labels = labelsOf(m_bar, i);
        const QString &label = compact ? labels.last() : labels.first();
        if (m_bar->tabText(i) != label)
            m_bar->setTabText(i, label);
    }
    if (m_corner) {
        QAction *action = m_corner->defaultAction();
        const QString text = compact ? cornerText(true) : QString();
        if (action->iconText() != (compact ? text : action->text().remove(QLatin1Char('&'))))
            action->setIconText(text);
    }
    m_fitting = false;
}

} // namespace emberline::ui
