// MainWindow's View actions that give the views room and readable names, the session actions, and Help >
// Keyboard Shortcuts, a page made from the menus themselves (so it lists every shortcut the window has).
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/views/compare/compare_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/live/live_session_view.h"
#include "ui/window/main_window.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSettings>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace emberline::ui {
namespace {

QString withoutMnemonic(QString text)
{
    return text.remove(QRegularExpression(QStringLiteral("&(?!&)"))).remove(QStringLiteral("…"));
}

// Every action with a shortcut under `menu`, submenus included, as rows of `tree` under a row for the menu.
void addMenuShortcuts(QTreeWidget *tree, QTreeWidgetItem *parent, const QMenu *menu)
{
    for (QAction *action : menu->actions()) {
        if (action->menu()) {
            addMenuShortcuts(tree, parent, action->menu());
            continue;
        }
        if (action->shortcut().isEmpty())
            continue;
        auto *row = new QTreeWidgetItem(
            parent, {withoutMnemonic(action->text()), action->shortcut().toString(QKeySequence::NativeText)});
        row->setToolTip(0, action->toolTip());
    }
}

} // namespace

void MainWindow::createViewActions(QMenu *view)
{
    QAction *sandwich = view->addAction(tr("Show Callers and Callees (S&andwich)"), this, [this] {
        if (ProfileExplorer *explorer = currentExplorer())
            explorer->showSandwich();
    });
    sandwich->setObjectName(QStringLiteral("showSandwichAction"));
    sandwich->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    view->addSeparator();
    QAction *maximize = view->addAction(tr("&Maximize Detail View"), this, [this] {
        if (ProfileExplorer *explorer = currentExplorer())
            explorer->setDetailsMaximized(!explorer->isDetailsMaximized());
    });
    maximize->setObjectName(QStringLiteral("maximizeDetailsMenuAction"));
    maximize->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
    maximize->setToolTip(tr("Source, Disassembly, Sandwich or Callers / Callees take the whole tab, or give the "
                            "room back"));
    QAction *timelines = view->addAction(tr("Collapse &Timelines"), this, [this] {
        if (LiveSessionView *live = currentLiveView())
            live->setTimelinesCollapsed(!live->timelinesCollapsed());
    });
    timelines->setObjectName(QStringLiteral("collapseTimelinesAction"));
    timelines->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T));
    timelines->setToolTip(tr("A live session's timelines shrink to a strip (or come back), for the flame graph"));
    QAction *shortNames = view->addAction(tr("Short Function &Names"));
    shortNames->setObjectName(QStringLiteral("shortNamesAction"));
    shortNames->setCheckable(true);
    shortNames->setChecked(QSettings().value(QStringLiteral("view/shortNames"), true).toBool());
    shortNames->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N));
    shortNames->setToolTip(tr("Label frames without parameter lists and with template arguments folded; "
                              "tooltips and tables keep the full names"));
    connect(shortNames, &QAction::toggled, this, &MainWindow::setShortNames);
    QAction *interpreter = view->addAction(tr("Python &Interpreter Frames"));
    interpreter->setObjectName(QStringLiteral("interpreterFramesAction"));
    interpreter->setCheckable(true);
    interpreter->setChecked(ProfileExplorer::interpreterFramesShownByDefault());
    interpreter->setToolTip(
        tr("Show CPython's own frames (its eval loop, and the calls it passes on) among the Python "
           "frames they ran, for those debugging the interpreter. Sessions started while this is on "
           "keep them; profiles recorded with them (record --python-interpreter-frames) show or "
           "hide them"));
    connect(interpreter, &QAction::toggled, this, &MainWindow::setInterpreterFramesShown);
}

void MainWindow::createSessionActions(QMenu *profile)
{
    QAction *stop = profile->addAction(tr("S&top Session"), this, [this] {
        if (LiveSessionView *live = currentLiveView(); live && live->isActive())
            live->stop();
    });
    stop->setObjectName(QStringLiteral("stopSessionAction"));
    stop->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
}

void MainWindow::setShortNames(bool shortNames)
{
    QSettings().setValue(QStringLiteral("view/shortNames"), shortNames);
    // Every flame graph of every tab, the differential ones of compare tabs included.
    for (FlameGraphView *flame : m_tabs->findChildren<FlameGraphView *>())
        flame->setShortNames(shortNames);
}

void MainWindow::setInterpreterFramesShown(bool shown)
{
    QSettings().setValue(QStringLiteral("view/interpreterFrames"), shown);
    for (ProfileExplorer *explorer : m_tabs->findChildren<ProfileExplorer *>())
        explorer->setInterpreterFramesShown(shown);
}

void MainWindow::showShortcuts()
{
    auto *dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("shortcutsDialog"));
    dialog->setWindowTitle(tr("Keyboard Shortcuts"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    auto *tree = new QTreeWidget(dialog);
    tree->setObjectName(QStringLiteral("shortcutsTree"));
    tree->setHeaderLabels({tr("Action"), tr("Shortcut")});
    tree->setRootIsDecorated(false);
    tree->setAlternatingRowColors(true);
    for (QAction *menuAction : menuBar()->actions()) {
        if (!menuAction->menu())
            continue;
        auto *section = new QTreeWidgetItem(tree, {withoutMnemonic(menuAction->text())});
        QFont bold = section->font(0);
        bold.setBold(true);
        section->setFont(0, bold);
        section->setFirstColumnSpanned(true);
        addMenuShortcuts(tree, section, menuAction->menu());
    }
    // Keys of the views themselves, not of a menu.
    auto *inViews = new QTreeWidgetItem(tree, {tr("In the flame graph and tables")});
    QFont bold = inViews->font(0);
    bold.setBold(true);
    inViews->setFont(0, bold);
    inViews->setFirstColumnSpanned(true);
    const std::pair<QString, QString> keys[] = {
        {tr("Reset zoom (the whole profile)"), QKeySequence(Qt::Key_Escape).toString(QKeySequence::NativeText)},
        {tr("Zoom out one level"), QKeySequence(Qt::Key_Backspace).toString(QKeySequence::NativeText)},
        {tr("Next tab / previous tab"), tr("Ctrl+Tab / Ctrl+Shift+Tab")},
        {tr("Compare a second time range (on a timeline)"), tr("Shift+drag")},
    };
    for (const auto &[what, key] : keys)
        new QTreeWidgetItem(inViews, {what, key});
    tree->expandAll();
    tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    auto *layout = new QVBoxLayout(dialog);
    layout->addWidget(tree);
    layout->addWidget(buttons);
    dialog->resize(560, 640);
    dialog->show();
}

} // namespace emberline::ui
