#include "ui/views/start_page.h"

#include <QFileInfo>
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
    auto *subtitle = new QLabel(tr("Open a pprof profile (Go, Node, Datadog, Emberline) to explore it as a flame "
                                   "graph and a table of top functions."),
                                this);
    subtitle->setWordWrap(true);

    m_open = new QPushButton(tr("Open Profile…"), this);
    m_open->setObjectName(QStringLiteral("startOpenButton"));
    m_open->setDefault(true);
    m_open->setMinimumHeight(36);

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
    column->addWidget(m_open, 0, Qt::AlignLeft);
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
    // A single click opens, like a link; Enter (activation) does too.
    const auto open = [this](QListWidgetItem *item) { Q_EMIT recentFileActivated(item->data(Qt::UserRole).toString()); };
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
