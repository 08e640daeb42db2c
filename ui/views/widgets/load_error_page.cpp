#include "ui/views/widgets/load_error_page.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace emberline::ui {

LoadErrorPage::LoadErrorPage(const QString &title, QWidget *parent) : QWidget(parent)
{
    auto *titleLabel = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()), this);
    titleLabel->setAlignment(Qt::AlignCenter);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("errorLabel"));
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setMaximumWidth(720);
    auto *retry = new QPushButton(tr("Retry"), this);
    retry->setObjectName(QStringLiteral("retryButton"));
    connect(retry, &QPushButton::clicked, this, &LoadErrorPage::retryClicked);
    auto *close = new QPushButton(tr("Close"), this);
    close->setObjectName(QStringLiteral("closeTabButton"));
    connect(close, &QPushButton::clicked, this, &LoadErrorPage::closeClicked);

    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(retry);
    buttons->addWidget(close);
    buttons->addStretch();
    auto *layout = new QVBoxLayout(this);
    layout->addStretch();
    layout->addWidget(titleLabel);
    layout->addWidget(m_message, 0, Qt::AlignHCenter);
    layout->addLayout(buttons);
    layout->addStretch();
}

void LoadErrorPage::setMessage(const QString &message)
{
    m_message->setText(message);
}

QString LoadErrorPage::message() const
{
    return m_message->text();
}

} // namespace emberline::ui
