#include "ui/views/compare_view.h"

#include "ui/jobs/comparison_runner.h"
#include "ui/views/compare_explorer.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace emberline::ui {

CompareView::CompareView(const QString &basePath, const QString &newPath,
                         std::shared_ptr<const engine::LoadedProfile> loadedNew, QWidget *parent)
    : QWidget(parent), m_basePath(basePath), m_newPath(newPath), m_loadedNew(std::move(loadedNew))
{
    setupUi();
    connectSignals();
}

void CompareView::setupUi()
{
    setObjectName(QStringLiteral("compareView"));
    m_runner = new ComparisonRunner(this);
    m_stack = new QStackedWidget(this);
    m_loadingPage = createLoadingPage();
    m_errorPage = createErrorPage();
    m_stack->addWidget(m_loadingPage);
    m_stack->addWidget(m_errorPage);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);
}

QWidget *CompareView::createLoadingPage()
{
    auto *page = new QWidget(this);
    auto *label = new QLabel(tr("Loading %1 (base) and %2 (new)…")
                                 .arg(QFileInfo(m_basePath).fileName(), QFileInfo(m_newPath).fileName()),
                             page);
    label->setObjectName(QStringLiteral("compareLoadingLabel"));
    label->setAlignment(Qt::AlignCenter);
    m_progress = new QProgressBar(page);
    m_progress->setObjectName(QStringLiteral("compareLoadProgress"));
    m_progress->setRange(0, 0); // busy: two readers at once have no single fraction
    m_progress->setMaximumWidth(420);
    m_cancel = new QPushButton(tr("Cancel"), page);
    m_cancel->setObjectName(QStringLiteral("compareCancelButton"));
    auto *layout = new QVBoxLayout(page);
    layout->addStretch();
    layout->addWidget(label);
    layout->addWidget(m_progress, 0, Qt::AlignHCenter);
    layout->addWidget(m_cancel, 0, Qt::AlignHCenter);
    layout->addStretch();
    return page;
}

QWidget *CompareView::createErrorPage()
{
    auto *page = new QWidget(this);
    auto *title = new QLabel(tr("<b>These profiles could not be compared</b>"), page);
    title->setAlignment(Qt::AlignCenter);
    m_errorLabel = new QLabel(page);
    m_errorLabel->setObjectName(QStringLiteral("compareErrorLabel"));
    m_errorLabel->setTextFormat(Qt::PlainText);
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setAlignment(Qt::AlignCenter);
    m_errorLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_errorLabel->setMaximumWidth(720);
    m_retry = new QPushButton(tr("Retry"), page);
    m_retry->setObjectName(QStringLiteral("compareRetryButton"));
    m_close = new QPushButton(tr("Close"), page);
    m_close->setObjectName(QStringLiteral("compareCloseButton"));
    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(m_retry);
    buttons->addWidget(m_close);
    buttons->addStretch();
    auto *layout = new QVBoxLayout(page);
    layout->addStretch();
    layout->addWidget(title);
    layout->addWidget(m_errorLabel, 0, Qt::AlignHCenter);
    layout->addLayout(buttons);
    layout->addStretch();
    return page;
}

void CompareView::connectSignals()
{
    connect(m_runner, &ComparisonRunner::loaded, this, &CompareView::onLoaded);
    connect(m_runner, &ComparisonRunner::loadFailed, this, &CompareView::onFailed);
    connect(m_runner, &ComparisonRunner::loadCancelled, this, &CompareView::closeRequested);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        m_runner->cancelLoad();
        Q_EMIT closeRequested();
    });
    connect(m_retry, &QPushButton::clicked, this, &CompareView::load);
    connect(m_close, &QPushButton::clicked, this, &CompareView::closeRequested);
}

QString CompareView::title() const
{
    return tr("%1 vs %2").arg(QFileInfo(m_newPath).fileName(), QFileInfo(m_basePath).fileName());
}

void CompareView::load()
{
    m_state = State::Loading;
    m_stack->setCurrentWidget(m_loadingPage);
    m_runner->load(m_newPath, m_basePath, m_loadedNew);
}

QString CompareView::errorMessage() const
{
    return m_state == State::Failed ? m_errorLabel->text() : QString();
}

void CompareView::onLoaded(std::shared_ptr<const engine::LoadedProfile> next,
                           std::shared_ptr<const engine::LoadedProfile> base)
{
    m_state = State::Ready;
    m_explorer = new CompareExplorer(std::move(next), std::move(base), this);
    m_stack->addWidget(m_explorer);
    m_stack->setCurrentWidget(m_explorer);
    Q_EMIT loadFinished(true);
}

void CompareView::onFailed(const QString &message)
{
    m_state = State::Failed;
    m_errorLabel->setText(message);
    m_stack->setCurrentWidget(m_errorPage);
    Q_EMIT loadFinished(false);
}

} // namespace emberline::ui
