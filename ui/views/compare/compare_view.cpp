#include "ui/views/compare/compare_view.h"

#include "ui/jobs/comparison_runner.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/widgets/load_error_page.h"
#include "ui/views/widgets/loading_page.h"

#include <QFileInfo>
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
    // Busy throughout: two readers at once have no single fraction.
    m_loadingPage = new LoadingPage(
        tr("Loading %1 (base) and %2 (new)…").arg(QFileInfo(m_basePath).fileName(), QFileInfo(m_newPath).fileName()),
        this);
    m_errorPage = new LoadErrorPage(tr("These profiles could not be compared"), this);
    m_stack->addWidget(m_loadingPage);
    m_stack->addWidget(m_errorPage);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);
}

void CompareView::connectSignals()
{
    connect(m_runner, &ComparisonRunner::loaded, this, &CompareView::onLoaded);
    connect(m_runner, &ComparisonRunner::loadFailed, this, &CompareView::onFailed);
    connect(m_runner, &ComparisonRunner::loadCancelled, this, &CompareView::closeRequested);
    connect(m_loadingPage, &LoadingPage::cancelClicked, this, [this] {
        m_runner->cancelLoad();
        Q_EMIT closeRequested();
    });
    connect(m_errorPage, &LoadErrorPage::retryClicked, this, &CompareView::load);
    connect(m_errorPage, &LoadErrorPage::closeClicked, this, &CompareView::closeRequested);
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
    return m_state == State::Failed ? m_errorPage->message() : QString();
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
    m_errorPage->setMessage(message);
    m_stack->setCurrentWidget(m_errorPage);
    Q_EMIT loadFinished(false);
}

} // namespace emberline::ui
