// MainWindow: live sessions (the Profile Process dialog, the demo, sessions from the command line), session
// folders, and stopping sessions before the window closes.
#include "ui/window/main_window.h"

#include "engine/session/profiling_session.h"
#include "ui/common/logging.h"
#include "ui/dialogs/profile_process_dialog.h"
#include "ui/upload/session_upload.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"
#include "ui/views/live/live_session_view.h"
#include "ui/views/widgets/start_page.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>

namespace emberline::ui {

LiveSessionView *MainWindow::liveViewAt(int index) const
{
    return qobject_cast<LiveSessionView *>(m_tabs->widget(index));
}

LiveSessionView *MainWindow::currentLiveView() const
{
    return qobject_cast<LiveSessionView *>(m_tabs->currentWidget());
}

ProfileExplorer *MainWindow::currentExplorer() const
{
    if (const ProfileView *view = currentProfileView())
        return view->explorer();
    if (const LiveSessionView *live = currentLiveView())
        return live->explorer();
    return nullptr;
}

ProfileProcessDialog *MainWindow::showProfileDialog()
{
    if (!m_profileDialog) {
        m_profileDialog = new ProfileProcessDialog(this);
        connect(m_profileDialog, &ProfileProcessDialog::sessionStarted, this,
                [this](engine::ProfilingSession *session) { addLiveView(session, m_profileDialog->uploadSettings()); });
    }
    m_profileDialog->show();
    m_profileDialog->raise();
    m_profileDialog->activateWindow();
    return m_profileDialog;
}

LiveSessionView *MainWindow::startSession(engine::SessionConfig config)
{
    config.pythonInterpreterFrames =
        config.pythonInterpreterFrames || ProfileExplorer::interpreterFramesShownByDefault();
    auto *session = new engine::ProfilingSession(std::move(config));
    LiveSessionView *view = addLiveView(session);
    session->start();
    return view;
}

QString MainWindow::demoProgramPath()
{
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("emberline-demo"));
}

LiveSessionView *MainWindow::startDemo()
{
    const QString demo = demoProgramPath();
    if (!QFileInfo(demo).isExecutable()) {
        QMessageBox::warning(this, tr("Demo Program"),
                             tr("The demo program was not found at %1. It is installed next to emberline.").arg(demo));
        return nullptr;
    }
    engine::SessionConfig config;
    config.command = {demo.toStdString(), "60"};
    config.frequency = 199;
    config.flushPeriodNs = 1'000'000'000; // a first flame graph after one second
    return startSession(std::move(config));
}

LiveSessionView *MainWindow::addLiveView(engine::ProfilingSession *session,
                                         std::optional<engine::UploadSettings> upload)
{
    auto *view = new LiveSessionView(session, m_tabs);
    if (upload)
        attachUpload(view, std::move(*upload));
    const int index = m_tabs->addTab(view, tr("● %1").arg(view->title()));
    m_tabs->setTabToolTip(index, tr("Live session; flushes are written to %1").arg(view->sessionDirectory()));
    m_tabs->setCurrentIndex(index);
    connect(view, &LiveSessionView::openProfileRequested, this, [this](const QString &path) { openFiles({path}); });
    connect(view, &LiveSessionView::sessionEnded, this, [this, view] {
        const int at = m_tabs->indexOf(view);
        if (at >= 0)
            m_tabs->setTabText(at, view->title());
        // The session's folder opens again from the start page and File > Open Recent.
        m_recent.add(view->sessionDirectory());
        m_startPage->setRecentFiles(m_recent.files());
    });
    qCDebug(lcUiWindow) << "live session into" << view->sessionDirectory();
    updateCentralWidget();
    updateUploadAction();
    return view;
}

void MainWindow::attachUpload(LiveSessionView *view, engine::UploadSettings settings)
{
    auto upload = SessionUpload::create(std::move(settings), view->session());
    if (!upload) {
        statusBar()->showMessage(
            tr("This session is not uploaded: %1").arg(QString::fromStdString(upload.error().message)), 15000);
        return;
    }
    view->attachUpload(upload.value());
    statusBar()->showMessage(tr("Uploading every flush to %1").arg(upload.value()->endpoint()), 10000);
    connect(upload.value(), &SessionUpload::submittingChanged, this, &MainWindow::updateUploadAction);
}

void MainWindow::updateUploadAction()
{
    const LiveSessionView *live = currentLiveView();
    SessionUpload *upload = live ? live->upload() : nullptr;
    const QSignalBlocker blocker(m_uploadAction);
    m_uploadAction->setEnabled(upload != nullptr);
    m_uploadAction->setChecked(upload && upload->isSubmitting());
}

void MainWindow::chooseSessionFolder()
{
    const QString sessions = engine::ProfilingSession::sessionsDirectory();
    QDir().mkpath(sessions);
    const QString directory = QFileDialog::getExistingDirectory(this, tr("Open Session"), sessions);
    if (!directory.isEmpty())
        openSessionFolder(directory);
}

void MainWindow::openSessionFolder(const QString &directory)
{
    // The folder opens as one profile: its profile.pprof, or (after a crash) its flushes merged, on a worker
    // like any file; a folder that holds no profile fails there with a message.
    openFiles({directory});
}

void MainWindow::stopSessions()
{
    // Only flags: each session ends on its own thread, which finishes its last flush and profile.pprof even
    // once the window (and the session's facade) is gone; the application waits for it at exit.
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (LiveSessionView *live = liveViewAt(i); live && live->isActive())
            live->stop();
    }
}

} // namespace emberline::ui
