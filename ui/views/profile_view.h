#pragma once

#include "engine/model/analysis.h"

#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QSplitter;
class QStackedWidget;

namespace emberline::ui {

class HeatmapPanel;
class HeatmapRunner;
class ProfileExplorer;
class ProfileLoader;

// One tab: a profile file (or a session folder) through its life. While loading it shows the file name, a progress bar and Cancel;
// if loading fails it shows the error (which names the file and the problem) with Retry and Close; once loaded
// it shows a ProfileExplorer, with the sub-second heatmap above it when the samples carry timestamps (a range
// selected on it filters the explorer's views to that time).
//
// Thread: GUI thread; loading runs on a worker through ProfileLoader.
class ProfileView : public QWidget {
    Q_OBJECT
public:
    enum class State { Loading, Failed, Ready };

    explicit ProfileView(const QString &path, QWidget *parent = nullptr);

    void load();
    const QString &path() const { return m_path; }
    State state() const { return m_state; }
    QString errorMessage() const;
    // How a session folder was read (merged from its flushes, files skipped); empty for a plain file.
    QString notice() const;
    ProfileExplorer *explorer() const { return m_explorer; }
    // Null until the profile is loaded; hidden when its samples carry no timestamps.
    HeatmapPanel *heatmap() const { return m_heatmap; }

Q_SIGNALS:
    void loadFinished(bool ok);
    void closeRequested();

private:
    void setupUi();
    void connectSignals();
    QWidget *createLoadingPage();
    QWidget *createErrorPage();
    void onLoaded(std::shared_ptr<const engine::LoadedProfile> loaded);
    void onFailed(const QString &message);
    void createReadyPage(std::shared_ptr<const engine::LoadedProfile> loaded);
    void requestHeatmap();

    QString m_path;
    State m_state = State::Loading;
    ProfileLoader *m_loader = nullptr;
    QStackedWidget *m_stack = nullptr;
    QLabel *m_notice = nullptr;
    QWidget *m_loadingPage = nullptr;
    QLabel *m_loadingLabel = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_cancel = nullptr;
    QWidget *m_errorPage = nullptr;
    QLabel *m_errorLabel = nullptr;
    QPushButton *m_retry = nullptr;
    QPushButton *m_close = nullptr;
    ProfileExplorer *m_explorer = nullptr;
    std::shared_ptr<const engine::LoadedProfile> m_loaded;
    QSplitter *m_readyPage = nullptr;
    HeatmapPanel *m_heatmap = nullptr;
    HeatmapRunner *m_heatmapRunner = nullptr;
};

} // namespace emberline::ui
