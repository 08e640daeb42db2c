#pragma once

#include "engine/export/flush.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "engine/live/live_profile.h"
#include "engine/live/live_selection.h"
#include "ui/views/profile_analysis.h"

#include <QObject>
#include <QThreadPool>

#include <memory>

namespace emberline::ui {

struct FrameCache;

// What a live session's views show: the whole session so far, the last flush, or a selected time range.
enum class LiveScope { WholeSession, LastFlush, SelectedRange };

// The state after one more flush: the snapshot plus the tables every view of it shares.
struct LiveState {
    std::shared_ptr<const engine::LiveSnapshot> snapshot;
    std::shared_ptr<const engine::FrameTable> frames;
    std::shared_ptr<const std::vector<QString>> frameNames;
    std::shared_ptr<const engine::ThreadIndex> threads;
};

// One derived picture for the views: the profile to explore (the session profile with sample weights for the
// scope and hidden threads), the timeline's per-thread activity, and the time range it covers.
struct LiveViewData {
    LiveState state;
    LiveScope scope = LiveScope::WholeSession;
    engine::LiveSelection selection;
    std::shared_ptr<const LoadedProfile> loaded;
    std::shared_ptr<const engine::ThreadActivity> activity;
};

// Keeps a live session's data off the GUI thread. Flushes are merged one after another on a private
// one-thread pool (the LiveProfile is touched by that thread only; no flush is kept once merged). Every new
// state, scope or set of hidden threads starts a derivation on the global pool; a generation number drops
// results that a newer request has overtaken.
//
// Thread: lives on the GUI thread and emits there.
class LiveUpdater : public QObject {
    Q_OBJECT
public:
    LiveUpdater(QString sessionPath, int frequency, QObject *parent = nullptr);
    ~LiveUpdater() override;

    void addFlush(std::shared_ptr<const engine::Flush> flush);
    void setScope(LiveScope scope, int64_t rangeStartNs = 0, int64_t rangeEndNs = 0);
    void setHiddenThreads(std::vector<uint32_t> hidden);
    LiveScope scope() const { return m_scope; }
    const LiveState &state() const { return m_state; }
    bool isBusy() const { return m_pendingFlushes > 0 || m_deriving; }

Q_SIGNALS:
    void stateChanged();                                  // a flush was merged
    void viewReady(std::shared_ptr<const LiveViewData> data);
    void mergeFailed(const QString &message);

private:
    void derive();

    QString m_path;
    int m_frequency = 0;
    QThreadPool m_ingestPool;
    std::shared_ptr<engine::LiveProfile> m_live;
    std::shared_ptr<FrameCache> m_frameCache; // touched by the ingestion thread only
    std::shared_ptr<LiveTrees> m_trees;       // the session's call trees, updated by each analysis
    LiveState m_state;
    LiveScope m_scope = LiveScope::WholeSession;
    int64_t m_rangeStart = 0;
    int64_t m_rangeEnd = 0;
    std::vector<uint32_t> m_hidden;
    uint64_t m_generation = 0;
    int m_pendingFlushes = 0;
    bool m_deriving = false;
};

} // namespace emberline::ui
