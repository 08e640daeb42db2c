#pragma once

#include "engine/session/profiling_session.h"
#include "ui/views/live_updater.h"

#include <QElapsedTimer>
#include <QWidget>

#include <map>
#include <memory>

class QComboBox;
class QLabel;
class QPushButton;
class QSplitter;
class QStackedWidget;

namespace emberline::ui {

class ProfileExplorer;
class SessionStatusBar;
class SessionUpload;
class TimelineView;

// One live session in a tab: Stop, Pause and Resume, a switch between the whole session so far, the last flush
// and a selected time range, the live numbers, the timelines and, once the first flush is in, the same
// explorer (flame graph, top functions, caller/callee) that files open in, refreshed after every flush without
// losing the user's zoom, selection or search. When the session ends (stopped, target exited or crashed, or
// failed) the views keep everything and a message says what happened; the session's folder can then be saved
// elsewhere or its merged profile opened in the viewer. A session started with upload on also has an Upload
// tab beside the explorer: every flush's upload and the uploader's counts (live_session_upload.cpp).
//
// Thread: GUI thread. It owns the ProfilingSession (the engine thread) and the LiveUpdater (workers).
class LiveSessionView : public QWidget {
    Q_OBJECT
public:
    explicit LiveSessionView(engine::ProfilingSession *session, QWidget *parent = nullptr);
    ~LiveSessionView() override;

    engine::ProfilingSession *session() const { return m_session; }
    ProfileExplorer *explorer() const { return m_explorer; }
    TimelineView *timeline() const { return m_timeline; }
    LiveUpdater *updater() const { return m_updater; }
    QString title() const;
    QString sessionDirectory() const { return m_session->outputDirectory(); }
    QString message() const;
    bool isActive() const { return m_session->isActive(); }
    LiveScope scope() const { return m_updater->scope(); }

    void stop();
    void setScope(LiveScope scope);
    void selectRange(int64_t startNs, int64_t endNs);
    // Takes ownership of the session's uploader and shows its Upload tab.
    void attachUpload(SessionUpload *upload);
    SessionUpload *upload() const { return m_upload; }
    // Copies the session's folder (every flush and the merged profile) into `directory`; an error message or "".
    QString saveSessionTo(const QString &directory) const;

Q_SIGNALS:
    // The flame graph, the tables and the timelines show the state after flush `sequence`, latencyMs after it
    // arrived.
    void viewsUpdated(uint32_t sequence, double latencyMs);
    void sessionEnded();
    void openProfileRequested(const QString &path);
    void titleChanged();

private:
    void setupUi();
    QWidget *createToolbar();
    void connectSignals();
    void onFlush(const std::shared_ptr<const engine::Flush> &flush);
    void onViewReady(std::shared_ptr<const LiveViewData> data);
    void warmUpExplorer();
    void onAnalysisApplied();
    void reportShownIfComplete();
    void onFinished(const engine::SessionSummary &summary);
    void onFailed(const QString &message);
    void showMessage(const QString &text, bool problem);
    void updateButtons();
    void chooseSaveDirectory();
    void updateUploadCounts();

    engine::ProfilingSession *m_session = nullptr;
    LiveUpdater *m_updater = nullptr;
    ProfileExplorer *m_explorer = nullptr;     // null until the first flush is shown
    ProfileExplorer *m_warmExplorer = nullptr; // built before the session starts, adopted by the first flush
    TimelineView *m_timeline = nullptr;
    SessionStatusBar *m_status = nullptr;
    QLabel *m_message = nullptr;
    QStackedWidget *m_explorerStack = nullptr;
    QLabel *m_waiting = nullptr;
    QSplitter *m_splitter = nullptr;
    QPushButton *m_stop = nullptr;
    QPushButton *m_pause = nullptr;
    QPushButton *m_resume = nullptr;
    QComboBox *m_scope = nullptr;
    QPushButton *m_save = nullptr;
    QPushButton *m_openProfile = nullptr;
    bool m_hasRange = false;
    int64_t m_rangeStart = 0;
    int64_t m_rangeEnd = 0;

    QElapsedTimer m_clock;
    std::map<uint32_t, qint64> m_flushArrivalMs; // by flush sequence, until the views show it
    std::shared_ptr<const LoadedProfile> m_shownLoaded;
    uint32_t m_shownSequence = 0;
    bool m_analysisShown = false; // of m_shownSequence
    bool m_timelineShown = false;
    SessionUpload *m_upload = nullptr;
    QLabel *m_uploadCounts = nullptr;
};

} // namespace emberline::ui
