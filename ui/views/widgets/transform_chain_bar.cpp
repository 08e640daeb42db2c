#include "ui/views/widgets/transform_chain_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace emberline::ui {

TransformChainBar::TransformChainBar(QWidget *parent) : QWidget(parent)
{
    setupUi();
}

void TransformChainBar::setupUi()
{
    setObjectName(QStringLiteral("transformChain"));
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(new QLabel(tr("Transforms:"), this));
    m_chipLayout = new QHBoxLayout;
    m_chipLayout->setSpacing(4);
    layout->addLayout(m_chipLayout);
    layout->addStretch();
    m_clear = new QToolButton(this);
    m_clear->setObjectName(QStringLiteral("clearTransformsButton"));
    m_clear->setText(tr("Clear"));
    m_clear->setToolTip(tr("Remove every transform"));
    layout->addWidget(m_clear);
    connect(m_clear, &QToolButton::clicked, this, &TransformChainBar::clearRequested);
    setVisible(false);
}

void TransformChainBar::setChain(const std::vector<engine::Transform> &chain)
{
    for (QToolButton *chip : m_chips)
        delete chip;
    m_chips.clear();
    for (size_t i = 0; i < chain.size(); ++i) {
        auto *chip = new QToolButton(this);
        chip->setObjectName(QStringLiteral("transformChip%1").arg(i));
        chip->setText(QString::fromStdString(chain[i].describe()) + QStringLiteral("  ×"));
        chip->setToolTip(tr("Remove this transform"));
        chip->setStyleSheet(
            QStringLiteral("QToolButton { background: #e8eefc; color: #10243a; border: 1px solid #9fb3e6; "
                           "border-radius: 9px; padding: 1px 8px; }"));
        const int index = static_cast<int>(i);
        connect(chip, &QToolButton::clicked, this, [this, index] { Q_EMIT removeRequested(index); });
        m_chipLayout->addWidget(chip);
        m_chips.push_back(chip);
    }
    setVisible(!chain.empty());
}

} // namespace emberline::ui
