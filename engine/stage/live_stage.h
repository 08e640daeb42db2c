#pragma once

#include "engine/analysis/analysis.h"
#include "engine/common/heap_trimmer.h"
#include "engine/common/worker.h"
#include "engine/flush/flush.h"
#include "engine/flush/flush_consumers.h"
#include "engine/live/live_profile.h"
#include "engine/live/live_selection.h"
#include "engine/stage/live_compare.h"
#include "engine/stage/live_heatmap.h"

#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace emberline::engine {

// What a live session's views show: the whole session so far, the last flush, or a selected time range.
enum class LiveScope { WholeSession, LastFlush, SelectedRange };

// What the views ask of the live stage: the scope, the hidden threads, the sample type the explorer shows and
// what to compare the scope with (LiveCompareRequest; off by default).
struct LiveViewRequest {
    LiveScope scope = LiveScope::WholeSession;
    int64_t rangeStartNs = 0;
    int64_t rangeEndNs = 0;
    std::vector<uint32_t> hiddenThreads; // LiveThread ordinals
    int sampleType = -1;                 // -1: the profile's default
    LiveCompareRequest compare;
};

// Everything the views need after a flush or a new request, built by one job off the GUI thread and immutable:
// the flushes it takes in, the live aggregate (snapshot), the profile as the explorer holds it (with the scope's
// sample weights), the timeline's buckets and the analysis (call tree and function table) for the requested
// sample type; in a compare mode, the comparison instead of the analysis (the explorer is not shown then).
struct LiveUpdate {
    uint64_t generation = 0; // of the request it answers (LiveStage::setView); later updates have higher ones
    std::vector<std::shared_ptr<const Flush>> flushes; // taken in since the previous update, oldest first
    // When the newest of `flushes` reached the stage (CLOCK_MONOTONIC ns), 0 when there is none.
    int64_t flushReceivedNs = 0;
    LiveViewRequest request;
    LiveSelection selection;
    std::shared_ptr<const LiveSnapshot> snapshot;
    std::shared_ptr<const LoadedProfile> loaded;
    std::shared_ptr<const ThreadActivity> activity;
    std::shared_ptr<const Heatmap> heatmap;   // samples per sub-second bucket of the shown threads
    std::shared_ptr<const Analysis> analysis; // null in a compare mode
    // In a compare mode: the comparison, or why there is none (compareError, in words for the window).
    LiveComparison comparison;
    std::string compareError;
    std::string error; // a flush that could not be merged; the views keep what they show
    // A job that took in flushes publishes two updates, so that the timelines are on screen while the call tree is
    // brought up to date: the first (analysisFollows) has everything but `analysis` and `comparison`, and is the
    // only one with `flushes` and `error`; the next, of the same generation and snapshot, has them too
    // (timelineSent: its other parts are the first's).
    bool analysisFollows = false;
    bool timelineSent = false;
};

// The live stage of a session, one of its flush consumers: the exporter hands it each flush; it merges the flush
// into the live aggregate (LiveProfile), derives the scope's profile and the timeline's buckets, and brings the
// session's call tree up to date for the sample type the views show, all as one job on its own thread (a Worker
// taking batches). It publishes one LiveUpdate per job, two for a job with flushes (the timelines' part first).
// Flushes that arrive while a job runs are merged together by the next one. A new view request (scope, range, hidden
// threads, sample type) is a job of its own, on the same thread, so requests and flushes are never derived twice or out
// of order.
//
// Thread: addFlush() and setView() from any thread; the work and the publish callback on the stage's thread.
class LiveStage : public FlushConsumer {
public:
    using Publish = std::function<void(std::shared_ptr<const LiveUpdate>)>;
    struct Options {
        QString sessionPath;
        int frequency = 0;
    };

    LiveStage(Options options, Publish publish);
    ~LiveStage() override; // stop(), then waits for the job under way

    void addFlush(std::shared_ptr<const Flush> flush) override;
    // Returns the request's generation; the update that answers it carries it.
    uint64_t setView(LiveViewRequest request);
    // Blocks until every flush and request handed in so far is published (or the stage is stopped).
    void waitUntilIdle();
    // Drops what is queued and ends the thread after the job under way; nothing is published afterwards.
    // Never blocks.
    void stop();

private:
    // A flush (with when it arrived) or a view request (with its generation), as queued for the stage's thread.
    struct Job {
        std::shared_ptr<const Flush> flush;
        int64_t receivedNs = 0; // CLOCK_MONOTONIC
        std::optional<LiveViewRequest> request;
        uint64_t generation = 0;
    };
    // Everything queued since the last job, as one job: its flushes under the newest request.
    void runJobs(std::vector<Job> &jobs);
    void process(std::vector<std::shared_ptr<const Flush>> flushes, const LiveViewRequest &request, uint64_t generation,
                 int64_t receivedNs);
    void derive(LiveUpdate &update, const std::shared_ptr<const LoadedProfile> &loaded);

    Options m_options;
    Publish m_publish;
    // Touched by the stage's thread only.
    LiveProfile m_live;
    struct FrameCache;
    std::unique_ptr<FrameCache> m_frameCache;
    std::shared_ptr<LiveTrees> m_trees;
    LiveHeatmap m_heatmap;
    LiveFlushSides m_flushSides; // the flushes' sides of the compare modes, each derived once
    std::shared_ptr<const LiveSnapshot> m_snapshot;
    HeapTrimmer m_heapTrimmer;
    LiveViewRequest m_request; // the newest request taken in
    uint64_t m_requestGeneration = 0;
    bool m_raised = false; // the stage's thread (raiseCallingThread)

    std::mutex m_viewMutex; // numbers the requests in the order they are queued
    uint64_t m_generation = 0;
    Worker<Job> m_worker{{"live stage"}}; // last: it stops before what it uses goes
};

} // namespace emberline::engine
