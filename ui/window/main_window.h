#pragma once

#include "engine/analysis/analysis.h"
#include "engine/session/record_session.h"
#include "engine/upload/upload_settings.h"
#include "ui/common/recent_files.h"

#include <QMainWindow>

#include <memory>
#include <optional>

class QAction;
class QDialog;
class QMenu;
class QStackedWidget;
class QTabWidget;

namespace emberline::engine {
class ProfilingSession;
}

namespace emberline::ui {

class CompareView;
class LiveSessionView;
class ProfileExplorer;
class ProfileProcessDialog;
class ProfileView;
class StartPage;
class ViewExporter;

// The application window. It coordinates: opens files into tabs (File > Open, Open Recent, drag and drop, the
// command line all end in openFiles()), starts live sessions into tabs (Profile > Profile Process…, the demo on
// the start page, --record and --attach all end in addLiveView()), gives a session started with upload on its
// uploader and lets Profile > Upload Flushes pause and resume it for the current tab, shows the start page when no tab
// is open, and routes window-wide actions (Find, Reset Zoom, Close Tab) to the current tab. Closing the window during a
// session stops it and closes at once: the session ends on its own thread (last flush, profile.pprof) and the
// application waits for it only at exit. It computes nothing.
//
// Thread: GUI thread.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);

    // Opens each file in a tab (or switches to the tab already showing it).
    void openFiles(const QStringList &paths);
    QTabWidget *tabs() const { return m_tabs; }
    ProfileView *currentProfileView() const;
    ProfileView *profileViewAt(int index) const;
    LiveSessionView *liveViewAt(int index) const;
    LiveSessionView *currentLiveView() const;
    ProfileExplorer *currentExplorer() const;

    // Opens the Profile Process dialog (non-modal); returns it so that callers and tests can drive it.
    ProfileProcessDialog *showProfileDialog();
    // Starts a session straight into a tab (the command line's --record and --attach, the demo).
    LiveSessionView *startSession(engine::SessionConfig config);
    LiveSessionView *startDemo();
    // The bundled demo program, next to the emberline binary.
    static QString demoProgramPath();
    // Opens a compare tab of two profiles (files or session folders); `loadedNew` is the new profile when a tab
    // already holds it. File > Compare…, "Compare With…" and --diff all end here.
    CompareView *openComparison(const QString &basePath, const QString &newPath,
                                std::shared_ptr<const engine::LoadedProfile> loadedNew = nullptr);
    CompareView *currentCompareView() const;
    // File > Compare…: the dialog (non-modal); returns it so that callers and tests can drive it.
    QDialog *showCompareDialog();
    // "Compare With…" on the tab at `index`: its profile is the new one, the chosen file the base.
    void compareTabWith(int index);
    void compareTabWith(int index, const QString &basePath);
    // Opens a session folder's merged profile (or its last flush when the session never finished).
    void openSessionFolder(const QString &directory);

protected:
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;
    void closeEvent(QCloseEvent *event) override;

private:
    void setupUi();
    void createActions();
    void connectSignals();
    void showOpenDialog();
    void rebuildRecentMenu();
    void closeTab(int index);
    void closeView(QWidget *view);
    void onLoadFinished(ProfileView *view, bool ok);
    void updateCentralWidget();
    void updateWindowTitle();
    void showAbout();
    // View > Source Roots…: edits the folders sources are looked up under, then lists the sources again.
    void editSourceRoots();
    LiveSessionView *addLiveView(engine::ProfilingSession *session,
                                 std::optional<engine::UploadSettings> upload = std::nullopt);
    void attachUpload(LiveSessionView *view, engine::UploadSettings settings);
    void updateUploadAction();
    void chooseSessionFolder();
    void stopSessions();
    // View > Sandwich, Maximize Detail View, Short Function Names, Collapse Timelines; Profile > Stop Session;
    // Help > Keyboard Shortcuts (main_window_view.cpp).
    void createViewActions(QMenu *view);
    void createSessionActions(QMenu *profile);
    void showShortcuts();
    void setShortNames(bool shortNames);
    void setInterpreterFramesShown(bool shown);
    void createCompareActions(QMenu *file);
    void createExportActions(QMenu *file);
    // File > Export: the current tab's flame graph as SVG (svg) or PNG, and its view as pprof.
    void exportFlameGraph(bool svg);
    void saveViewAsPprof();
    void showTabMenu(const QPoint &pos);

    RecentFiles m_recent;
    QStackedWidget *m_central = nullptr;
    StartPage *m_startPage = nullptr;
    QTabWidget *m_tabs = nullptr;
    ViewExporter *m_exporter = nullptr;
    QMenu *m_recentMenu = nullptr;
    QAction *m_openAction = nullptr;
    QAction *m_profileAction = nullptr;
    QAction *m_openSessionAction = nullptr;
    QAction *m_compareAction = nullptr;
    QAction *m_compareWithAction = nullptr;
    QAction *m_uploadAction = nullptr;
    ProfileProcessDialog *m_profileDialog = nullptr;
    QAction *m_closeTabAction = nullptr;
    QAction *m_quitAction = nullptr;
    QAction *m_findAction = nullptr;
    QAction *m_resetZoomAction = nullptr;
    QAction *m_aboutAction = nullptr;
};

} // namespace emberline::ui
