#include "ui/views/explorer/profile_view.h"

#include "ui/jobs/heatmap_runner.h"
#include "ui/jobs/profile_loader.h"
#include "ui/timeline/heatmap_panel.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/widgets/load_error_page.h"
#include "ui/views/widgets/loading_page.h"

#include <QFileInfo>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace emberline::ui {
namespace {

constexpr int kHeatmapHeight = 250;

} // namespace

ProfileView::ProfileView(const QString &path, QWidget *parent) : QWidget(parent), m_path(path)
{
    setupUi();
    connectSignals();
}

void ProfileView::setupUi()
{
    setObjectName(QStringLiteral("profileView"));
    m_loader = new ProfileLoader(this);
    m_stack = new QStackedWidget(this);
    m_loadingPage = new LoadingPage(tr("Loading %1…").arg(QFileInfo(m_path).fileName()), this);
    m_errorPage = new LoadErrorPage(tr("This profile could not be opened"), this);
    m_stack->addWidget(m_loadingPage);
    m_stack->addWidget(m_errorPage);
    // How a session folder was read (merged from its flushes, files skipped): shown above the views.
    m_notice = new QLabel(this);
    m_notice->setObjectName(QStringLiteral("loadNotice"));
    m_notice->setWordWrap(true);
    m_notice->setStyleSheet(QStringLiteral("QLabel { background: #fff4d6; color: #3a2c00; padding: 6px; }"));
    m_notice->setVisible(false);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_notice);
    layout->addWidget(m_stack);
}

void ProfileView::connectSignals()
{
    // Busy until the reader reports progress (`perf script` on a perf.data reports none).
    connect(m_loader, &ProfileLoader::progressChanged, m_loadingPage, &LoadingPage::setFraction);
    connect(m_loader, &ProfileLoader::loaded, this, &ProfileView::onLoaded);
    connect(m_loader, &ProfileLoader::failed, this, &ProfileView::onFailed);
    connect(m_loader, &ProfileLoader::cancelled, this, &ProfileView::closeRequested);
    connect(m_loadingPage, &LoadingPage::cancelClicked, m_loader, &ProfileLoader::cancel);
    connect(m_errorPage, &LoadErrorPage::retryClicked, this, &ProfileView::load);
    connect(m_errorPage, &LoadErrorPage::closeClicked, this, &ProfileView::closeRequested);
}

void ProfileView::load()
{
    m_state = State::Loading;
    m_loadingPage->setBusy();
    m_stack->setCurrentWidget(m_loadingPage);
    m_loader->start(m_path);
}

QString ProfileView::notice() const
{
    return m_notice->text();
}

QString ProfileView::errorMessage() const
{
    return m_state == State::Failed ? m_errorPage->message() : QString();
}

void ProfileView::onLoaded(std::shared_ptr<const engine::LoadedProfile> loaded)
{
    m_state = State::Ready;
    m_notice->setText(loaded->notice);
    m_notice->setVisible(!loaded->notice.isEmpty());
    createReadyPage(std::move(loaded));
    m_stack->addWidget(m_readyPage);
    m_stack->setCurrentWidget(m_readyPage);
    requestHeatmap();
    Q_EMIT loadFinished(true);
}

void ProfileView::createReadyPage(std::shared_ptr<const engine::LoadedProfile> loaded)
{
    m_loaded = loaded;
    m_readyPage = new QSplitter(Qt::Vertical, this);
    m_readyPage->setObjectName(QStringLiteral("heatmapSplitter"));
    m_heatmap = new HeatmapPanel(m_readyPage);
    m_heatmap->setVisible(false); // until its samples turn out to carry timestamps
    m_heatmapRunner = new HeatmapRunner(this);
    m_views = new QStackedWidget(m_readyPage);
    m_views->setObjectName(QStringLiteral("profileViewsStack"));
    m_explorer = new ProfileExplorer(std::move(loaded), m_views);
    m_views->addWidget(m_explorer);
    m_readyPage->addWidget(m_heatmap);
    m_readyPage->addWidget(m_views);
    m_readyPage->setStretchFactor(1, 3);
    m_readyPage->setSizes({kHeatmapHeight, 700});
    connect(m_heatmapRunner, &HeatmapRunner::heatmapReady, this,
            [this](std::shared_ptr<const engine::Heatmap> heatmap, const std::string &unit) {
                const bool shown = m_heatmap->isVisibleTo(m_readyPage);
                m_heatmap->setVisible(heatmap->hasTimestamps());
                if (!shown && heatmap->hasTimestamps()) // a splitter gives a widget shown late no room
                    m_readyPage->setSizes({kHeatmapHeight, std::max(1, m_readyPage->height() - kHeatmapHeight)});
                m_heatmap->setHeatmap(std::move(heatmap), unit);
            });
    connect(m_heatmapRunner, &HeatmapRunner::failed, this, [this](const QString &message) {
        m_heatmap->setVisible(true);
        m_heatmap->setMessage(tr("No heatmap: %1").arg(message));
    });
    // The panel's selection is in [start, end); the explorer's filter takes it as it is.
    connect(m_heatmap, &HeatmapPanel::rangeSelected, this, [this](int64_t startNs, int64_t endNs) {
        showExplorer();
        m_explorer->setTimeRange(engine::TimeRange{startNs, endNs});
    });
    connect(m_heatmap, &HeatmapPanel::selectionCleared, this, [this] {
        showExplorer();
        m_explorer->setTimeRange(std::nullopt);
    });
    connect(m_heatmap, &HeatmapPanel::rangesCompared, this, &ProfileView::compareRanges);
    connect(m_explorer, &ProfileExplorer::sampleTypeChanged, this, &ProfileView::requestHeatmap);
    connect(m_explorer, &ProfileExplorer::threadsChanged, this, &ProfileView::requestHeatmap);
}

void ProfileView::requestHeatmap()
{
    engine::HeatmapRequest request;
    request.sampleType = m_explorer->sampleType();
    request.threads = m_explorer->selectedThreads();
    m_heatmapRunner->request(m_loaded, request);
}

void ProfileView::compareRanges(engine::TimeRange a, engine::TimeRange b)
{
    if (!m_rangeCompare) {
        m_rangeCompare = new CompareExplorer(m_loaded, m_loaded, m_views);
        m_rangeCompare->setObjectName(QStringLiteral("rangeCompareExplorer"));
        m_views->addWidget(m_rangeCompare);
    }
    const engine::Heatmap *heatmap = m_heatmap->view()->heatmap().get();
    const int64_t start = heatmap ? heatmap->startNs() : 0;
    const auto label = [start](engine::TimeRange r) {
        const auto seconds = [start](int64_t t) {
            return QString::number(static_cast<double>(t - start) / 1e9, 'f', 2);
        };
        return tr("range %1–%2 s").arg(seconds(r.startNs), seconds(r.endNs));
    };
    m_rangeCompare->compareRanges(a, b, label(a), label(b));
    m_views->setCurrentWidget(m_rangeCompare);
}

void ProfileView::showExplorer()
{
    if (m_views->currentWidget() != m_explorer)
        m_views->setCurrentWidget(m_explorer);
}

bool ProfileView::isComparingRanges() const
{
    return m_rangeCompare && m_views->currentWidget() == m_rangeCompare;
}

void ProfileView::onFailed(const QString &message)
{
    m_state = State::Failed;
    m_errorPage->setMessage(message);
    m_stack->setCurrentWidget(m_errorPage);
    Q_EMIT loadFinished(false);
}

} // namespace emberline::ui
