#include "ui/views/compare/compare_explorer.h"
#include "ui/common/sample_types.h"

#include "engine/model/units.h"
#include "ui/common/logging.h"
#include "ui/common/value_text.h"
#include "ui/flamegraph/breadcrumb_bar.h"
#include "ui/flamegraph/diff_flame_graph_view.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/jobs/comparison_runner.h"
#include "ui/views/compare/diff_tables_view.h"
#include "ui/views/widgets/label_strip.h"
#include "ui/views/widgets/search_delay.h"
#include "ui/views/widgets/thread_filter_button.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace emberline::ui {

CompareExplorer::CompareExplorer(std::shared_ptr<const engine::LoadedProfile> next,
                                 std::shared_ptr<const engine::LoadedProfile> base, QWidget *parent)
    : QWidget(parent), m_next(std::move(next)), m_base(std::move(base))
{
    setupUi();
    createActions();
    connectSignals();
}

CompareExplorer::CompareExplorer(QWidget *parent) : QWidget(parent), m_fed(true)
{
    setupUi();
    createActions();
    connectSignals();
}

void CompareExplorer::setupUi()
{
    setObjectName(QStringLiteral("compareExplorer"));
    m_runner = new ComparisonRunner(this);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("compareMessage"));
    m_message->setWordWrap(true);
    m_message->setTextFormat(Qt::PlainText);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setVisible(false);
    m_breadcrumb = new BreadcrumbBar(this);
    m_flame = new DiffFlameGraphView(this);
    m_tables = new DiffTablesView(this);
    m_status = new LabelStrip(QStringLiteral("compareStatusLine"), this);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("compareSplitter"));
    auto *graphPane = new QWidget(splitter);
    auto *graphLayout = new QVBoxLayout(graphPane);
    graphLayout->setContentsMargins(0, 0, 0, 0);
    graphLayout->setSpacing(2);
    graphLayout->addWidget(m_breadcrumb);
    graphLayout->addWidget(m_flame, 1);
    splitter->addWidget(graphPane);
    splitter->addWidget(m_tables);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({620, 300});

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 4);
    layout->setSpacing(4);
    layout->addWidget(createToolbar());
    layout->addWidget(m_message);
    layout->addWidget(splitter, 1);
    layout->addWidget(m_status);
}

QWidget *CompareExplorer::createToolbar()
{
    auto *bar = new QWidget(this);
    auto *layout = new QHBoxLayout(bar);
    layout->setContentsMargins(0, 0, 0, 0);
    m_sampleType = new QComboBox(bar);
    m_sampleType->setObjectName(QStringLiteral("compareSampleTypeCombo"));
    m_sampleType->setToolTip(tr("Sample type: the value both profiles are compared by (only the types both have)"));
    m_threads = new ThreadFilterButton(bar);
    if (!m_fed) {
        fillSampleTypes();
        m_threads->setThreads(m_next->threads);
    }
    // The base's threads are matched by name; without thread labels on both sides a filter would mislead. A live
    // session's threads are chosen on its timeline.
    m_threads->setVisible(!m_fed && !m_next->threads->empty() && !m_base->threads->empty());
    m_normalize = new QCheckBox(tr("Normalize"), bar);
    m_normalize->setObjectName(QStringLiteral("normalizeToggle"));
    m_normalize->setToolTip(tr("Scale the base so that its total equals the new total: compare shares, not amounts"));
    m_search = new QLineEdit(bar);
    m_search->setObjectName(QStringLiteral("compareSearch"));
    m_search->setPlaceholderText(tr("Search frames (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMinimumWidth(220);
    m_searchDelay = new QTimer(this);
    m_searchDelay->setSingleShot(true);
    m_searchDelay->setInterval(kSearchDelayMs);
    m_searchResult = new QLabel(bar);
    m_searchResult->setObjectName(QStringLiteral("compareSearchResult"));
    m_resetZoom = new QToolButton(bar);
    m_resetZoom->setObjectName(QStringLiteral("compareResetZoomButton"));
    m_resetZoom->setText(tr("Reset zoom"));
    m_resetZoom->setEnabled(false);

    layout->addWidget(new QLabel(tr("Sample type:"), bar));
    layout->addWidget(m_sampleType);
    layout->addWidget(m_threads);
    layout->addWidget(m_normalize);
    layout->addSpacing(12);
    layout->addWidget(m_search);
    layout->addWidget(m_searchResult);
    layout->addStretch();
    layout->addWidget(m_resetZoom);
    return bar;
}

void CompareExplorer::fillSampleTypes()
{
    const QSignalBlocker blocker(m_sampleType);
    const engine::Profile &next = *m_next->profile;
    const std::vector<int> shared = engine::sharedSampleTypes(next, *m_base->profile);
    for (int i : shared) {
        const engine::ValueType &type = next.sampleTypes()[static_cast<size_t>(i)];
        const QString name = QString::fromStdString(next.str(type.type));
        m_sampleType->addItem(QStringLiteral("%1 (%2)").arg(name, QString::fromStdString(next.str(type.unit))), name);
        m_sampleType->setItemData(m_sampleType->count() - 1, sampleTypeDescription(name), Qt::ToolTipRole);
        if (i == initialSampleType(next))
            m_sampleType->setCurrentIndex(m_sampleType->count() - 1);
    }
    m_sampleType->setEnabled(!shared.empty());
}

void CompareExplorer::createActions()
{
    auto *reset = new QAction(tr("Reset Zoom"), this);
    reset->setObjectName(QStringLiteral("compareResetZoomAction"));
    reset->setShortcut(Qt::Key_Escape);
    reset->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(reset, &QAction::triggered, this, &CompareExplorer::resetZoom);
    addAction(reset);
}

void CompareExplorer::connectSignals()
{
    FlameGraphView *flame = m_flame->flameGraph();
    connect(m_runner, &ComparisonRunner::comparisonReady, this, &CompareExplorer::applyComparison);
    connect(m_runner, &ComparisonRunner::comparisonFailed, this, &CompareExplorer::showError);
    connect(m_runner, &ComparisonRunner::callerCalleeReady, m_tables, &DiffTablesView::setCallerCallee);
    connect(m_sampleType, &QComboBox::currentIndexChanged, this, [this] {
        if (m_fed)
            Q_EMIT sampleTypeChosen(m_sampleType->currentData().toInt());
        else
            requestComparison();
    });
    connect(m_threads, &ThreadFilterButton::selectionChanged, this, &CompareExplorer::requestComparison);
    connect(m_normalize, &QCheckBox::toggled, this, [this](bool on) {
        if (m_fed)
            Q_EMIT normalizeToggled(on);
        else
            requestComparison();
    });
    // The view makes widths it lacks itself; later comparisons come with them made.
    connect(m_flame, &DiffFlameGraphView::widthsChanged, this, [this](engine::DiffTree::Widths widths) {
        if (m_fed)
            Q_EMIT widthsChosen(widths);
    });
    connect(m_search, &QLineEdit::textChanged, m_searchDelay, qOverload<>(&QTimer::start));
    connect(m_searchDelay, &QTimer::timeout, this, [this] { m_flame->flameGraph()->setSearch(m_search->text()); });
    connect(flame, &FlameGraphView::searchResultChanged, this, &CompareExplorer::updateSearchLabel);
    connect(flame, &FlameGraphView::zoomChanged, this, &CompareExplorer::updateBreadcrumb);
    connect(flame, &FlameGraphView::frameClicked, this, &CompareExplorer::selectFrame);
    connect(m_breadcrumb, &BreadcrumbBar::nodeActivated, flame, &FlameGraphView::zoomTo);
    connect(m_resetZoom, &QToolButton::clicked, this, &CompareExplorer::resetZoom);
    connect(m_tables, &DiffTablesView::frameSelected, this, &CompareExplorer::selectFrame);
    // The first comparison once the explorer is shown, so that a failure is seen by whoever shows it.
    if (!m_fed) {
        QTimer::singleShot(0, this, [this] {
            if (!m_requested)
                requestComparison();
        });
    }
}

bool CompareExplorer::isComparing() const
{
    return m_runner->isComparing();
}

QString CompareExplorer::message() const
{
    return m_message->isVisible() ? m_message->text() : QString();
}

void CompareExplorer::focusSearch()
{
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
}

void CompareExplorer::resetZoom()
{
    m_flame->flameGraph()->resetZoom();
}

void CompareExplorer::requestComparison()
{
    if (m_fed)
        return; // the live stage compares
    engine::ComparisonRequest request;
    request.next = m_next;
    request.base = m_base;
    request.sampleType = m_sampleType->currentData().toString().toStdString();
    request.normalize = m_normalize->isChecked();
    request.widths = m_flame->widths();
    if (!m_threads->isHidden())
        request.newThreads = m_threads->selectedThreads();
    request.baseRange = m_baseRange;
    request.newRange = m_newRange;
    m_requested = true;
    m_runner->requestComparison(std::move(request));
    updateStatusLine();
}

void CompareExplorer::applyComparison(std::shared_ptr<const engine::Comparison> comparison)
{
    const bool keepZoom = m_comparison != nullptr;
    m_comparison = std::move(comparison);
    m_flame->setDiff(m_comparison->tree, m_comparison->unit, keepZoom, m_comparison->frameNames);
    m_tables->setComparison(m_comparison);
    QStringList lines;
    for (const std::string &notice : m_comparison->notices)
        lines << QString::fromStdString(notice);
    showMessage(lines, false);
    if (m_selectedFrame != UINT32_MAX) {
        m_flame->flameGraph()->setSelectedFrame(m_selectedFrame);
        m_tables->selectFrame(m_selectedFrame);
        m_runner->requestCallerCallee(m_comparison, m_selectedFrame);
    }
    updateStatusLine();
    Q_EMIT comparisonApplied();
}

void CompareExplorer::setSampleTypes(const engine::Profile &profile, int current)
{
    const QSignalBlocker blocker(m_sampleType);
    m_sampleType->clear();
    for (size_t i = 0; i < profile.sampleTypes().size(); ++i) {
        const engine::ValueType &type = profile.sampleTypes()[i];
        m_sampleType->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(profile.str(type.type)),
                                                            QString::fromStdString(profile.str(type.unit))),
                              static_cast<int>(i));
    }
    m_sampleType->setCurrentIndex(std::max(0, m_sampleType->findData(current)));
    m_sampleType->setEnabled(m_sampleType->count() > 1);
}

void CompareExplorer::showComparison(std::shared_ptr<const engine::Comparison> comparison, const QString &baseLabel,
                                     const QString &newLabel)
{
    m_baseLabel = baseLabel;
    m_newLabel = newLabel;
    applyComparison(std::move(comparison));
}

void CompareExplorer::compareRanges(engine::TimeRange base, engine::TimeRange next, const QString &baseLabel,
                                    const QString &newLabel)
{
    m_baseRange = base;
    m_newRange = next;
    m_baseLabel = baseLabel;
    m_newLabel = newLabel;
    requestComparison();
}

void CompareExplorer::showUnavailable(const QString &message)
{
    m_comparison.reset();
    m_flame->setDiff(nullptr, {}, false);
    m_tables->setComparison(nullptr);
    showMessage({message}, true);
    updateStatusLine();
}

void CompareExplorer::showError(const QString &message)
{
    qCWarning(lcUiAnalysis).noquote() << "comparison failed:" << message;
    m_comparison.reset();
    m_flame->setDiff(nullptr, {}, false);
    m_tables->setComparison(nullptr);
    showMessage({tr("These profiles cannot be compared: %1").arg(message)}, true);
    updateStatusLine();
    Q_EMIT comparisonFailed(message);
}

void CompareExplorer::showMessage(const QStringList &lines, bool error)
{
    m_message->setText(lines.join(QLatin1Char('\n')));
    m_message->setStyleSheet(error ? QStringLiteral("QLabel { background: #fde2df; color: #3a1010; padding: 6px; }")
                                   : QStringLiteral("QLabel { background: #fff4d6; color: #3a2c00; padding: 6px; }"));
    m_message->setVisible(!lines.isEmpty());
}

void CompareExplorer::selectFrame(uint32_t frame)
{
    if (!m_comparison || frame == m_selectedFrame || frame >= m_comparison->frames->size())
        return;
    m_selectedFrame = frame;
    m_flame->flameGraph()->setSelectedFrame(frame);
    m_tables->selectFrame(frame);
    m_runner->requestCallerCallee(m_comparison, frame);
}

void CompareExplorer::updateBreadcrumb()
{
    const FlameGraphLayout &layout = m_flame->flameGraph()->layout();
    std::vector<BreadcrumbBar::Crumb> path;
    for (uint32_t node : layout.breadcrumb())
        path.push_back({node, layout.nodeName(node)});
    m_breadcrumb->setPath(std::move(path));
    m_resetZoom->setEnabled(layout.zoomNode() != 0);
}

void CompareExplorer::updateSearchLabel(int64_t matchedTotal, double share, size_t matchedFrames)
{
    if (!m_flame->flameGraph()->layout().hasSearch()) {
        m_searchResult->clear();
        return;
    }
    if (matchedFrames == 0) {
        m_searchResult->setText(tr("No match"));
        return;
    }
    m_searchResult->setText(tr("%1 matched: %2 of the width (%3)")
                                .arg(matchedFrames == 1 ? tr("1 function") : tr("%1 functions").arg(matchedFrames),
                                     QString::number(share * 100.0, 'f', 2) + QLatin1Char('%'),
                                     valueText(matchedTotal, m_flame->flameGraph()->unit())));
}

void CompareExplorer::updateStatusLine()
{
    QStringList parts;
    // A live session's sides and time ranges are named by their labels; files by their names.
    const bool labelled = m_fed || m_newRange || m_baseRange;
    parts << tr("new: %1").arg(labelled ? m_newLabel : QFileInfo(m_next->path).fileName())
          << tr("base: %1").arg(labelled ? m_baseLabel : QFileInfo(m_base->path).fileName());
    if (m_comparison) {
        const std::string &unit = m_comparison->unit;
        parts << tr("%1 total %2 → %3 (%4)")
                     .arg(QString::fromStdString(m_comparison->sampleType), valueText(m_comparison->baseTotal, unit),
                          valueText(m_comparison->newTotal, unit),
                          QString::fromStdString(
                              engine::formatChangePercent(m_comparison->baseTotal, m_comparison->newTotal)));
    }
    if (m_runner->isComparing())
        parts << tr("comparing…");
    m_status->setText(parts.join(QStringLiteral("  ·  ")));
}

} // namespace emberline::ui
