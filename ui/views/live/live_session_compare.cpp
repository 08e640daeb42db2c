// LiveSessionView's compare modes: the Compare combo box, pinning a baseline (a flush, a range, a file loaded on
// the pool) and applying the comparisons the live stage publishes. See live_session_view.h.
#include "ui/common/sample_types.h"
#include "ui/views/live/live_session_view.h"

#include "ui/jobs/profile_loader.h"
#include "ui/timeline/timeline_view.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/explorer/profile_explorer.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QStackedWidget>

#include <algorithm>

namespace emberline::ui {
namespace {

using engine::LiveBaseline;
using engine::LiveCompareMode;

// The Compare combo box's entries, in order.
enum CompareChoice { ChoiceOff, ChoicePreviousFlush, ChoicePinnedFlush, ChoicePinnedRange, ChoiceFile };

int compareChoice(const engine::LiveCompareRequest &compare)
{
    if (compare.mode == LiveCompareMode::PreviousFlush)
        return ChoicePreviousFlush;
    if (compare.mode == LiveCompareMode::Off)
        return ChoiceOff;
    switch (compare.baseline.kind) {
    case LiveBaseline::Kind::Flush:
        return ChoicePinnedFlush;
    case LiveBaseline::Kind::TimeRange:
        return ChoicePinnedRange;
    case LiveBaseline::Kind::File:
        return ChoiceFile;
    }
    return ChoiceOff;
}

// The Compare combo box: as wide as its longest entry where the toolbar has the room, down to about ten
// characters (its minimum size) in a narrow window, rather than always ten characters with the chosen entry cut.
class CompareComboBox : public QComboBox {
public:
    using QComboBox::QComboBox;

    QSize sizeHint() const override
    {
        QSize hint = QComboBox::sizeHint(); // about ten characters
        int widest = 0;
        for (int i = 0; i < count(); ++i)
            widest = std::max(widest, fontMetrics().horizontalAdvance(itemText(i)));
        const int tenCharacters = minimumContentsLength() * fontMetrics().horizontalAdvance(QLatin1Char('X'));
        hint.rwidth() += std::max(0, widest - tenCharacters);
        return hint;
    }
};

} // namespace

QWidget *LiveSessionView::createCompareControls(QWidget *bar)
{
    auto *box = new QWidget(bar);
    auto *row = new QHBoxLayout(box);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Compare:"), box));
    m_compare = new CompareComboBox(box);
    m_compare->setObjectName(QStringLiteral("liveCompareCombo"));
    m_compare->setToolTip(tr("Show what changed: the newest flush against the one before it, or what the view shows "
                             "against a pinned baseline. Shift+drag on a timeline compares two ranges."));
    m_compare->addItem(tr("Off"));
    m_compare->addItem(tr("With the previous flush"));
    m_compare->addItem(tr("With a pinned flush (the newest now)"));
    m_compare->addItem(tr("With a pinned range (the selected one)"));
    m_compare->addItem(tr("With a file…"));
    // At least about ten characters wide (a narrow window has little room); the list shows the entries in full.
    m_compare->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_compare->setMinimumContentsLength(10);
    row->addWidget(m_compare);
    m_baselineLoader = new ProfileLoader(this);
    return box;
}

void LiveSessionView::connectCompareSignals()
{
    connect(m_compare, &QComboBox::activated, this, &LiveSessionView::onCompareChosen);
    connect(m_timeline, &TimelineView::comparedRangeSelected, this, &LiveSessionView::onComparedRangeSelected);
    connect(m_baselineLoader, &ProfileLoader::loaded, this, [this](std::shared_ptr<const engine::LoadedProfile> file) {
        engine::LiveCompareRequest compare = m_request.compare;
        compare.mode = LiveCompareMode::Baseline;
        compare.baseline = LiveBaseline{LiveBaseline::Kind::File, 0, 0, 0, std::move(file)};
        setCompare(std::move(compare));
    });
    connect(m_baselineLoader, &ProfileLoader::failed, this, [this](const QString &message) {
        showMessage(tr("The baseline file could not be read: %1").arg(message), true);
        m_compare->setCurrentIndex(compareChoice(m_request.compare));
    });
    connect(m_compareExplorer, &CompareExplorer::sampleTypeChosen, this, [this](int sampleType) {
        m_request.sampleType = sampleType;
        sendRequest();
    });
    connect(m_compareExplorer, &CompareExplorer::normalizeToggled, this, [this](bool normalize) {
        m_request.compare.normalize = normalize;
        sendRequest();
    });
    connect(m_compareExplorer, &CompareExplorer::widthsChosen, this, [this](engine::DiffTree::Widths widths) {
        // The view draws them already (made in the background); the stage makes them with every comparison.
        m_request.compare.widths = widths;
        sendRequest();
    });
    connect(m_compareExplorer, &CompareExplorer::comparisonApplied, this, [this] {
        m_analysisShown = true;
        reportShownIfComplete();
    });
}

void LiveSessionView::onCompareChosen(int index)
{
    switch (index) {
    case ChoicePreviousFlush:
        compareWithPreviousFlush();
        return;
    case ChoicePinnedFlush:
        if (m_lastUpdate && m_lastUpdate->snapshot && !m_lastUpdate->snapshot->chunks.empty())
            pinBaselineFlush(m_lastUpdate->snapshot->chunks.back()->sequence);
        else
            compareOff(); // nothing to pin before the first flush
        return;
    case ChoicePinnedRange:
        if (m_hasRange) {
            pinBaselineRange(m_rangeStart, m_rangeEnd);
        } else {
            showMessage(tr("Select a range on a timeline first (drag across it), then pin it."), true);
            m_compare->setCurrentIndex(compareChoice(m_request.compare));
        }
        return;
    case ChoiceFile: {
        const QString path = QFileDialog::getOpenFileName(this, tr("Baseline profile"), QString(),
                                                          tr("Profiles (*.pprof *.pb.gz *.pb);;All files (*)"));
        if (path.isEmpty())
            m_compare->setCurrentIndex(compareChoice(m_request.compare));
        else
            pinBaselineFile(path);
        return;
    }
    default:
        compareOff();
        return;
    }
}

void LiveSessionView::compareOff()
{
    setCompare({});
}

void LiveSessionView::compareWithPreviousFlush()
{
    engine::LiveCompareRequest compare = m_request.compare;
    compare.mode = LiveCompareMode::PreviousFlush;
    setCompare(std::move(compare));
}

void LiveSessionView::pinBaselineFlush(uint32_t sequence)
{
    engine::LiveCompareRequest compare = m_request.compare;
    compare.mode = LiveCompareMode::Baseline;
    compare.baseline = LiveBaseline{LiveBaseline::Kind::Flush, sequence, 0, 0, nullptr};
    setCompare(std::move(compare));
}

void LiveSessionView::pinBaselineRange(int64_t startNs, int64_t endNs)
{
    engine::LiveCompareRequest compare = m_request.compare;
    compare.mode = LiveCompareMode::Baseline;
    compare.baseline = LiveBaseline{LiveBaseline::Kind::TimeRange, 0, startNs, endNs, nullptr};
    setCompare(std::move(compare));
}

void LiveSessionView::pinBaselineFile(const QString &path)
{
    m_compare->setCurrentIndex(ChoiceFile);
    m_baselineLoader->start(path);
}

void LiveSessionView::onComparedRangeSelected(int64_t startNs, int64_t endNs)
{
    if (m_hasRange)
        compareRanges(m_rangeStart, m_rangeEnd, startNs, endNs);
    else
        selectRange(startNs, endNs); // no range A yet: this one becomes it
}

void LiveSessionView::compareRanges(int64_t startA, int64_t endA, int64_t startB, int64_t endB)
{
    m_hasRange = true;
    m_rangeStart = startB;
    m_rangeEnd = endB;
    m_request.scope = LiveScope::SelectedRange;
    m_request.rangeStartNs = startB;
    m_request.rangeEndNs = endB;
    m_scope->setCurrentIndex(static_cast<int>(LiveScope::SelectedRange));
    showSelection(std::pair(startB, endB));
    pinBaselineRange(startA, endA);
}

void LiveSessionView::setCompare(engine::LiveCompareRequest compare)
{
    m_compare->setCurrentIndex(compareChoice(compare));
    const bool rangeBaseline =
        compare.mode == LiveCompareMode::Baseline && compare.baseline.kind == LiveBaseline::Kind::TimeRange;
    showComparedRange(rangeBaseline ? std::optional(std::pair(compare.baseline.startNs, compare.baseline.endNs))
                                    : std::nullopt);
    // "Previous flush" compares the two newest flushes whatever the scope says.
    m_scope->setEnabled(compare.mode != LiveCompareMode::PreviousFlush);
    m_request.compare = std::move(compare);
    sendRequest();
}

void LiveSessionView::showExplorerForMode(engine::LiveCompareMode mode)
{
    QWidget *shown = mode == LiveCompareMode::Off ? static_cast<QWidget *>(m_explorer) : m_compareExplorer;
    if (m_explorerStack->currentWidget() != shown)
        m_explorerStack->setCurrentWidget(shown);
}

void LiveSessionView::applyComparison(const engine::LiveUpdate &update)
{
    const engine::Profile &profile = *update.snapshot->profile;
    m_compareExplorer->setSampleTypes(profile, update.request.sampleType >= 0 ? update.request.sampleType
                                                                              : initialSampleType(profile));
    if (!update.comparison.comparison) {
        m_compareExplorer->showUnavailable(QString::fromStdString(update.compareError));
        m_analysisShown = true; // the message is what this flush shows
        reportShownIfComplete();
        return;
    }
    m_compareExplorer->showComparison(update.comparison.comparison, QString::fromStdString(update.comparison.baseLabel),
                                      QString::fromStdString(update.comparison.newLabel));
}

} // namespace emberline::ui
