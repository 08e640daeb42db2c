#pragma once

#include "ui/recent_files.h"

#include <QMainWindow>

class QAction;
class QMenu;
class QStackedWidget;
class QTabWidget;

namespace emberline::ui {

class ProfileView;
class StartPage;

// The application window. It coordinates: opens files into tabs (File > Open, Open Recent, drag and drop, the
// command line all end in openFiles()), shows the start page when no tab is open, and routes window-wide
// actions (Find, Reset Zoom, Close Tab) to the current tab. It computes nothing.
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
    void closeView(ProfileView *view);
    void onLoadFinished(ProfileView *view, bool ok);
    void updateCentralWidget();
    void updateWindowTitle();
    void showAbout();

    RecentFiles m_recent;
    QStackedWidget *m_central = nullptr;
    StartPage *m_startPage = nullptr;
    QTabWidget *m_tabs = nullptr;
    QMenu *m_recentMenu = nullptr;
    QAction *m_openAction = nullptr;
    QAction *m_closeTabAction = nullptr;
    QAction *m_quitAction = nullptr;
    QAction *m_findAction = nullptr;
    QAction *m_resetZoomAction = nullptr;
    QAction *m_aboutAction = nullptr;
};

} // namespace emberline::ui
