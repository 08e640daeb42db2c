#include "ui/views/widgets/loading_page.h"

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace emberline::ui {

LoadingPage::LoadingPage(const QString &text, QWidget *parent) : QWidget(parent)
{
    auto *label = new QLabel(text, this);
    label->setObjectName(QStringLiteral("loadingLabel"));
    label->setAlignment(Qt::AlignCenter);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("loadProgress"));
    m_progress->setMaximumWidth(420);
    setBusy();
    auto *cancel = new QPushButton(tr("Cancel"), this);
    cancel->setObjectName(QStringLiteral("loadCancelButton"));
    connect(cancel, &QPushButton::clicked, this, &LoadingPage::cancelClicked);

    auto *layout = new QVBoxLayout(this);
    layout->addStretch();
    layout->addWidget(label);
    layout->addWidget(m_progress, 0, Qt::AlignHCenter);
    layout->addWidget(cancel, 0, Qt::AlignHCenter);
    layout->addStretch();
}

void LoadingPage::setBusy()
{
    m_progress->setRange(0, 0);
}

void LoadingPage::setFraction(double fraction)
{
    m_progress->setRange(0, 100);
    m_progress->setValue(static_cast<int>(fraction * 100));
}

} // namespace emberline::ui
