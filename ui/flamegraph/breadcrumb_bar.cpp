#include "ui/flamegraph/breadcrumb_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QToolButton>

namespace emberline::ui {
namespace {

constexpr size_t kShownTail = 5; // frames shown before the zoomed one, besides the root
constexpr int kMaxCrumbChars = 40;

QString shortName(const QString &name)
{
    return name.size() <= kMaxCrumbChars ? name : name.left(kMaxCrumbChars - 1) + QChar(0x2026);
}

} // namespace

BreadcrumbBar::BreadcrumbBar(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("flameBreadcrumb"));
    m_layout = new QHBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->setSpacing(2);
    rebuild();
}

void BreadcrumbBar::setPath(std::vector<Crumb> path)
{
    if (path == m_path && m_layout->count() > 0)
        return; // a live refresh at the same zoom: the buttons stand (rebuilding them lays the window out again)
    m_path = std::move(path);
    rebuild();
}

void BreadcrumbBar::rebuild()
{
    while (QLayoutItem *item = m_layout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    if (m_path.empty()) {
        m_layout->addStretch();
        return;
    }
    const size_t last = m_path.size() - 1;
    const size_t tailStart = last > kShownTail ? last - kShownTail : 1;
    addCrumbButton(m_path[0], 0, last == 0);
    if (last == 0) {
        auto *hint = new QLabel(tr("Click a frame to zoom into it; Esc zooms out."), this);
        hint->setForegroundRole(QPalette::PlaceholderText);
        m_layout->addWidget(hint);
    }
    if (tailStart > 1) {
        addSeparator();
        auto *more = new QToolButton(this);
        more->setObjectName(QStringLiteral("breadcrumbMore"));
        more->setText(QString(QChar(0x2026)));
        more->setAutoRaise(true);
        more->setPopupMode(QToolButton::InstantPopup);
        auto *menu = new QMenu(more);
        for (size_t i = 1; i < tailStart; ++i) {
            const uint32_t node = m_path[i].node;
            menu->addAction(shortName(m_path[i].name), this, [this, node] { Q_EMIT nodeActivated(node); });
        }
        more->setMenu(menu);
        m_layout->addWidget(more);
    }
    for (size_t i = tailStart; i <= last; ++i) {
        addSeparator();
        addCrumbButton(m_path[i], static_cast<int>(i), i == last);
    }
    m_layout->addStretch();
}

void BreadcrumbBar::addCrumbButton(const Crumb &crumb, int index, bool current)
{
    auto *button = new QToolButton(this);
    button->setObjectName(QStringLiteral("breadcrumb_%1").arg(index));
    button->setText(shortName(crumb.name));
    button->setToolTip(crumb.name);
    button->setAutoRaise(true);
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);
    if (current) {
        QFont bold = button->font();
        bold.setBold(true);
        button->setFont(bold);
        button->setEnabled(false);
    }
    const uint32_t node = crumb.node;
    connect(button, &QToolButton::clicked, this, [this, node] { Q_EMIT nodeActivated(node); });
    m_layout->addWidget(button);
}

void BreadcrumbBar::addSeparator()
{
    auto *label = new QLabel(QStringLiteral("›"), this);
    label->setForegroundRole(QPalette::PlaceholderText);
    m_layout->addWidget(label);
}

} // namespace emberline::ui
