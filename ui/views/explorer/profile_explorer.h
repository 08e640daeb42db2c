#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/derived_profile.h"
#include "engine/analysis/heatmap.h"
#include "ui/views/widgets/fitting_tab_widget.h"

#include <QWidget>

#include <memory>
#include <optional>

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QPushButton;
class QStackedWidget;
class QSplitter;
class QTabWidget;
class QTimer;
class QToolButton;

namespace emberline::ui {

using engine::Analysis;
using engine::AnalysisRequest;
using engine::LoadedProfile;

class AnalysisRunner;
class BreadcrumbBar;
class CallerCalleeView;
class LabelStrip;
class FlameGraphView;
class SourceRunner;
class SourceView;
class DisassemblyView;
class MemorySummaryView;
class SandwichView;
class ThreadFilterButton;
class TransformChainBar;
class TopFunctionsView;

// Everything shown for one loaded profile: the sample-type selector, the thread filter, the flame-graph search,
// the flame graph with its breadcrumb, the top-functions table, the caller/callee and source tabs and a status
// line. It keeps the user's choices (sample type, threads, selected function, zoom path, the transform chain and
// the bottom-up toggle) and asks its runners for the matching derivations; it never derives anything itself.
// A chain that leaves no sample replaces the views with a message until a step is removed.
//
// Thread: GUI thread.
class ProfileExplorer : public QWidget {
    Q_OBJECT
public:
    explicit ProfileExplorer(std::shared_ptr<const LoadedProfile> loaded, QWidget *parent = nullptr);

    const LoadedProfile &loaded() const { return *m_loaded; }
    const std::shared_ptr<const LoadedProfile> &loadedProfile() const { return m_loaded; }
    // Shows another profile of the same kind (a live session's next state) and keeps the user's sample type,
    // zoom path, selected function, search and table sorting; the frames are matched by name. An analysis of it
    // made elsewhere (a live session's stage) is shown as it is when it answers the explorer's own choice of
    // sample type and threads; otherwise the explorer asks for one.
    void setLoaded(std::shared_ptr<const LoadedProfile> loaded, std::shared_ptr<const Analysis> analysis = nullptr);
    int sampleType() const;
    // A live session filters threads in its timeline; its explorer hides its own thread filter.
    void setThreadFilterVisible(bool visible);
    std::vector<uint32_t> selectedThreads() const;
    // Shows only the samples taken in [startNs, endNs) (a heatmap's selection); nullopt shows every sample.
    void setTimeRange(std::optional<engine::TimeRange> range);
    std::shared_ptr<const Analysis> analysis() const { return m_analysis; }
    bool isAnalysing() const;
    FlameGraphView *flameGraph() const { return m_flame; }
    void focusSearch();
    void resetZoom();
    void selectFrame(uint32_t frame);
    uint32_t selectedFrame() const { return m_selectedFrame; }
    // The frame table of what the views show (the shaped profile's when transforms or bottom-up apply).
    const engine::FrameTable &shownFrames() const;

    // Transforms, applied in order on a worker, with the thread filter, time range and sample type.
    const engine::ProfileShape &shape() const { return m_shape; }
    void addTransform(engine::Transform step);
    void removeTransform(int index);
    void clearTransforms();
    void setBottomUp(bool bottomUp);
    TransformChainBar *transformChain() const { return m_chain; }
    // The Python interpreter's own frames, in a profile whose recording kept them (LoadedProfile::interpreterFrames):
    // hidden by a HideInterpreter step first in the chain, which the explorer puts there when the first such profile
    // comes unless View > Python Interpreter Frames is on (interpreterFramesShownByDefault). Showing them removes the
    // step, hiding them puts it back (a profile without such frames is left as it is).
    void setInterpreterFramesShown(bool shown);
    bool hidesInterpreterFrames() const;
    static bool interpreterFramesShownByDefault();
    // The message shown instead of the views (a chain that leaves no sample); empty when the views show.
    QString message() const;
    // The context menu of a frame (Show Source, then the transforms), not yet shown.
    QMenu *createFrameMenu(uint32_t frame);
    SourceView *sourceView() const { return m_source; }
    // Shows the source tab (and builds the selected function's listing if it is not yet shown).
    void showSource();
    // Builds the source listing again (the source roots changed).
    void refreshSource();
    bool isBuildingSource() const;
    SandwichView *sandwichView() const { return m_sandwich; }
    // Shows the sandwich tab (and builds the selected function's sandwich if it is not yet shown).
    void showSandwich();
    bool isBuildingSandwich() const;
    // Shows the disassembly tab (the selected function's instructions, from the binary found by build id).
    void showDisassembly();
    DisassemblyView *disassemblyView() const { return m_disassembly; }
    // --- room to read (profile_explorer_room.cpp)
    // The detail tabs (Callers / Callees, Source, Sandwich, Disassembly) take the whole explorer, the flame graph
    // and the top-functions table hidden, or give the room back. The corner button of the tabs and the window's
    // View > Maximize Detail View (Ctrl+M) both toggle it.
    void setDetailsMaximized(bool maximized);
    bool isDetailsMaximized() const;
    QAction *maximizeDetailsAction() const { return m_maximizeDetails; }
    QTabWidget *detailTabs() const { return m_details; }
    // The flame graph takes the height its rows need, at most this share of the room it shares with the tables
    // (a deep profile scrolls); the user's last share, remembered under `settingsGroup`, replaces the default.
    // Splitter positions are remembered under the same group ("explorer" for files, "liveExplorer" for sessions).
    void setRoomSettings(const QString &settingsGroup, double defaultFlameShare);
    double flameShare() const { return m_flameShare; }
    // However shallow its profile, the flame graph pane keeps at least this height while its share of the room
    // allows it (a live session asks for half of its tab: the graph is what a session is watched for).
    void setMinimumFlameHeight(int pixels);
    int flamePaneHeight() const;
    // Frames labelled with short C++ names in the flame graph (View > Short Function Names).
    void setShortNames(bool shortNames);

    // The Memory tab of a memory profile opened from a file; null for other profiles and live sessions (whose
    // summary is in their Memory tab).
    MemorySummaryView *memorySummary() const { return m_memorySummary; }

Q_SIGNALS:
    void analysisApplied();
    // The user chose another sample type.
    void sampleTypeChanged(int sampleType);
    // The user chose other threads in the thread filter.
    void threadsChanged();
    void detailsMaximizedChanged(bool maximized);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void setupUi();
    void createRoomActions();
    void connectRoomSignals();
    void fitFlameGraph();
    void scheduleFit();
    void restoreSplitters();
    void saveSplitters();
    // Brings the hottest line (Source) or instruction (Disassembly) back into view after the room changed.
    void showHottestDetail();
    void createActions();
    void connectSignals();
    QWidget *createToolbar();
    void fillSampleTypes();
    void updateSampleTypeTip();
    QWidget *createTablesPane();
    void requestAnalysis();
    void applyAnalysis(std::shared_ptr<const Analysis> analysis);
    void requestCallerCallee();
    void requestSource();
    void requestSandwich();
    void requestDisassembly();
    void refreshDetails();
    void connectTransformSignals();
    void createMessagePage();
    void showMessage(const QString &message);
    // What to say when the transforms leave samples, but none in the chosen threads or time range; else empty.
    QString emptyShapeMessage() const;
    void onAnalysisFailed(const QString &message);
    void showFrameMenu(uint32_t frame, const QPoint &globalPos);
    void setShape(engine::ProfileShape shape);
    void settleInterpreterFrames();
    void translateSelection(const std::shared_ptr<const engine::FrameTable> &to);
    void updateBreadcrumb();
    void updateSearchLabel(int64_t matchedTotal, double share, size_t matchedFrames);
    void updateStatusLine();
    void updateMemorySummary();

    std::shared_ptr<const LoadedProfile> m_loaded;
    std::shared_ptr<const Analysis> m_analysis;
    // The last analysis of the profile as loaded (no shape): a transform's call tree is made from its tree.
    std::shared_ptr<const Analysis> m_untransformed;
    uint32_t m_selectedFrame = UINT32_MAX;
    std::optional<engine::TimeRange> m_timeRange;
    engine::ProfileShape m_shape;
    bool m_interpreterSettled = false; // the chain's interpreter step was decided (settleInterpreterFrames)

    AnalysisRunner *m_runner = nullptr;
    QComboBox *m_sampleType = nullptr;
    ThreadFilterButton *m_threads = nullptr;
    QLineEdit *m_search = nullptr;
    QTimer *m_searchDelay = nullptr;
    QLabel *m_searchResult = nullptr;
    QToolButton *m_icicle = nullptr;
    QToolButton *m_bottomUp = nullptr;
    TransformChainBar *m_chain = nullptr;
    QStackedWidget *m_viewStack = nullptr; // the views, or the message page
    QLabel *m_message = nullptr;
    QPushButton *m_undoTransform = nullptr;
    QToolButton *m_resetZoom = nullptr;
    BreadcrumbBar *m_breadcrumb = nullptr;
    FlameGraphView *m_flame = nullptr;
    TopFunctionsView *m_topFunctions = nullptr;
    CallerCalleeView *m_callerCallee = nullptr;
    FittingTabWidget *m_details = nullptr;
    SourceView *m_source = nullptr;
    SourceRunner *m_sourceRunner = nullptr;
    SandwichView *m_sandwich = nullptr;
    bool m_sandwichStale = true;
    DisassemblyView *m_disassembly = nullptr;
    MemorySummaryView *m_memorySummary = nullptr;
    bool m_disassemblyStale = true;
    bool m_sourceStale = true; // the source tab does not show the selected function in the current analysis
    QSplitter *m_splitter = nullptr;
    QSplitter *m_tablesSplitter = nullptr;
    QWidget *m_graphPane = nullptr;
    QToolButton *m_maximizeButton = nullptr;
    QAction *m_maximizeDetails = nullptr;
    QTimer *m_fitTimer = nullptr;
    QString m_settingsGroup = QStringLiteral("explorer");
    double m_flameShare = 0.6;
    int m_flameFloor = 0;     // setMinimumFlameHeight
    QList<int> m_tablesSizes; // the tables' sizes before the details took the room
    LabelStrip *m_status = nullptr;
};

} // namespace emberline::ui
