#include "ui/window/main_window.h"

#include "ui/common/logging.h"
#include "ui/common/source_roots.h"
#include "ui/dialogs/source_roots_dialog.h"
#include "ui/upload/session_upload.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/compare/compare_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"
#include "ui/views/live/live_session_view.h"
#include "ui/views/widgets/start_page.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>

namespace emberline::ui {
namespace {

QStringList localFiles(const QMimeData *mime)
{
    QStringList files;
    if (!mime || !mime->hasUrls())
        return files;
    for (const QUrl &url : mime->urls()) {
        if (url.isLocalFile())
            files << url.toLocalFile();
    }
    return files;
}

} // namespace

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent)
{
    setupUi();
    createActions();
    connectSignals();
}

void MainWindow::setupUi()
{
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true);
    m_central = new QStackedWidget(this);
    m_startPage = new StartPage(m_central);
    m_tabs = new QTabWidget(m_central);
    m_tabs->setObjectName(QStringLiteral("profileTabs"));
    m_tabs->setTabsClosable(true);
    m_tabs->setMovable(true);
    m_tabs->setDocumentMode(true);
    m_central->addWidget(m_startPage);
    m_central->addWidget(m_tabs);
    setCentralWidget(m_central);
    statusBar()->setObjectName(QStringLiteral("statusBar"));
    // 1400×900, or the screen's available room when it is smaller (a laptop at 2× scale has 800×500 or so).
    QSize size(1400, 900);
    if (const QScreen *screen = QGuiApplication::primaryScreen())
        size = size.boundedTo(screen->availableGeometry().size());
    resize(size);
    restoreGeometry(QSettings().value(QStringLiteral("window/geometry")).toByteArray());
    m_startPage->setRecentFiles(m_recent.files());
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(tr("&Open…"), this, &MainWindow::showOpenDialog);
    m_openAction->setObjectName(QStringLiteral("openAction"));
    m_openAction->setShortcut(QKeySequence::Open);
    m_openSessionAction = file->addAction(tr("Open &Session…"), this, &MainWindow::chooseSessionFolder);
    m_openSessionAction->setObjectName(QStringLiteral("openSessionAction"));
    m_openSessionAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_recentMenu->setObjectName(QStringLiteral("recentMenu"));
    createCompareActions(file);
    createExportActions(file);
    file->addSeparator();
    m_closeTabAction = file->addAction(tr("&Close Tab"), this, [this] { closeTab(m_tabs->currentIndex()); });
    m_closeTabAction->setObjectName(QStringLiteral("closeTabAction"));
    m_closeTabAction->setShortcut(QKeySequence::Close);
    m_quitAction = file->addAction(tr("&Quit"), this, &QWidget::close);
    m_quitAction->setObjectName(QStringLiteral("quitAction"));
    m_quitAction->setShortcut(QKeySequence::Quit);

    QMenu *profile = menuBar()->addMenu(tr("&Profile"));
    m_profileAction = profile->addAction(tr("&Profile Process…"), this, [this] { showProfileDialog(); });
    m_profileAction->setObjectName(QStringLiteral("profileProcessAction"));
    m_profileAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    QAction *demo = profile->addAction(tr("Try the &Demo Program"), this, [this] { startDemo(); });
    demo->setObjectName(QStringLiteral("demoAction"));
    demo->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    createSessionActions(profile);
    profile->addSeparator();
    m_uploadAction = profile->addAction(tr("&Upload Flushes to Datadog"));
    m_uploadAction->setObjectName(QStringLiteral("uploadAction"));
    m_uploadAction->setCheckable(true);
    m_uploadAction->setToolTip(tr("Send the current session's next flushes to Datadog, or keep them on disk only"));

    QMenu *view = menuBar()->addMenu(tr("&View"));
    m_findAction = view->addAction(tr("&Find Frame…"), this, [this] {
        if (ProfileExplorer *explorer = currentExplorer())
            explorer->focusSearch();
        else if (CompareView *compare = currentCompareView(); compare && compare->explorer())
            compare->explorer()->focusSearch();
    });
    m_findAction->setObjectName(QStringLiteral("findAction"));
    m_findAction->setShortcut(QKeySequence::Find);
    m_resetZoomAction = view->addAction(tr("&Reset Zoom"), this, [this] {
        if (ProfileExplorer *explorer = currentExplorer())
            explorer->resetZoom();
        else if (CompareView *compare = currentCompareView(); compare && compare->explorer())
            compare->explorer()->resetZoom();
    });
    m_resetZoomAction->setObjectName(QStringLiteral("resetZoomMenuAction"));
    view->addSeparator();
    QAction *source = view->addAction(tr("Show &Source"), this, [this] {
        if (ProfileExplorer *explorer = currentExplorer())
            explorer->showSource();
    });
    source->setObjectName(QStringLiteral("showSourceAction"));
    source->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_U));
    QAction *disassembly = view->addAction(tr("Show &Disassembly"), this, [this] {
        if (ProfileExplorer *explorer = currentExplorer())
            explorer->showDisassembly();
    });
    disassembly->setObjectName(QStringLiteral("showDisassemblyAction"));
    disassembly->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_U));
    createViewActions(view);
    view->addSeparator();
    view->addAction(tr("Source R&oots…"), this, &MainWindow::editSourceRoots)
        ->setObjectName(QStringLiteral("sourceRootsAction"));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    QAction *shortcuts = help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
    shortcuts->setObjectName(QStringLiteral("shortcutsAction"));
    shortcuts->setShortcut(QKeySequence::HelpContents);
    m_aboutAction = help->addAction(tr("&About Emberline"), this, &MainWindow::showAbout);
    m_aboutAction->setObjectName(QStringLiteral("aboutAction"));
    rebuildRecentMenu();
}

void MainWindow::connectSignals()
{
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    connect(m_startPage, &StartPage::openRequested, this, &MainWindow::showOpenDialog);
    connect(m_startPage, &StartPage::profileRequested, this, [this] { showProfileDialog(); });
    connect(m_startPage, &StartPage::demoRequested, this, [this] { startDemo(); });
    connect(m_startPage, &StartPage::recentFileActivated, this, [this](const QString &path) { openFiles({path}); });
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::updateWindowTitle);
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::updateUploadAction);
    connect(m_uploadAction, &QAction::toggled, this, [this](bool on) {
        if (LiveSessionView *live = currentLiveView(); live && live->upload())
            live->upload()->setSubmitting(on);
    });
    updateCentralWidget(); // the start page, until a file is opened
    updateUploadAction();
}

void MainWindow::showOpenDialog()
{
    const QString filter = tr("Profiles (*.pprof *.pb.gz *.pb *.prof perf.data perf.data.* *.perf *.folded "
                              "*.collapsed *.txt);;pprof (*.pprof *.pb.gz *.pb *.prof);;perf.data (perf.data "
                              "perf.data.*);;perf script text or folded stacks (*.perf *.folded *.collapsed *.txt);;"
                              "All files (*)");
    const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Open Profiles"), QString(), filter);
    openFiles(paths);
}

void MainWindow::openFiles(const QStringList &paths)
{
    for (const QString &path : paths) {
        const QString absolute = QFileInfo(path).absoluteFilePath();
        bool alreadyOpen = false;
        for (int i = 0; i < m_tabs->count(); ++i) {
            ProfileView *view = profileViewAt(i);
            if (view && view->path() == absolute && view->state() != ProfileView::State::Failed) {
                m_tabs->setCurrentIndex(i);
                alreadyOpen = true;
            }
        }
        if (alreadyOpen)
            continue;
        qCDebug(lcUiWindow) << "opening" << absolute;
        auto *view = new ProfileView(absolute, m_tabs);
        connect(view, &ProfileView::loadFinished, this, [this, view](bool ok) { onLoadFinished(view, ok); });
        connect(view, &ProfileView::closeRequested, this, [this, view] { closeView(view); });
        const int index = m_tabs->addTab(view, QFileInfo(absolute).fileName());
        m_tabs->setTabToolTip(index, absolute);
        m_tabs->setCurrentIndex(index);
        view->load();
    }
    updateCentralWidget();
}

ProfileView *MainWindow::currentProfileView() const
{
    return qobject_cast<ProfileView *>(m_tabs->currentWidget());
}

ProfileView *MainWindow::profileViewAt(int index) const
{
    return qobject_cast<ProfileView *>(m_tabs->widget(index));
}

void MainWindow::onLoadFinished(ProfileView *view, bool ok)
{
    if (ok) {
        m_recent.add(view->path());
        if (view->notice().isEmpty())
            statusBar()->showMessage(tr("Opened %1").arg(view->path()), 5000);
        else
            statusBar()->showMessage(tr("Opened %1. %2").arg(view->path(), view->notice()), 10000);
    } else {
        statusBar()->showMessage(tr("Could not open %1").arg(view->path()), 10000);
    }
    m_startPage->setRecentFiles(m_recent.files());
}

void MainWindow::closeTab(int index)
{
    if (QWidget *view = m_tabs->widget(index))
        closeView(view);
}

void MainWindow::closeView(QWidget *view)
{
    if (auto *live = qobject_cast<LiveSessionView *>(view); live && live->isActive()) {
        // The tab goes once the session's last flush is written.
        connect(live, &LiveSessionView::sessionEnded, this, [this, live] { closeView(live); });
        live->stop();
        return;
    }
    const int index = m_tabs->indexOf(view);
    if (index < 0)
        return;
    m_tabs->removeTab(index);
    view->deleteLater();
    updateCentralWidget();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = m_recent.files();
    for (const QString &path : files)
        m_recentMenu->addAction(path, this, [this, path] { openFiles({path}); });
    if (files.isEmpty())
        m_recentMenu->addAction(tr("No recent files"))->setEnabled(false);
    m_recentMenu->addSeparator();
    QAction *clear = m_recentMenu->addAction(tr("Clear Recent Files"), this, [this] {
        m_recent.clear();
        m_startPage->setRecentFiles({});
    });
    clear->setObjectName(QStringLiteral("clearRecentAction"));
    clear->setEnabled(!files.isEmpty());
}

void MainWindow::updateCentralWidget()
{
    m_central->setCurrentWidget(m_tabs->count() > 0 ? static_cast<QWidget *>(m_tabs) : m_startPage);
    m_closeTabAction->setEnabled(m_tabs->count() > 0);
    updateWindowTitle();
}

void MainWindow::updateWindowTitle()
{
    const ProfileView *view = currentProfileView();
    const LiveSessionView *live = currentLiveView();
    if (const CompareView *compare = currentCompareView())
        setWindowTitle(tr("%1 — Emberline").arg(compare->title()));
    else if (live)
        setWindowTitle(tr("%1 (live) — Emberline").arg(live->title()));
    else
        setWindowTitle(view ? tr("%1 — Emberline").arg(QFileInfo(view->path()).fileName()) : tr("Emberline"));
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (!localFiles(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    const QStringList files = localFiles(event->mimeData());
    if (files.isEmpty())
        return;
    event->acceptProposedAction();
    openFiles(files);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    // The window closes at once, however long a session's end (its merged profile) takes.
    stopSessions();
    QSettings().setValue(QStringLiteral("window/geometry"), saveGeometry());
    QMainWindow::closeEvent(event);
}

void MainWindow::editSourceRoots()
{
    SourceRoots roots;
    SourceRootsDialog dialog(roots.folders(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    roots.setFolders(dialog.folders());
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (ProfileView *view = profileViewAt(i); view && view->explorer())
            view->explorer()->refreshSource();
    }
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Emberline"),
                       tr("<b>Emberline %1</b><p>A desktop profiler for native Linux programs. It profiles "
                          "programs live and opens pprof profiles, and shows them as flame graphs, tables and "
                          "timelines.</p>")
                           .arg(QStringLiteral(EMBERLINE_VERSION)));
}

} // namespace emberline::ui
