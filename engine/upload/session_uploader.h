#pragma once

#include "engine/common/result.h"
#include "engine/flush/flush.h"
#include "engine/flush/flush_consumers.h"
#include "engine/upload/uploader.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

namespace emberline::engine {

// The upload side of one recording, fed by the engine itself: one of the session's flush consumers (FlushConsumers),
// so the exporter thread submits each flush as it is written, in `emberline record` and in the window alike, and no
// flush waits for a GUI thread on its way to Datadog. The session tells it the target (its pid keys runtime-id and
// profile_seq; its executable is the user's code in code provenance). Submitting can be paused and resumed while the
// session runs; flushes made meanwhile are kept on disk only.
//
// Thread: every member may be called from any thread. The uploader's record callback runs on its own thread.
class SessionUploader : public FlushConsumer {
public:
    // Fails when the settings name no usable endpoint.
    static Result<std::shared_ptr<SessionUploader>> create(UploadSettings settings, Uploader::RecordCallback onRecord);

    // The target's pid and executable; without an executable it is read from /proc (a launched program only once
    // it has called exec).
    void setTarget(int pid, const std::string &executable) override;
    // Queues the flush unless submitting is paused or the session has finished; never waits on the network.
    void addFlush(std::shared_ptr<const Flush> flush) override;
    void setSubmitting(bool on) { m_submitting.store(on); }
    bool isSubmitting() const { return m_submitting.load(); }
    // Lets the queue drain for up to `deadline`, then stops; nothing is submitted afterwards.
    bool finish(std::chrono::milliseconds deadline);
    UploaderCounters counters() const { return m_uploader->counters(); }
    const UploadEndpoint &endpoint() const { return m_uploader->endpoint(); }
    const UploadSettings &settings() const { return m_uploader->settings(); }

private:
    explicit SessionUploader(std::unique_ptr<Uploader> uploader) : m_uploader(std::move(uploader)) {}

    std::unique_ptr<Uploader> m_uploader;
    mutable std::mutex m_mutex;
    UploadTarget m_target;
    std::atomic<bool> m_submitting{true};
    std::atomic<bool> m_finished{false};
};

} // namespace emberline::engine
