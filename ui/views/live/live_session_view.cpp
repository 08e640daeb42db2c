#include "ui/views/live/live_session_view.h"

#include "engine/common/clock.h"
#include "ui/common/logging.h"
#include "ui/timeline/heatmap_panel.h"
#include "ui/timeline/live_thread_model.h"
#include "ui/timeline/timeline_view.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/live/health_view.h"
#include "ui/views/live/session_status_bar.h"

#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cstring>
#include <utility>

namespace emberline::ui {
namespace {

// A tab shorter than this starts with its timelines collapsed.
constexpr int kShortTab = 640;

} // namespace

LiveSessionView::LiveSessionView(engine::ProfilingSession *session, QWidget *parent)
    : QWidget(parent), m_session(session)
{
    setupUi();
    connectSignals();
}

LiveSessionView::~LiveSessionView()
{
    // The session's destructor stops a running recording and waits for its final flush to be written.
    delete m_session;
}

void LiveSessionView::setupUi()
{
    setObjectName(QStringLiteral("liveSessionView"));
    m_session->setParent(nullptr); // owned (and destroyed last) by this view
    m_status = new SessionStatusBar(this);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("sessionMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setVisible(false);
    m_timeline = new TimelineView(this);
    m_waiting = new QLabel(tr("Waiting for the first flush (every %1 s)…")
                               .arg(static_cast<double>(m_session->config().flushPeriodNs) / 1e9),
                           this);
    m_waiting->setObjectName(QStringLiteral("waitingLabel"));
    m_waiting->setAlignment(Qt::AlignCenter);
    m_explorerStack = new QStackedWidget(this);
    m_explorerStack->setObjectName(QStringLiteral("liveExplorerStack"));
    m_explorerStack->addWidget(m_waiting);
    warmUpExplorer();
    m_compareExplorer = new CompareExplorer(m_explorerStack);
    m_explorerStack->addWidget(m_compareExplorer);

    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setObjectName(QStringLiteral("liveSplitter"));
    m_heatmap = new HeatmapPanel(this);
    m_timelineTabs = new QTabWidget(this);
    m_timelineTabs->setObjectName(QStringLiteral("timelineTabs"));
    m_timelineTabs->setDocumentMode(true);
    m_timelineTabs->addTab(m_timeline, tr("Timeline"));
    m_timelineTabs->addTab(m_heatmap, tr("Heatmap"));
    m_health = new HealthView(this);
    m_timelineTabs->addTab(m_health, tr("Health"));
    if (m_session->config().memory)
        createMemoryTab();
    m_splitter->addWidget(m_timelineTabs);
    m_splitter->addWidget(m_explorerStack);
    m_splitter->setStretchFactor(0, 1);
    m_splitter->setStretchFactor(1, 4);
    m_splitter->setChildrenCollapsible(false);
    // The flame graph is what a session is watched for: by default it gets at least half of the tab's height
    // (the explorer asks for it, see resizeEvent), the timelines about a fifth, the tables what is left.
    m_splitter->setSizes({220, 780});
    // In that fifth the timeline shows its CPU chart and strip (TimelineView leaves its flush chart out);
    // collapsed, the tab bar is left.
    createTimelineCorner();
    m_timelineTabs->setMinimumHeight(timelineStripHeight());
    restoreSplitter();

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 2);
    layout->setSpacing(4);
    layout->addWidget(createToolbar());
    layout->addWidget(m_message);
    layout->addWidget(m_splitter, 1);
    layout->addWidget(m_status);
    updateButtons();
}

void LiveSessionView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_laidOut)
        return;
    m_laidOut = true;
    // A tab is shown before its window lays it out: its sizes are real once the layout requests are handled.
    QTimer::singleShot(0, this, [this] {
        // In a short window (a laptop at 2× scale) the timelines start as a strip, so the flame graph and the
        // tables have room; this is not remembered, the user's own choice is.
        if (m_collapseWhenLaidOut || height() < kShortTab)
            collapseTimelines(true);
    });
}

void LiveSessionView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    if (ProfileExplorer *explorer = m_explorer ? m_explorer : m_warmExplorer)
        explorer->setMinimumFlameHeight(height() / 2);
}

void LiveSessionView::createTimelineCorner()
{
    m_collapseTimelines = new QPushButton(m_timelineTabs);
    m_collapseTimelines->setObjectName(QStringLiteral("collapseTimelinesButton"));
    m_collapseTimelines->setFlat(true);
    m_collapseTimelines->setText(tr("▴ Collapse"));
    m_collapseTimelines->setToolTip(tr("Shrink the timelines to a strip and give the room to the flame graph "
                                       "(Ctrl+Shift+T)"));
    m_timelineTabs->setCornerWidget(m_collapseTimelines, Qt::TopRightCorner);
    connect(m_collapseTimelines, &QPushButton::clicked, this, [this] { setTimelinesCollapsed(!m_timelinesCollapsed); });
    // A click on a tab of collapsed timelines opens them on it.
    connect(m_timelineTabs->tabBar(), &QTabBar::tabBarClicked, this, [this] {
        if (m_timelinesCollapsed)
            setTimelinesCollapsed(false);
    });
    connect(m_splitter, &QSplitter::splitterMoved, this, &LiveSessionView::saveSplitter);
}

int LiveSessionView::timelineStripHeight() const
{
    // The row of the tabs holds the corner button too, which may be the taller: a pane as high as the tab bar alone
    // showed its tabs with their tops cut off.
    return std::max(m_timelineTabs->tabBar()->sizeHint().height(), m_collapseTimelines->sizeHint().height());
}

void LiveSessionView::setTimelinesCollapsed(bool collapsed)
{
    if (collapsed == m_timelinesCollapsed)
        return;
    collapseTimelines(collapsed);
    saveSplitter();
}

void LiveSessionView::collapseTimelines(bool collapsed)
{
    m_timelinesCollapsed = collapsed;
    const int strip = timelineStripHeight();
    if (collapsed) {
        m_expandedSizes = m_splitter->sizes();
        const int total = m_expandedSizes.value(0) + m_expandedSizes.value(1);
        m_timelineTabs->setMaximumHeight(strip);
        m_splitter->setSizes({strip, std::max(0, total - strip)});
    } else {
        m_timelineTabs->setMaximumHeight(QWIDGETSIZE_MAX);
        if (m_expandedSizes.value(0) > strip)
            m_splitter->setSizes(m_expandedSizes);
    }
    m_collapseTimelines->setText(collapsed ? tr("▾ Expand") : tr("▴ Collapse"));
}

void LiveSessionView::restoreSplitter()
{
    QSettings settings;
    const QByteArray state = settings.value(QStringLiteral("live/splitter")).toByteArray();
    if (!state.isEmpty())
        m_splitter->restoreState(state);
    m_collapseWhenLaidOut = settings.value(QStringLiteral("live/timelinesCollapsed"), false).toBool();
}

void LiveSessionView::saveSplitter()
{
    QSettings settings;
    settings.setValue(QStringLiteral("live/timelinesCollapsed"), m_timelinesCollapsed);
    if (!m_timelinesCollapsed) // the expanded layout is the one to come back to
        settings.setValue(QStringLiteral("live/splitter"), m_splitter->saveState());
}

QWidget *LiveSessionView::createToolbar()
{
    auto *bar = new QWidget(this);
    auto *row = new QHBoxLayout(bar);
    row->setContentsMargins(0, 0, 0, 0);
    auto button = [&](const char *name, const QString &text, const QString &tip) {
        auto *b = new QPushButton(text, bar);
        b->setObjectName(QLatin1String(name));
        b->setToolTip(tip);
        row->addWidget(b);
        return b;
    };
    m_stop = button("stopButton", tr("Stop"), tr("End the session (a launched program is ended too)"));
    m_pause = button("pauseButton", tr("Pause"), tr("Stop taking samples for now; the program keeps running"));
    m_resume = button("resumeButton", tr("Resume"), tr("Take samples again"));
    row->addSpacing(16);
    row->addWidget(new QLabel(tr("Show:"), bar));
    m_scope = new QComboBox(bar);
    m_scope->setObjectName(QStringLiteral("viewModeCombo"));
    m_scope->setToolTip(tr("What the flame graph and the tables show. Drag across a timeline to select a range."));
    m_scope->addItem(tr("Whole session"));
    m_scope->addItem(tr("Last flush"));
    m_scope->addItem(tr("Selected range"));
    row->addWidget(m_scope);
    row->addSpacing(16);
    row->addWidget(createCompareControls(bar));
    row->addStretch();
    m_save = button("saveSessionButton", tr("Save Session…"),
                    tr("Copy the session's folder (every flush and the merged profile) elsewhere"));
    m_openProfile =
        button("openProfileButton", tr("Open in Viewer"), tr("Open the session's merged profile in a new tab"));
    return bar;
}

void LiveSessionView::connectSignals()
{
    connect(m_session, &engine::ProfilingSession::started, this, [this] { updateButtons(); });
    connect(m_session, &engine::ProfilingSession::stateChanged, this, [this] { updateButtons(); });
    connect(m_session, &engine::ProfilingSession::statsUpdated, m_status, &SessionStatusBar::setStats);
    connect(m_session, &engine::ProfilingSession::statsUpdated, this, [this](const engine::SessionStats &stats) {
        m_health->setLostSamples(stats.lost, stats.samples);
        m_health->setCpuSamples(stats.incomplete, stats.samples);
        updateHealthTab();
    });
    connect(m_session, &engine::ProfilingSession::liveUpdated, this, &LiveSessionView::onLiveUpdate);
    connect(m_session, &engine::ProfilingSession::finished, this, &LiveSessionView::onFinished);
    connect(m_session, &engine::ProfilingSession::failed, this, &LiveSessionView::onFailed);
    connect(m_stop, &QPushButton::clicked, this, &LiveSessionView::stop);
    connect(m_pause, &QPushButton::clicked, m_session, &engine::ProfilingSession::pause);
    connect(m_resume, &QPushButton::clicked, m_session, &engine::ProfilingSession::resume);
    connect(m_scope, &QComboBox::activated, this, [this](int index) { setScope(static_cast<LiveScope>(index)); });
    connect(m_save, &QPushButton::clicked, this, &LiveSessionView::chooseSaveDirectory);
    connect(m_openProfile, &QPushButton::clicked, this, [this] {
        Q_EMIT openProfileRequested(QDir(sessionDirectory()).filePath(QStringLiteral("profile.pprof")));
    });
    connect(m_timeline, &TimelineView::rangeSelected, this, &LiveSessionView::selectRange);
    // The heatmap's ranges are [start, end); the live stage's include their end.
    connect(m_heatmap, &HeatmapPanel::rangeSelected, this,
            [this](int64_t startNs, int64_t endNs) { selectRange(startNs, endNs - 1); });
    connect(m_heatmap, &HeatmapPanel::selectionCleared, this, [this] {
        // Esc clears both selections: a range baseline goes with them.
        const engine::LiveCompareRequest &compare = m_request.compare;
        if (compare.mode == engine::LiveCompareMode::Baseline &&
            compare.baseline.kind == engine::LiveBaseline::Kind::TimeRange)
            compareOff();
        setScope(LiveScope::WholeSession);
    });
    // A second selection on the heatmap compares range B with range A, as Shift+drag on a timeline does.
    connect(m_heatmap, &HeatmapPanel::rangesCompared, this, [this](engine::TimeRange a, engine::TimeRange b) {
        compareRanges(a.startNs, a.endNs - 1, b.startNs, b.endNs - 1);
        Q_EMIT rangesCompared(a, b);
    });
    connectCompareSignals();
    connectMemorySignals();
    connect(m_timeline, &TimelineView::dataShown, this, [this] {
        m_timelineShown = true;
        reportShownIfComplete();
    });
    connect(m_timeline, &TimelineView::hiddenThreadsChanged, this, [this] {
        m_request.hiddenThreads = m_timeline->threadModel()->hiddenThreads();
        sendRequest();
    });
}

QString LiveSessionView::title() const
{
    const engine::SessionConfig &config = m_session->config();
    if (!config.command.empty())
        return QFileInfo(QString::fromStdString(config.command.front())).fileName();
    return tr("pid %1").arg(config.pid);
}

QString LiveSessionView::message() const
{
    return m_message->isVisible() ? m_message->text() : QString();
}

void LiveSessionView::stop()
{
    m_session->stop();
    updateButtons();
}

void LiveSessionView::setScope(LiveScope scope)
{
    if (scope == LiveScope::SelectedRange && !m_hasRange)
        scope = LiveScope::WholeSession;
    m_scope->setCurrentIndex(static_cast<int>(scope));
    showSelection(scope == LiveScope::SelectedRange ? std::optional(std::pair(m_rangeStart, m_rangeEnd))
                                                    : std::nullopt);
    m_request.scope = scope;
    m_request.rangeStartNs = m_rangeStart;
    m_request.rangeEndNs = m_rangeEnd;
    sendRequest();
}

void LiveSessionView::sendRequest()
{
    m_requestGeneration = m_session->setLiveView(m_request);
}

void LiveSessionView::selectRange(int64_t startNs, int64_t endNs)
{
    m_hasRange = true;
    m_rangeStart = startNs;
    m_rangeEnd = endNs;
    setScope(LiveScope::SelectedRange);
}

void LiveSessionView::onLiveUpdate(const std::shared_ptr<const engine::LiveUpdate> &update)
{
    for (const auto &flush : update->flushes)
        onFlush(*flush);
    if (!update->flushes.empty())
        m_flushArrivalNs[update->flushes.back()->sequence] = update->flushReceivedNs;
    if (!update->error.empty())
        showMessage(tr("A flush could not be shown: %1").arg(QString::fromStdString(update->error)), true);
    // An update for an older request than the latest: the stage is already deriving the newer one.
    if (!update->loaded || update->generation < m_requestGeneration)
        return;
    applyUpdate(update);
}

void LiveSessionView::onFlush(const engine::Flush &flush)
{
    if (flush.health)
        showHealth(flush.health);
    // The views keep the flush either way; the message says what the disk missed.
    if (!flush.saveError.empty())
        showMessage(tr("Flush %1 is shown but could not be saved: %2")
                        .arg(flush.sequence)
                        .arg(QString::fromStdString(flush.saveError)),
                    true);
    else if (!flush.sessionProfileError.empty())
        showMessage(tr("The session's merged profile could not be saved: %1")
                        .arg(QString::fromStdString(flush.sessionProfileError)),
                    true);
}

void LiveSessionView::showHealth(std::shared_ptr<const engine::UnwindHealth> health)
{
    m_health->setHealth(std::move(health));
    updateHealthTab();
}

void LiveSessionView::updateHealthTab()
{
    const int tab = m_timelineTabs->indexOf(m_health);
    // The tab is marked only when the numbers are at stake; its tooltip says why, or sums the health up.
    const QStringList atStake = m_health->numbersAtStake();
    const QString text = atStake.isEmpty() ? tr("Health") : tr("Health ⚠");
    if (m_timelineTabs->tabText(tab) != text)
        m_timelineTabs->setTabText(tab, text);
    m_timelineTabs->setTabToolTip(tab, atStake.isEmpty() ? m_health->summaryText() : atStake.join(QLatin1Char('\n')));
}

void LiveSessionView::applyUpdate(const std::shared_ptr<const engine::LiveUpdate> &update)
{
    QElapsedTimer timer; // GUI-thread time per refresh: it must stay far below the 50 ms stall budget
    timer.start();
    const int64_t cpuStartNs = engine::clockNs(CLOCK_THREAD_CPUTIME_ID);
    const auto &chunks = update->snapshot->chunks;
    // The analysis of the job whose timelines are shown already (the first part of its update, just before) comes
    // alone; any other update is applied whole.
    const bool timelinesShown = update->timelineSent && m_lastUpdate && m_lastUpdate->analysisFollows &&
                                m_lastUpdate->generation == update->generation &&
                                m_lastUpdate->snapshot == update->snapshot;
    m_lastUpdate = update;
    m_shownLoaded = update->loaded;
    m_shownSequence = chunks.empty() ? 0 : chunks.back()->sequence;
    m_analysisShown = false;
    if (!timelinesShown) {
        m_timelineShown = false;
        m_timeline->setData(update->snapshot, update->activity);
        updateMemory(*update);
        if (update->heatmap)
            m_heatmap->setHeatmap(update->heatmap);
        if (update->request.scope == LiveScope::LastFlush && !chunks.empty())
            showSelection(std::pair(chunks.back()->startNs, chunks.back()->endNs));
    }
    const qint64 timelinesMs = timer.elapsed();
    if (update->analysisFollows) {
        qCDebug(lcUiAnalysis) << "live timelines applied on the GUI thread in" << timelinesMs << "ms";
        return;
    }
    if (!m_explorer) {
        m_explorer = std::exchange(m_warmExplorer, nullptr);
        connect(m_explorer, &ProfileExplorer::analysisApplied, this, &LiveSessionView::onAnalysisApplied);
        connect(m_explorer, &ProfileExplorer::sampleTypeChanged, this, [this](int sampleType) {
            m_request.sampleType = sampleType;
            sendRequest();
        });
    }
    showExplorerForMode(update->request.compare.mode);
    if (update->request.compare.mode != engine::LiveCompareMode::Off) {
        applyComparison(*update);
    } else {
        // The analysis is applied as it came when the explorer shows its sample type; otherwise (the user has
        // just chosen another) the explorer derives its own and the next update brings the new type.
        m_explorer->setLoaded(update->loaded, update->analysis);
    }
    qCDebug(lcUiAnalysis) << "live update applied on the GUI thread in" << timer.elapsed() << "ms (timelines"
                          << timelinesMs << "ms;"
                          << static_cast<double>(engine::clockNs(CLOCK_THREAD_CPUTIME_ID) - cpuStartNs) / 1e6
                          << "ms on CPU)";
}

void LiveSessionView::warmUpExplorer()
{
    // The explorer is built and painted once, off screen and empty, before the session starts: its first
    // polish, layout, text shaping and paint cost tens of milliseconds of GUI time, which a target keeping every
    // core busy would stretch into a stall of several hundred milliseconds if it came with the first flush.
    auto empty = std::make_shared<engine::LoadedProfile>();
    empty->profile = std::make_shared<const engine::Profile>();
    empty->frames = std::make_shared<const engine::FrameTable>(*empty->profile);
    empty->threads = std::make_shared<const engine::ThreadIndex>(*empty->profile);
    empty->aggregated = true;
    m_warmExplorer = new ProfileExplorer(std::move(empty), m_explorerStack);
    m_warmExplorer->setThreadFilterVisible(false);
    m_warmExplorer->setRoomSettings(QStringLiteral("liveExplorer"), 0.85);
    // A maximized detail view takes the whole tab: the timelines go too.
    connect(m_warmExplorer, &ProfileExplorer::detailsMaximizedChanged, this,
            [this](bool maximized) { m_timelineTabs->setVisible(!maximized); });
    m_explorerStack->addWidget(m_warmExplorer);
    m_warmExplorer->resize(1200, 600);
    QPixmap scratch(m_warmExplorer->size());
    m_warmExplorer->render(&scratch);
    // The first real paint lays out hundreds of function names; with the glyphs of every printable ASCII
    // character already rasterized (normal and bold, as tables and the flame graph draw them), it does not
    // also pay for loading them.
    QString ascii;
    for (char16_t c = 0x20; c < 0x7f; ++c)
        ascii.append(QChar(c));
    QPainter painter(&scratch);
    for (bool bold : {false, true}) {
        QFont font = m_warmExplorer->font();
        font.setBold(bold);
        painter.setFont(font);
        painter.drawText(QPointF(0, 20), ascii);
    }
}

void LiveSessionView::onAnalysisApplied()
{
    if (!m_explorer->analysis() || m_explorer->analysis()->loaded != m_shownLoaded)
        return;
    m_analysisShown = true;
    reportShownIfComplete();
}

void LiveSessionView::reportShownIfComplete()
{
    if (!m_analysisShown || !m_timelineShown)
        return;
    auto it = m_flushArrivalNs.find(m_shownSequence);
    if (it != m_flushArrivalNs.end()) {
        const double latency = static_cast<double>(engine::clockNs(CLOCK_MONOTONIC) - it->second) / 1e6;
        qCDebug(lcUiAnalysis) << "views show flush" << m_shownSequence << latency << "ms after it arrived";
        Q_EMIT viewsUpdated(m_shownSequence, latency);
    }
    m_flushArrivalNs.erase(m_flushArrivalNs.begin(), m_flushArrivalNs.upper_bound(m_shownSequence));
}

} // namespace emberline::ui
