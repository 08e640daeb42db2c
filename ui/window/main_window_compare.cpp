// The main window's comparisons: File > Compare…, "Compare With…" on a tab (menu and tab context menu), and the
// compare tabs they open.
#include "ui/window/main_window.h"

#include "ui/common/logging.h"
#include "ui/dialogs/compare_dialog.h"
#include "ui/views/compare/compare_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"
#include "ui/views/live/live_session_view.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>

namespace emberline::ui {
namespace {

// The profile a tab shows, when it shows one already loaded (a file's tab, a live session's tab).
ProfileExplorer *explorerOf(QWidget *tab)
{
    if (auto *view = qobject_cast<ProfileView *>(tab))
        return view->explorer();
    if (auto *live = qobject_cast<LiveSessionView *>(tab))
        return live->explorer();
    return nullptr;
}

} // namespace

void MainWindow::createCompareActions(QMenu *file)
{
    m_compareAction = file->addAction(tr("Co&mpare…"), this, [this] { showCompareDialog(); });
    m_compareAction->setObjectName(QStringLiteral("compareAction"));
    m_compareAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    m_compareWithAction =
        file->addAction(tr("Compare &With…"), this, [this] { compareTabWith(m_tabs->currentIndex()); });
    m_compareWithAction->setObjectName(QStringLiteral("compareWithAction"));
    m_compareWithAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    m_compareWithAction->setToolTip(tr("Compare the current tab's profile (new) with another profile (base)"));
    m_tabs->tabBar()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_tabs->tabBar(), &QWidget::customContextMenuRequested, this, &MainWindow::showTabMenu);
}

void MainWindow::showTabMenu(const QPoint &pos)
{
    const int index = m_tabs->tabBar()->tabAt(pos);
    if (index < 0)
        return;
    QMenu menu(this);
    menu.setObjectName(QStringLiteral("tabMenu"));
    QAction *compare = menu.addAction(tr("Compare With…"), this, [this, index] { compareTabWith(index); });
    compare->setEnabled(explorerOf(m_tabs->widget(index)) != nullptr);
    menu.addAction(tr("Close Tab"), this, [this, index] { closeTab(index); });
    menu.exec(m_tabs->tabBar()->mapToGlobal(pos));
}

QDialog *MainWindow::showCompareDialog()
{
    auto *dialog = new CompareDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (ProfileView *view = currentProfileView())
        dialog->setNewPath(view->path());
    connect(dialog, &QDialog::accepted, this,
            [this, dialog] { openComparison(dialog->basePath(), dialog->newPath()); });
    dialog->open();
    return dialog;
}

void MainWindow::compareTabWith(int index)
{
    if (!explorerOf(m_tabs->widget(index))) {
        statusBar()->showMessage(tr("Compare With… needs a tab that shows a loaded profile"), 5000);
        return;
    }
    const QString base = QFileDialog::getOpenFileName(this, tr("Compare With (Base)"), QString(),
                                                      tr("Profiles (*.pprof *.pb.gz *.pb *.prof);;All files (*)"));
    if (!base.isEmpty())
        compareTabWith(index, base);
}

void MainWindow::compareTabWith(int index, const QString &basePath)
{
    ProfileExplorer *explorer = explorerOf(m_tabs->widget(index));
    if (!explorer)
        return;
    // The tab's profile as it is now (a live session's latest state); it is not read again.
    openComparison(basePath, explorer->loaded().path, explorer->loadedProfile());
}

CompareView *MainWindow::openComparison(const QString &basePath, const QString &newPath,
                                        std::shared_ptr<const engine::LoadedProfile> loadedNew)
{
    const QString base = QFileInfo(basePath).absoluteFilePath();
    const QString next = newPath.isEmpty() ? newPath : QFileInfo(newPath).absoluteFilePath();
    qCDebug(lcUiWindow) << "comparing" << next << "with base" << base;
    auto *view = new CompareView(base, next, std::move(loadedNew), m_tabs);
    connect(view, &CompareView::closeRequested, this, [this, view] { closeView(view); });
    connect(view, &CompareView::loadFinished, this, [this, view](bool ok) {
        statusBar()->showMessage(ok ? tr("Comparing %1").arg(view->title())
                                    : tr("Could not compare %1").arg(view->title()),
                                 ok ? 5000 : 10000);
    });
    const int tab = m_tabs->addTab(view, view->title());
    m_tabs->setTabToolTip(tab, tr("New: %1\nBase: %2").arg(next, base));
    m_tabs->setCurrentIndex(tab);
    view->load();
    updateCentralWidget();
    return view;
}

CompareView *MainWindow::currentCompareView() const
{
    return qobject_cast<CompareView *>(m_tabs->currentWidget());
}

} // namespace emberline::ui
