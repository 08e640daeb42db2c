// ProfileExplorer's room: the detail tabs maximized and back, the flame graph's height following its rows, and
// the splitter positions remembered in QSettings.
#include "ui/flamegraph/breadcrumb_bar.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/views/explorer/disassembly_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/source_view.h"
#include "ui/views/explorer/top_functions_view.h"
#include "ui/views/widgets/fitting_tab_widget.h"

#include <QAction>
#include <QEvent>
#include <QLayout>
#include <QSettings>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>

#include <algorithm>

namespace emberline::ui {
namespace {

// The least the flame graph pane keeps: the breadcrumb and about three rows.
constexpr int kMinimumGraphPane = 110;
constexpr double kMinimumShare = 0.15;
constexpr double kMaximumShare = 0.9;

} // namespace

void ProfileExplorer::createRoomActions()
{
    // Short, for the corner of the tab bar, and shorter still ("⤢") when the tabs need the room; the tooltip and
    // the View menu say it whole.
    m_maximizeDetails = new QAction(tr("⤢ Maximize"), this);
    m_maximizeDetails->setObjectName(QStringLiteral("maximizeDetailsAction"));
    m_maximizeDetails->setCheckable(true);
    m_maximizeDetails->setToolTip(tr("Give the detail tabs the whole tab, or give the flame graph and the table "
                                     "their room back (Ctrl+M)"));
    m_details->setCornerAction(m_maximizeDetails, QStringLiteral("maximizeDetailsButton"));
    m_maximizeButton = m_details->cornerButton();
    m_fitTimer = new QTimer(this);
    m_fitTimer->setSingleShot(true);
    m_fitTimer->setInterval(0);
    m_splitter->installEventFilter(this);
    m_breadcrumb->installEventFilter(this);
    restoreSplitters();
}

void ProfileExplorer::connectRoomSignals()
{
    connect(m_maximizeDetails, &QAction::toggled, this, &ProfileExplorer::setDetailsMaximized);
    connect(m_fitTimer, &QTimer::timeout, this, &ProfileExplorer::fitFlameGraph);
    // Zoom and every new tree change the rows shown.
    connect(m_flame, &FlameGraphView::zoomChanged, this, &ProfileExplorer::scheduleFit);
    connect(m_splitter, &QSplitter::splitterMoved, this, [this] {
        const QList<int> sizes = m_splitter->sizes();
        const int total = sizes.value(0) + sizes.value(1);
        if (total > 0 && m_graphPane->isVisible())
            m_flameShare = std::clamp(double(sizes.value(0)) / total, kMinimumShare, kMaximumShare);
        saveSplitters();
    });
    connect(m_tablesSplitter, &QSplitter::splitterMoved, this, &ProfileExplorer::saveSplitters);
}

void ProfileExplorer::setRoomSettings(const QString &settingsGroup, double defaultFlameShare)
{
    m_settingsGroup = settingsGroup;
    m_flameShare = defaultFlameShare;
    restoreSplitters();
    scheduleFit();
}

void ProfileExplorer::restoreSplitters()
{
    QSettings settings;
    settings.beginGroup(m_settingsGroup);
    m_flameShare =
        std::clamp(settings.value(QStringLiteral("flameShare"), m_flameShare).toDouble(), kMinimumShare, kMaximumShare);
    const QByteArray tables = settings.value(QStringLiteral("tablesSplitter")).toByteArray();
    if (!tables.isEmpty())
        m_tablesSplitter->restoreState(tables);
}

void ProfileExplorer::saveSplitters()
{
    QSettings settings;
    settings.beginGroup(m_settingsGroup);
    settings.setValue(QStringLiteral("flameShare"), m_flameShare);
    if (!isDetailsMaximized())
        settings.setValue(QStringLiteral("tablesSplitter"), m_tablesSplitter->saveState());
}

void ProfileExplorer::setMinimumFlameHeight(int pixels)
{
    if (pixels == m_flameFloor)
        return;
    m_flameFloor = pixels;
    scheduleFit();
}

int ProfileExplorer::flamePaneHeight() const
{
    return m_graphPane->isHidden() ? 0 : m_graphPane->height();
}

bool ProfileExplorer::isDetailsMaximized() const
{
    return m_graphPane->isHidden();
}

void ProfileExplorer::setDetailsMaximized(bool maximized)
{
    if (isDetailsMaximized() == maximized)
        return;
    {
        const QSignalBlocker blocker(m_maximizeDetails); // its toggled() is what calls this function
        m_maximizeDetails->setChecked(maximized);
    }
    if (maximized)
        m_tablesSizes = m_tablesSplitter->sizes();
    m_graphPane->setVisible(!maximized);
    m_topFunctions->setVisible(!maximized);
    if (!maximized && !m_tablesSizes.isEmpty())
        m_tablesSplitter->setSizes(m_tablesSizes);
    m_maximizeDetails->setText(maximized ? tr("⤡ Restore") : tr("⤢ Maximize"));
    scheduleFit();
    // After the new room is laid out, the hottest line is centred in it.
    QTimer::singleShot(0, this, &ProfileExplorer::showHottestDetail);
    Q_EMIT detailsMaximizedChanged(maximized);
}

void ProfileExplorer::showHottestDetail()
{
    if (m_details->currentWidget() == m_source)
        m_source->scrollToHottest();
    else if (m_details->currentWidget() == m_disassembly)
        m_disassembly->scrollToHottest();
}

void ProfileExplorer::setShortNames(bool shortNames)
{
    m_flame->setShortNames(shortNames);
}

bool ProfileExplorer::eventFilter(QObject *watched, QEvent *event)
{
    if ((watched == m_splitter || watched == m_breadcrumb) && event->type() == QEvent::Resize)
        scheduleFit(); // after the splitter has shared out its new height
    return QWidget::eventFilter(watched, event);
}

void ProfileExplorer::scheduleFit()
{
    m_fitTimer->start();
}

void ProfileExplorer::fitFlameGraph()
{
    if (m_graphPane->isHidden() || m_flame->layout().isEmpty())
        return;
    const QList<int> sizes = m_splitter->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    if (total <= 0)
        return;
    // The pane's height is the flame graph's rows plus what sits above them (the breadcrumb); a shallow profile
    // gives the rest to the tables, a deep one takes its share and scrolls.
    // Before the breadcrumb is first laid out, a line of text stands for it; its first resize fits again.
    const int breadcrumb = m_breadcrumb->height() > 0
                               ? m_breadcrumb->height()
                               : std::max(m_breadcrumb->sizeHint().height(), fontMetrics().height() + 8);
    const int wanted = m_flame->contentHeightHint() + m_graphPane->layout()->spacing() + breadcrumb;
    const int room = static_cast<int>(m_flameShare * total);
    const int graph =
        std::max({std::min(wanted, room), std::min(m_flameFloor, room), std::min(kMinimumGraphPane, total / 2)});
    if (std::abs(graph - sizes.value(0)) <= 1)
        return;
    m_splitter->setSizes({graph, total - graph});
}

} // namespace emberline::ui
