#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/heatmap.h"

#include <QWidget>

class QLabel;
class QSplitter;
class QStackedWidget;

namespace emberline::ui {

class CompareExplorer;
class HeatmapPanel;
class HeatmapRunner;
class LoadErrorPage;
class LoadingPage;
class ProfileExplorer;
class ProfileLoader;

// One tab: a profile file (or a session folder) through its life. While loading it shows the file name, a progress bar
// and Cancel; if loading fails it shows the error (which names the file and the problem) with Retry and Close; once
// loaded it shows a ProfileExplorer, with the sub-second heatmap above it when the samples carry timestamps (a range
// selected on it filters the explorer's views to that time). A second range (Shift+drag on the heatmap) compares
// range B with range A: a CompareExplorer over the profile takes the explorer's place until a new range A is
// selected or the selection is cleared (Esc).
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
    // Range B against range A; null until two ranges were compared. Shown while they are.
    CompareExplorer *rangeCompare() const { return m_rangeCompare; }
    bool isComparingRanges() const;

Q_SIGNALS:
    void loadFinished(bool ok);
    void closeRequested();

private:
    void setupUi();
    void connectSignals();
    void onLoaded(std::shared_ptr<const engine::LoadedProfile> loaded);
    void onFailed(const QString &message);
    void createReadyPage(std::shared_ptr<const engine::LoadedProfile> loaded);
    void requestHeatmap();
    void compareRanges(engine::TimeRange a, engine::TimeRange b);
    void showExplorer();

    QString m_path;
    State m_state = State::Loading;
    ProfileLoader *m_loader = nullptr;
    QStackedWidget *m_stack = nullptr;
    QLabel *m_notice = nullptr;
    LoadingPage *m_loadingPage = nullptr;
    LoadErrorPage *m_errorPage = nullptr;
    ProfileExplorer *m_explorer = nullptr;
    std::shared_ptr<const engine::LoadedProfile> m_loaded;
    QSplitter *m_readyPage = nullptr;
    HeatmapPanel *m_heatmap = nullptr;
    HeatmapRunner *m_heatmapRunner = nullptr;
    QStackedWidget *m_views = nullptr; // the explorer, or the range comparison
    CompareExplorer *m_rangeCompare = nullptr;
};

} // namespace emberline::ui
