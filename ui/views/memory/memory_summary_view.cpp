#include "ui/views/memory/memory_summary_view.h"

#include "ui/common/value_text.h"

#include <QHeaderView>
#include <QLabel>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace emberline::ui {
namespace {

QString bytes(int64_t value)
{
    return valueText(value, "bytes");
}

QString count(int64_t value)
{
    return valueText(value, "count");
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
    const Spec specs[4] = {
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
    };
    for (int i = 0; i < 4; ++i) {
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
            return std::make_shared<const engine::HeapSummary>(
                engine::summarizeHeap(*loaded->profile, *loaded->frames, values));
        },
        [this](std::shared_ptr<const engine::HeapSummary> summary) { apply(std::move(summary)); });
}

void MemorySummaryView::showLive(const std::shared_ptr<const engine::LiveSnapshot> &snapshot,
                                 const std::shared_ptr<const engine::FrameTable> &frames)
{
    if (!snapshot || !snapshot->profile || !frames)
        return;
    m_job.run(
        [snapshot, frames](const std::atomic<bool> *cancel) {
            const engine::MemoryByStack values = engine::memoryByStack(*snapshot->profile, cancel);
            const std::optional<engine::MemoryPeak> peak = engine::livePeak(*snapshot);
            return std::make_shared<const engine::HeapSummary>(
                engine::summarizeHeap(*snapshot->profile, *frames, values, peak ? &*peak : nullptr));
        },
        [this](std::shared_ptr<const engine::HeapSummary> summary) { apply(std::move(summary)); });
}

void MemorySummaryView::apply(std::shared_ptr<const engine::HeapSummary> summary)
{
    m_summary = std::move(summary);
    const engine::HeapSummary &s = *m_summary;
    QString text = tr("Allocated %1 in %2 allocations; %3 in %4 objects in use at the end.")
                       .arg(bytes(s.allocBytes), count(s.allocObjects), bytes(s.inuseBytes), count(s.inuseObjects));
    if (s.peakAt)
        text += QLatin1Char(' ') +
                tr("Peak: %1 at the end of flush %2.").arg(bytes(s.peakAt->bytes)).arg(s.peakAt->flushSequence);
    m_headline->setText(text);
    fill(Peak, s.peak);
    fill(Leaks, s.leaks);
    fill(Allocations, s.allocations);
    fill(ShortLived, s.temporary);
    m_tabs->setTabEnabled(Peak, s.peakAt.has_value());
    if (!s.peakAt && m_tabs->currentIndex() == Peak)
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
            cells << bytes(row.value) << count(row.inuseObjects) << bytes(row.allocBytes);
            break;
        case Allocations:
            cells << count(row.value) << bytes(row.allocBytes) << bytes(row.inuseBytes);
            break;
        case ShortLived:
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

} // namespace emberline::ui
