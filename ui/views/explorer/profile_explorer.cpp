#include "ui/views/explorer/profile_explorer.h"

#include "engine/model/units.h"
#include "ui/common/logging.h"
#include "ui/common/sample_types.h"
#include "ui/common/source_roots.h"
#include "ui/common/value_text.h"
#include "ui/flamegraph/breadcrumb_bar.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/jobs/analysis_runner.h"
#include "ui/jobs/source_runner.h"
#include "ui/models/top_functions_model.h"
#include "ui/views/explorer/caller_callee_view.h"
#include "ui/views/explorer/disassembly_view.h"
#include "ui/views/explorer/sandwich_view.h"
#include "ui/views/explorer/source_view.h"
#include "ui/views/explorer/top_functions_view.h"
#include "ui/views/memory/memory_summary_view.h"
#include "ui/views/widgets/fitting_tab_widget.h"
#include "ui/views/widgets/label_strip.h"
#include "ui/views/widgets/search_delay.h"
#include "ui/views/widgets/thread_filter_button.h"
#include "ui/views/widgets/transform_chain_bar.h"

#include <QAction>
#include <QComboBox>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace emberline::ui {

ProfileExplorer::ProfileExplorer(std::shared_ptr<const LoadedProfile> loaded, QWidget *parent)
    : QWidget(parent), m_loaded(std::move(loaded))
{
    setupUi();
    createActions();
    connectSignals();
    settleInterpreterFrames();
    requestAnalysis();
}

void ProfileExplorer::setupUi()
{
    setObjectName(QStringLiteral("profileExplorer"));
    m_runner = new AnalysisRunner(this);
    m_sourceRunner = new SourceRunner(this);
    m_breadcrumb = new BreadcrumbBar(this);
    m_chain = new TransformChainBar(this);
    m_flame = new FlameGraphView(this);
    // It changes with every live refresh: a strip, so that a new text does not lay the window out again.
    m_status = new LabelStrip(QStringLiteral("statusLine"), this);

    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setObjectName(QStringLiteral("mainSplitter"));
    m_graphPane = new QWidget(m_splitter);
    m_graphPane->setObjectName(QStringLiteral("flameGraphPane"));
    auto *graphLayout = new QVBoxLayout(m_graphPane);
    graphLayout->setContentsMargins(0, 0, 0, 0);
    graphLayout->setSpacing(2);
    graphLayout->addWidget(m_breadcrumb);
    graphLayout->addWidget(m_flame, 1);
    m_splitter->addWidget(m_graphPane);
    m_splitter->addWidget(createTablesPane());
    // The tables may give the flame graph more than their size hints would: a few rows and the tab bar stay.
    m_splitter->widget(1)->setMinimumHeight(120);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->setSizes({620, 300}); // refitted to the flame graph's rows (fitFlameGraph) once it has a tree
    createMessagePage();

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 4);
    layout->setSpacing(4);
    layout->addWidget(createToolbar());
    layout->addWidget(m_chain);
    layout->addWidget(m_viewStack, 1);
    layout->addWidget(m_status);
}

QWidget *ProfileExplorer::createToolbar()
{
    auto *bar = new QWidget(this);
    auto *layout = new QHBoxLayout(bar);
    layout->setContentsMargins(0, 0, 0, 0);

    m_sampleType = new QComboBox(bar);
    m_sampleType->setObjectName(QStringLiteral("sampleTypeCombo"));
    fillSampleTypes();

    m_threads = new ThreadFilterButton(bar);
    m_threads->setThreads(m_loaded->threads);
    m_threads->setVisible(!m_loaded->threads->empty());

    m_search = new QLineEdit(bar);
    m_search->setObjectName(QStringLiteral("flameSearch"));
    m_search->setPlaceholderText(tr("Search frames (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMinimumWidth(140); // room for the toolbar in a window at 2× scale; it grows to 360 when it can
    m_search->setMaximumWidth(360);
    m_searchDelay = new QTimer(this);
    m_searchDelay->setSingleShot(true);
    m_searchDelay->setInterval(kSearchDelayMs);
    m_searchResult = new QLabel(bar);
    m_searchResult->setObjectName(QStringLiteral("searchResultLabel"));

    m_icicle = new QToolButton(bar);
    m_icicle->setObjectName(QStringLiteral("icicleToggle"));
    m_icicle->setText(tr("Icicle"));
    m_icicle->setToolTip(tr("Draw the root at the top (icicle graph) instead of at the bottom"));
    m_icicle->setCheckable(true);
    m_bottomUp = new QToolButton(bar);
    m_bottomUp->setObjectName(QStringLiteral("bottomUpToggle"));
    m_bottomUp->setText(tr("Bottom-up"));
    m_bottomUp->setToolTip(tr("Invert the stacks: each function's self cost at the root, its callers above it"));
    m_bottomUp->setCheckable(true);
    m_resetZoom = new QToolButton(bar);
    m_resetZoom->setObjectName(QStringLiteral("resetZoomButton"));
    m_resetZoom->setText(tr("Reset zoom"));
    m_resetZoom->setToolTip(tr("Show the whole profile again (Esc)"));
    m_resetZoom->setEnabled(false);

    layout->addWidget(new QLabel(tr("Sample type:"), bar));
    layout->addWidget(m_sampleType);
    layout->addWidget(m_threads);
    layout->addSpacing(12);
    layout->addWidget(m_search, 3);
    layout->addWidget(m_searchResult);
    layout->addStretch(1);
    layout->addWidget(m_bottomUp);
    layout->addWidget(m_icicle);
    layout->addWidget(m_resetZoom);
    return bar;
}

QWidget *ProfileExplorer::createTablesPane()
{
    auto *tables = new QSplitter(Qt::Horizontal, this);
    tables->setObjectName(QStringLiteral("tablesSplitter"));
    m_tablesSplitter = tables;
    m_topFunctions = new TopFunctionsView(tables);
    m_details = new FittingTabWidget(tables);
    m_details->setObjectName(QStringLiteral("detailTabs"));
    m_callerCallee = new CallerCalleeView(m_details);
    m_source = new SourceView(m_details);
    // The short labels are shown where the full ones do not fit (a window at 2× scale).
    m_details->addTab(m_callerCallee, tr("Callers / Callees"), tr("Calls"));
    m_details->addTab(m_source, tr("Source"), tr("Source"));
    m_sandwich = new SandwichView(m_details);
    m_details->addTab(m_sandwich, tr("Sandwich"), tr("Sandwich"));
    m_disassembly = new DisassemblyView(m_details);
    m_details->addTab(m_disassembly, tr("Disassembly"), tr("Disasm"));
    updateMemorySummary();
    tables->addWidget(m_topFunctions);
    tables->addWidget(m_details);
    tables->setStretchFactor(0, 3);
    tables->setStretchFactor(1, 2);
    return tables;
}

void ProfileExplorer::createActions()
{
    auto *reset = new QAction(tr("Reset Zoom"), this);
    reset->setObjectName(QStringLiteral("resetZoomAction"));
    reset->setShortcut(Qt::Key_Escape);
    reset->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(reset, &QAction::triggered, this, &ProfileExplorer::resetZoom);
    addAction(reset);
    createRoomActions();
}

void ProfileExplorer::connectSignals()
{
    connect(m_runner, &AnalysisRunner::analysisStarted, this, &ProfileExplorer::updateStatusLine);
    connect(m_runner, &AnalysisRunner::analysisReady, this, &ProfileExplorer::applyAnalysis);
    connect(m_runner, &AnalysisRunner::callerCalleeReady, this,
            [this](std::shared_ptr<const engine::CallerCallee> result) {
                m_callerCallee->setCallerCallee(std::move(result), m_analysis->loaded->frames,
                                                m_analysis ? m_analysis->unit : std::string());
            });
    connect(m_sampleType, &QComboBox::currentIndexChanged, this, [this](int index) {
        updateSampleTypeTip();
        requestAnalysis();
        Q_EMIT sampleTypeChanged(index);
    });
    connect(m_threads, &ThreadFilterButton::selectionChanged, this, [this] {
        requestAnalysis();
        Q_EMIT threadsChanged();
    });
    connect(m_search, &QLineEdit::textChanged, m_searchDelay, qOverload<>(&QTimer::start));
    connect(m_searchDelay, &QTimer::timeout, this, [this] { m_flame->setSearch(m_search->text()); });
    connect(m_flame, &FlameGraphView::searchResultChanged, this, &ProfileExplorer::updateSearchLabel);
    connect(m_flame, &FlameGraphView::zoomChanged, this, &ProfileExplorer::updateBreadcrumb);
    connect(m_flame, &FlameGraphView::frameClicked, this, &ProfileExplorer::selectFrame);
    connect(m_breadcrumb, &BreadcrumbBar::nodeActivated, m_flame, &FlameGraphView::zoomTo);
    connect(m_icicle, &QToolButton::toggled, this, [this](bool icicle) {
        m_flame->setOrientation(icicle ? FlameGraphLayout::Orientation::RootAtTop
                                       : FlameGraphLayout::Orientation::RootAtBottom);
    });
    connect(m_resetZoom, &QToolButton::clicked, this, &ProfileExplorer::resetZoom);
    connectTransformSignals();
    connectRoomSignals();
    connect(m_topFunctions, &TopFunctionsView::frameSelected, this, &ProfileExplorer::selectFrame);
    connect(m_callerCallee, &CallerCalleeView::frameActivated, this, &ProfileExplorer::selectFrame);
    connect(m_details, &QTabWidget::currentChanged, this, [this] {
        if (m_details->currentWidget() == m_source && m_sourceStale)
            requestSource();
        if (m_details->currentWidget() == m_sandwich && m_sandwichStale)
            requestSandwich();
        if (m_details->currentWidget() == m_disassembly && m_disassemblyStale)
            requestDisassembly();
    });
    connect(m_runner, &AnalysisRunner::sandwichReady, this,
            [this](std::shared_ptr<const engine::Sandwich> sandwich, const std::shared_ptr<const Analysis> &analysis) {
                m_sandwich->setSandwich(std::move(sandwich), analysis->loaded->frames, analysis->loaded->frameNames,
                                        analysis->unit, m_shape.inverted);
            });
    connect(m_sandwich, &SandwichView::frameActivated, this, &ProfileExplorer::selectFrame);
    connect(m_sourceRunner, &SourceRunner::listingReady, this,
            [this](std::shared_ptr<const engine::SourceListing> listing, const std::string &unit) {
                m_source->setListing(std::move(listing), unit);
            });
    connect(m_sourceRunner, &SourceRunner::failed, m_source, &SourceView::setMessage);
}

void ProfileExplorer::showSource()
{
    m_details->setCurrentWidget(m_source);
    if (m_sourceStale)
        requestSource();
}

void ProfileExplorer::refreshSource()
{
    m_sourceStale = true;
    if (m_details->currentWidget() == m_source)
        requestSource();
}

void ProfileExplorer::refreshDetails()
{
    refreshSource();
    m_sandwichStale = true;
    if (m_details->currentWidget() == m_sandwich)
        requestSandwich();
    m_disassemblyStale = true;
    if (m_details->currentWidget() == m_disassembly)
        requestDisassembly();
}

void ProfileExplorer::showDisassembly()
{
    m_details->setCurrentWidget(m_disassembly);
    if (m_disassemblyStale)
        requestDisassembly();
}

void ProfileExplorer::requestDisassembly()
{
    if (!m_analysis || !m_loaded || m_selectedFrame == UINT32_MAX)
        return;
    m_disassemblyStale = false;
    // The recorded addresses of every sample of the function (the binary's view of it: transforms, which
    // rewrite stacks, and filters do not apply), in the sample type shown.
    m_disassembly->setProfile(m_loaded->profile, m_analysis->sampleType);
    m_disassembly->setSourceRoots(SourceRoots().forLocator());
    m_disassembly->showFrame(m_analysis->loaded->frames->frame(m_selectedFrame));
}

void ProfileExplorer::showSandwich()
{
    m_details->setCurrentWidget(m_sandwich);
    if (m_sandwichStale)
        requestSandwich();
}

bool ProfileExplorer::isBuildingSandwich() const
{
    return m_runner->isBuildingSandwich();
}

void ProfileExplorer::requestSandwich()
{
    if (!m_analysis || m_selectedFrame == UINT32_MAX)
        return;
    m_sandwichStale = false;
    m_runner->requestSandwich(m_analysis, m_selectedFrame);
}

bool ProfileExplorer::isBuildingSource() const
{
    return m_sourceRunner->isRunning();
}

void ProfileExplorer::requestSource()
{
    if (!m_analysis || m_selectedFrame == UINT32_MAX)
        return;
    m_sourceStale = false;
    SourceRequest request;
    request.analysis = m_analysis;
    request.frame = m_analysis->loaded->frames->frame(m_selectedFrame);
    if (m_shape.inverted) { // lines are counted top-down: through the transforms alone
        request.source = m_loaded;
        request.transforms = m_shape.transforms;
    }
    request.roots = SourceRoots().forLocator();
    m_source->setMessage(tr("Reading the lines of %1…").arg(QString::fromStdString(request.frame.name)));
    m_sourceRunner->request(std::move(request));
}

bool ProfileExplorer::isAnalysing() const
{
    return m_runner->isAnalysing();
}

void ProfileExplorer::focusSearch()
{
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
}

void ProfileExplorer::resetZoom()
{
    m_flame->resetZoom();
}

int ProfileExplorer::sampleType() const
{
    return m_sampleType->currentIndex();
}

void ProfileExplorer::setLoaded(std::shared_ptr<const LoadedProfile> loaded, std::shared_ptr<const Analysis> analysis)
{
    if (!loaded || loaded == m_loaded)
        return;
    if (loaded->threads != m_loaded->threads && m_threads->isVisible())
        m_threads->setThreads(loaded->threads);
    m_loaded = std::move(loaded);
    m_untransformed.reset(); // of the profile before
    settleInterpreterFrames();
    updateMemorySummary();
    if (m_sampleType->count() == 0)
        fillSampleTypes(); // it was built empty (a live view made ready before its first flush)
    // A stage's analysis is of the profile as loaded: it answers the explorer's choice only without a shape.
    if (analysis && m_shape.isIdentity() && analysis->loaded == m_loaded &&
        analysis->sampleType == m_sampleType->currentIndex() &&
        analysis->filter.threads == m_threads->selectedThreads()) {
        m_runner->cancelAnalysis(); // what it would derive is already here
        applyAnalysis(std::move(analysis));
        return;
    }
    requestAnalysis();
}

void ProfileExplorer::updateMemorySummary()
{
    // A live session sums its memory up in its own Memory tab, for the whole session whatever the scope.
    if (m_loaded->live || !m_loaded->profile || !engine::hasMemoryTypes(*m_loaded->profile))
        return;
    if (!m_memorySummary) {
        m_memorySummary = new MemorySummaryView(m_details);
        m_details->addTab(m_memorySummary, tr("Memory"), tr("Memory"));
    }
    m_memorySummary->showProfile(m_loaded);
}

void ProfileExplorer::fillSampleTypes()
{
    const QSignalBlocker blocker(m_sampleType);
    const engine::Profile &profile = *m_loaded->profile;
    for (const engine::ValueType &type : profile.sampleTypes()) {
        const QString name = QString::fromStdString(profile.str(type.type));
        m_sampleType->addItem(QStringLiteral("%1 (%2)").arg(name, QString::fromStdString(profile.str(type.unit))));
        m_sampleType->setItemData(m_sampleType->count() - 1, sampleTypeDescription(name), Qt::ToolTipRole);
    }
    m_sampleType->setCurrentIndex(std::max(0, initialSampleType(profile)));
    updateSampleTypeTip();
}

void ProfileExplorer::updateSampleTypeTip()
{
    // The closed selector says what the chosen type measures; each entry of its list says its own.
    const QString what = m_sampleType->currentData(Qt::ToolTipRole).toString();
    m_sampleType->setToolTip(what.isEmpty()
                                 ? tr("Sample type: which value the flame graph and the tables show")
                                 : tr("Sample type: which value the flame graph and the tables show.\n%1").arg(what));
}

void ProfileExplorer::setThreadFilterVisible(bool visible)
{
    m_threads->setVisible(visible && !m_loaded->threads->empty());
}

std::vector<uint32_t> ProfileExplorer::selectedThreads() const
{
    return m_threads->selectedThreads();
}

void ProfileExplorer::setTimeRange(std::optional<engine::TimeRange> range)
{
    m_timeRange = range;
    requestAnalysis();
}

void ProfileExplorer::requestAnalysis()
{
    AnalysisRequest request;
    request.loaded = m_loaded;
    request.sampleType = m_sampleType->currentIndex();
    request.filter.threads = m_threads->selectedThreads();
    if (m_timeRange) { // the filter's range includes its end
        request.filter.startNs = m_timeRange->startNs;
        request.filter.endNs = m_timeRange->endNs - 1;
    }
    if (!m_shape.isIdentity() && m_untransformed && m_untransformed->loaded == m_loaded)
        request.untransformed = m_untransformed;
    m_runner->requestAnalysis(std::move(request), m_shape);
}

void ProfileExplorer::applyAnalysis(std::shared_ptr<const Analysis> analysis)
{
    const auto &source = analysis->loaded->original ? analysis->loaded->original : analysis->loaded;
    if (source != m_loaded)
        return; // derived from a profile that has since been replaced
    QElapsedTimer timer;
    timer.start();
    const bool keepZoom = m_analysis != nullptr;
    translateSelection(analysis->loaded->frames);
    if (analysis->loaded == m_loaded)
        m_untransformed = analysis;
    m_analysis = std::move(analysis);
    showMessage(emptyShapeMessage());
    const LoadedProfile &shown = *m_analysis->loaded;
    m_flame->setTree(m_analysis->tree, shown.frames, m_analysis->unit, keepZoom, shown.frameNames);
    m_flame->setSelectedFrame(m_selectedFrame);
    const qint64 flameMs = timer.elapsed();
    m_topFunctions->model()->setFunctions(m_analysis->functions, shown.frames, m_analysis->unit);
    qCDebug(lcUiAnalysis) << "analysis applied on the GUI thread: flame graph" << flameMs << "ms, tables"
                          << timer.elapsed() - flameMs << "ms";
    if (m_selectedFrame != UINT32_MAX) {
        m_topFunctions->selectFrame(m_selectedFrame, false); // a refresh keeps the user's table filter
        requestCallerCallee();
        refreshDetails();
    }
    updateStatusLine();
    Q_EMIT analysisApplied();
}

void ProfileExplorer::selectFrame(uint32_t frame)
{
    if (frame == m_selectedFrame || frame >= shownFrames().size())
        return;
    m_selectedFrame = frame;
    m_flame->setSelectedFrame(frame);
    m_topFunctions->selectFrame(frame);
    requestCallerCallee();
    refreshDetails();
}

void ProfileExplorer::requestCallerCallee()
{
    if (m_analysis && m_selectedFrame != UINT32_MAX)
        m_runner->requestCallerCallee(m_analysis->loaded, m_analysis, m_selectedFrame);
}

void ProfileExplorer::updateBreadcrumb()
{
    const FlameGraphLayout &layout = m_flame->layout();
    std::vector<BreadcrumbBar::Crumb> path;
    for (uint32_t node : layout.breadcrumb())
        path.push_back({node, layout.nodeName(node)});
    m_breadcrumb->setPath(std::move(path));
    m_resetZoom->setEnabled(layout.zoomNode() != 0);
}

void ProfileExplorer::updateSearchLabel(int64_t matchedTotal, double share, size_t matchedFrames)
{
    if (!m_flame->layout().hasSearch()) {
        m_searchResult->clear();
        return;
    }
    if (matchedFrames == 0) {
        m_searchResult->setText(tr("No match"));
        return;
    }
    const QString functions = matchedFrames == 1 ? tr("1 function") : tr("%1 functions").arg(matchedFrames);
    m_searchResult->setText(tr("%1 matched: %2 of the total (%3)")
                                .arg(functions, QString::number(share * 100.0, 'f', 2) + QLatin1Char('%'),
                                     valueText(matchedTotal, m_flame->unit())));
}

void ProfileExplorer::updateStatusLine()
{
    const engine::Profile &profile = *m_loaded->profile;
    QStringList parts;
    if (!m_loaded->aggregated)
        parts << tr("%1 samples").arg(profile.sampleCount());
    if (profile.durationNanos > 0)
        parts << tr("duration %1").arg(valueText(profile.durationNanos, "nanoseconds"));
    QStringList totals;
    for (size_t i = 0; i < profile.sampleTypes().size(); ++i) {
        const engine::ValueType &type = profile.sampleTypes()[i];
        totals << QStringLiteral("%1 %2").arg(QString::fromStdString(profile.str(type.type)),
                                              valueText(m_loaded->totals[i], profile.str(type.unit)));
    }
    parts << tr("totals: %1").arg(totals.join(QStringLiteral(", ")));
    if (m_analysis && !m_analysis->filter.threads.empty())
        parts << tr("thread filter: %1 samples shown").arg(m_analysis->keptSamples);
    if (m_analysis && m_timeRange)
        parts << tr("time range of %1 s: %2 samples shown")
                     .arg(static_cast<double>(m_timeRange->endNs - m_timeRange->startNs) / 1e9, 0, 'f', 2)
                     .arg(m_analysis->keptSamples);
    if (m_analysis && !m_shape.transforms.empty())
        parts << tr("after transforms: %1 samples shown").arg(m_analysis->keptSamples);
    if (m_shape.inverted)
        parts << tr("bottom-up");
    if (m_runner->isAnalysing())
        parts << tr("updating…");
    m_status->setText(parts.join(QStringLiteral("  ·  ")));
}

} // namespace emberline::ui
