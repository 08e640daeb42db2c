#include "ui/views/memory/memory_summary_view.h"

#include "ui/common/value_text.h"
#include "ui/views/memory/functions_over_time.h"
#include "ui/views/memory/memory_scope.h"

#include <QHeaderView>
#include <QLabel>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace emberline::ui {
namespace {

constexpr size_t kOverTimeFunctions = 6; // lines in the Over time chart

QString bytes(int64_t value)
{
    return valueText(value, "bytes");
}

QString count(int64_t value)
{
    return valueText(value, "count");
}

// The summary of a live session's scope. A scope that ends with the session's last flush shows its in-use values as
// what they are: the leaks, what the programs still held when they ended.
MemorySummaryView::Shown liveSummary(const engine::LoadedProfile &scope, const engine::LiveSelection &selection,
                                     const std::atomic<bool> *cancel)
{
    const engine::LiveSnapshot &snapshot = *scope.live;
    const engine::Profile &profile = *scope.profile;
    const engine::MemoryByStack values = scopeMemory(scope, cancel);
    const std::optional<engine::FullestFlush> fullest = fullestFlushIn(snapshot, selection);
    const std::vector<const engine::TimelineChunk *> flushes = flushesIn(snapshot, selection);
    MemorySummaryView::Shown shown;
    if (!selection.coversAllTime()) {
        const auto seconds = [&](int64_t ns) { return static_cast<double>(ns - snapshot.startNs) / 1e9; };
        shown.range = MemorySummaryView::tr("between %1 s and %2 s: ")
                          .arg(seconds(std::max(selection.startNs, snapshot.startNs)), 0, 'f', 1)
                          .arg(seconds(std::min(selection.endNs, snapshot.endNs)), 0, 'f', 1);
    }
    shown.inUseAt = flushes.empty()
                        ? MemorySummaryView::tr("in use at its end (no flush ends in it)")
                        : MemorySummaryView::tr("in use at the end of flush %1").arg(flushes.back()->sequence);
    const int column = engine::inUseBytesColumn(snapshot);
    if (!flushes.empty() && column >= 0) {
        shown.inUseMargin = std::max(0.0, flushes.back()->inUseBytesMargin);
        const std::vector<int64_t> &totals = flushes.back()->memory.totals();
        shown.inUseWhole = static_cast<size_t>(column) < totals.size() ? totals[static_cast<size_t>(column)] : 0;
    }
    if (!flushes.empty() && flushes.back()->final)
        shown.inUseAt = MemorySummaryView::tr("still in use when the program ended (its leaks)");
    shown.summary = std::make_shared<const engine::HeapSummary>(
        engine::summarizeHeap(profile, *scope.frames, values, fullest ? &*fullest : nullptr));
    // The largest holders at the end (or, when nothing is held then, at the fullest flush): their history.
    const std::vector<engine::HeapSummaryRow> &holders =
        shown.summary->leaks.empty() ? shown.summary->peak : shown.summary->leaks;
    std::vector<std::string> functions;
    for (size_t i = 0; i < holders.size() && functions.size() < kOverTimeFunctions; ++i)
        functions.push_back(holders[i].function);
    shown.overTime = engine::inUseOverFlushes(snapshot, *scope.frames, flushes, functions, cancel);
    shown.sessionStartNs = snapshot.startNs;
    return shown;
}

} // namespace

MemorySummaryView::MemorySummaryView(QWidget *parent) : QWidget(parent)
{
    setupUi();
}

void MemorySummaryView::setupUi()
{
    setObjectName(QStringLiteral("memorySummary"));
    m_headline = new QLabel(tr("Summing up the memory…"), this);
    m_headline->setObjectName(QStringLiteral("memorySummaryHeadline"));
    m_headline->setWordWrap(true);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("memorySummaryTabs"));
    m_tabs->setDocumentMode(true);
    struct Spec {
        const char *name;
        QString title;
        QString tip;
        QStringList columns;
    };
    const Spec specs[5] = {
        {"peakList",
         tr("Peak"),
         tr("What each function held when the heap was largest (a live session's peak flush)"),
         {tr("Function"), tr("At peak"), tr("Objects"), tr("Allocated"), tr("Stacks")}},
        {"leaksList",
         tr("Leaks"),
         tr("What is still in use at the end: the newest flush of a running session, what a finished session's "
            "programs never freed, a heap profile's in-use memory"),
         {tr("Function"), tr("In use"), tr("Objects"), tr("Allocated"), tr("Stacks")}},
        {"allocationsList",
         tr("Most allocations"),
         tr("The functions that allocate most often"),
         {tr("Function"), tr("Allocations"), tr("Allocated"), tr("In use"), tr("Stacks")}},
        {"shortLivedList",
         tr("Short-lived"),
         tr("Allocations no longer in use at the end: functions that allocate often and keep little"),
         {tr("Function"), tr("Freed"), tr("Allocations"), tr("In use"), tr("Stacks")}},
        {"sizesList",
         tr("Sizes"),
         tr("The allocations by block size, in power-of-two classes: many small blocks are the allocator's busiest "
            "work; a few large ones, its largest"),
         {tr("Block size"), tr("Allocations"), tr("Share"), tr("Allocated"), tr("Share"), tr("Within 1 ms")}},
    };
    for (int i = 0; i < 5; ++i) {
        auto *list = new QTreeWidget(m_tabs);
        list->setObjectName(QLatin1String(specs[i].name));
        list->setRootIsDecorated(false);
        list->setUniformRowHeights(true);
        list->setHeaderLabels(specs[i].columns);
        list->header()->setStretchLastSection(false);
        list->header()->setSectionResizeMode(0, QHeaderView::Stretch);
        for (int c = 1; c < specs[i].columns.size(); ++c)
            list->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
        m_lists[i] = list;
        const int tab = m_tabs->addTab(list, specs[i].title);
        m_tabs->setTabToolTip(tab, specs[i].tip);
    }
    m_overTime = new FunctionsOverTime(m_tabs);
    const int overTime = m_tabs->addTab(m_overTime, tr("Over time"));
    m_tabs->setTabToolTip(overTime, tr("What the largest holders at the end held at the end of each flush: a line that "
                                       "only climbs is a leak's"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_headline);
    layout->addWidget(m_tabs, 1);
}

QString MemorySummaryView::headline() const
{
    return m_headline->text();
}

void MemorySummaryView::showProfile(const std::shared_ptr<const engine::LoadedProfile> &loaded)
{
    if (!loaded || !loaded->profile || !loaded->frames)
        return;
    m_job.run(
        [loaded](const std::atomic<bool> *cancel) {
            const engine::MemoryByStack values = engine::memoryByStack(*loaded->profile, cancel);
            Shown shown;
            shown.summary = std::make_shared<const engine::HeapSummary>(
                engine::summarizeHeap(*loaded->profile, *loaded->frames, values));
            shown.inUseAt = tr("in use at the end");
            return shown;
        },
        [this](const Shown &shown) { apply(shown); });
}

void MemorySummaryView::showLive(const std::shared_ptr<const engine::LoadedProfile> &scope,
                                 const engine::LiveSelection &selection)
{
    if (!scope || !scope->profile || !scope->frames || !scope->live)
        return;
    m_job.run([scope, selection](const std::atomic<bool> *cancel) { return liveSummary(*scope, selection, cancel); },
              [this](const Shown &shown) { apply(shown); });
}

void MemorySummaryView::apply(const Shown &shown)
{
    m_summary = shown.summary;
    const engine::HeapSummary &s = *m_summary;
    const QString inUse =
        shown.inUseMargin > 0 && s.inuseBytes > 0 && s.inuseBytes == shown.inUseWhole
            ? tr("%1 (\u00b1%2, sampling's 95% range)").arg(bytes(s.inuseBytes), bytes(std::llround(shown.inUseMargin)))
            : bytes(s.inuseBytes);
    QString text =
        shown.range + tr("allocated %1 in %2 allocations; %3 in %4 objects %5.")
                          .arg(bytes(s.allocBytes), count(s.allocObjects), inUse, count(s.inuseObjects), shown.inUseAt);
    text[0] = text[0].toUpper();
    if (s.fullestFlush)
        text += QLatin1Char(' ') + tr("Largest at a flush's end: %1, flush %2.")
                                       .arg(bytes(s.fullestFlush->bytes))
                                       .arg(s.fullestFlush->flushSequence);
    m_headline->setText(text);
    fill(Peak, s.peak);
    fill(Leaks, s.leaks);
    fill(Allocations, s.allocations);
    fill(ShortLived, s.temporary);
    fillSizes(s);
    m_overTime->setSeries(shown.overTime, shown.sessionStartNs);
    // Emberline's own sessions know each sampled block's lifetime; other memory profiles tell only what was
    // allocated and what is still in use.
    m_lists[ShortLived]->headerItem()->setText(1, s.temporaryByLifetime ? tr("Within 1 ms") : tr("Freed"));
    m_tabs->setTabToolTip(
        ShortLived,
        s.temporaryByLifetime
            ? tr("Allocations freed within 1 ms of being made (heaptrack's temporary allocations), from the sampled "
                 "allocations' lifetimes: functions that churn through memory they do not keep")
            : tr("Allocations no longer in use at the end: functions that allocate often and keep little (this "
                 "profile does not tell lifetimes)"));
    m_tabs->setTabEnabled(Peak, s.fullestFlush.has_value());
    if (!s.fullestFlush && m_tabs->currentIndex() == Peak)
        m_tabs->setCurrentIndex(Leaks);
    m_tabs->setTabEnabled(Sizes, !s.sizes.empty());
    m_tabs->setTabEnabled(kOverTimeTab, !shown.overTime.empty());
    if ((s.sizes.empty() && m_tabs->currentIndex() == Sizes) ||
        (shown.overTime.empty() && m_tabs->currentIndex() == kOverTimeTab))
        m_tabs->setCurrentIndex(Leaks);
    Q_EMIT summaryShown();
}

void MemorySummaryView::fill(List which, const std::vector<engine::HeapSummaryRow> &rows)
{
    QTreeWidget *list = m_lists[which];
    list->setUpdatesEnabled(false);
    list->clear();
    for (const engine::HeapSummaryRow &row : rows) {
        QStringList cells{QString::fromStdString(row.function)};
        switch (which) {
        case Peak:
        case Leaks:
            // A heap that no sample saw ("[heap no sample saw]") is known in bytes alone: its blocks are not counted.
            cells << bytes(row.value)
                  << (row.inuseObjects == 0 && row.value > 0 ? QStringLiteral("—") : count(row.inuseObjects))
                  << bytes(row.allocBytes);
            break;
        case Allocations:
            cells << count(row.value) << bytes(row.allocBytes) << bytes(row.inuseBytes);
            break;
        case ShortLived:
        case Sizes: // fillSizes
            cells << count(row.value) << count(row.allocObjects) << count(row.inuseObjects);
            break;
        }
        cells << QString::number(row.stacks);
        auto *item = new QTreeWidgetItem(list, cells);
        for (int c = 1; c < cells.size(); ++c)
            item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        QStringList path;
        for (const std::string &frame : row.path)
            path << QString::fromStdString(frame);
        item->setToolTip(
            0,
            tr("Largest stack, from the allocating function outwards:\n%1").arg(path.join(QStringLiteral("\n  ← "))));
    }
    list->setUpdatesEnabled(true);
}

void MemorySummaryView::fillSizes(const engine::HeapSummary &summary)
{
    QTreeWidget *list = m_lists[Sizes];
    list->setUpdatesEnabled(false);
    list->clear();
    list->setColumnHidden(5, !summary.temporaryByLifetime);
    int64_t objects = 0;
    int64_t allocated = 0;
    for (const engine::SizeClassRow &row : summary.sizes) {
        objects += row.allocObjects;
        allocated += row.allocBytes;
    }
    const auto share = [](int64_t part, int64_t whole) {
        if (whole <= 0)
            return QString();
        const double percent = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
        // Some, but less than the one decimal place shows.
        return part > 0 && percent < 0.05 ? QStringLiteral("<0.1%") : QStringLiteral("%1%").arg(percent, 0, 'f', 1);
    };
    for (const engine::SizeClassRow &row : summary.sizes) {
        const QString size = sizeClassText(row.sizeClass);
        QStringList cells{size,
                          count(row.allocObjects),
                          share(row.allocObjects, objects),
                          bytes(row.allocBytes),
                          share(row.allocBytes, allocated),
                          share(row.shortLivedObjects, row.allocObjects)};
        auto *item = new QTreeWidgetItem(list, cells);
        for (int c = 1; c < cells.size(); ++c)
            item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        item->setToolTip(0, tr("Blocks of %1").arg(sizeClassRange(row.sizeClass)));
        item->setToolTip(5, tr("Of this class's allocations, the share freed within 1 ms of being made"));
    }
    list->setUpdatesEnabled(true);
}

QString MemorySummaryView::sizeClassText(uint8_t sizeClass)
{
    // A power of two in its own unit: 512 B, 1 KiB, 64 MiB.
    const auto power = [](int k) {
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        return QStringLiteral("%1 %2").arg(uint64_t(1) << (k % 10)).arg(QLatin1String(units[k / 10]));
    };
    if (sizeClass == 0)
        return tr("0 B");
    return QStringLiteral("\u2264 %1").arg(power(std::min<int>(sizeClass, 63)));
}

QString MemorySummaryView::sizeClassRange(uint8_t sizeClass)
{
    if (sizeClass == 0)
        return tr("0 bytes (malloc(0))");
    if (sizeClass <= 3)
        return tr("1 to 8 bytes");
    const uint64_t upper = uint64_t(1) << std::min<int>(sizeClass, 63);
    return tr("%1 to %2 bytes").arg(upper / 2 + 1).arg(upper);
}

} // namespace emberline::ui
