#include "ui/views/widgets/start_page.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace emberline::ui {

StartPage::StartPage(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void StartPage::setupUi()
{
    setObjectName(QStringLiteral("startPage"));
    auto *title = new QLabel(tr("Emberline"), this);
    QFont titleFont = title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 2.2);
    titleFont.setBold(true);
    title->setFont(titleFont);
    auto *subtitle = new QLabel(tr("Profile a native program live, or open a pprof profile (Go, Node, Datadog, "
                                   "Emberline) to explore it as a flame graph and a table of top functions."),
                                this);
    subtitle->setWordWrap(true);

    m_open = new QPushButton(tr("Open Profile…"), this);
    m_open->setObjectName(QStringLiteral("startOpenButton"));
    m_open->setMinimumHeight(36);

    m_profile = new QPushButton(tr("Profile a Program…"), this);
    m_profile->setObjectName(QStringLiteral("startProfileButton"));
    m_profile->setToolTip(tr("Launch a program or attach to a running one and watch its flame graph live (Ctrl+R)"));
    m_profile->setMinimumHeight(36);
    m_demo = new QPushButton(tr("Try it on a demo program"), this);
    m_demo->setObjectName(QStringLiteral("startDemoButton"));
    m_demo->setToolTip(tr("Profile the small demo program that comes with Emberline: a live flame graph within "
                          "seconds"));
    m_demo->setMinimumHeight(36);

    m_recentTitle = new QLabel(tr("<b>Recent files</b>"), this);
    m_recent = new QListWidget(this);
    m_recent->setObjectName(QStringLiteral("recentFilesList"));
    m_recent->setMaximumHeight(240);
    m_recent->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_recent->setTextElideMode(Qt::ElideMiddle);

    auto *hint = new QLabel(tr("Tip: drop .pprof files anywhere on this window to open them."), this);
    hint->setObjectName(QStringLiteral("dropHint"));
    hint->setForegroundRole(QPalette::PlaceholderText);

    auto *column = new QVBoxLayout;
    column->addWidget(title);
    column->addWidget(subtitle);
    column->addSpacing(16);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_profile);
    buttons->addWidget(m_demo);
    buttons->addWidget(m_open);
    buttons->addStretch();
    column->addLayout(buttons);
    column->addSpacing(16);
    column->addWidget(m_recentTitle);
    column->addWidget(m_recent);
    column->addSpacing(8);
    column->addWidget(hint);

    auto *frame = new QWidget(this);
    frame->setMinimumWidth(600);
    frame->setMaximumWidth(760);
    frame->setLayout(column);
    auto *outer = new QVBoxLayout(this);
    outer->addStretch(1);
    outer->addWidget(frame, 0, Qt::AlignHCenter);
    outer->addStretch(2);
    setRecentFiles({});
}

void StartPage::connectSignals()
{
    connect(m_open, &QPushButton::clicked, this, &StartPage::openRequested);
    connect(m_profile, &QPushButton::clicked, this, &StartPage::profileRequested);
    connect(m_demo, &QPushButton::clicked, this, &StartPage::demoRequested);
    // A single click opens, like a link; Enter (activation) does too.
    const auto open = [this](QListWidgetItem *item) {
        Q_EMIT recentFileActivated(item->data(Qt::UserRole).toString());
    };
    connect(m_recent, &QListWidget::itemClicked, this, open);
    connect(m_recent, &QListWidget::itemActivated, this, open);
}

void StartPage::setRecentFiles(const QStringList &files)
{
    m_recent->clear();
    for (const QString &path : files) {
        auto *item = new QListWidgetItem(QStringLiteral("%1    —    %2").arg(QFileInfo(path).fileName(), path));
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
        m_recent->addItem(item);
    }
    m_recentTitle->setVisible(!files.isEmpty());
    m_recent->setVisible(!files.isEmpty());
}

} // namespace emberline::ui
