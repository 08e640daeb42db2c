#pragma once

#include "engine/common/result.h"
#include "engine/common/worker.h"
#include "engine/flush/flush.h"
#include "engine/upload/tags.h"
#include "engine/upload/upload_payload.h"
#include "engine/upload/upload_record.h"
#include "engine/upload/upload_settings.h"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace emberline::engine {

// The process a flush describes: its pid keys runtime-id and profile_seq; its executable is the user's code
// in code provenance. Both may be unknown (0, empty).
struct UploadTarget {
    int pid = 0;
    std::string executable;
};

// Sends every submitted flush to Datadog from its own thread, a Worker (except a short final flush, Flush::upload
// false, which it leaves out without a record, as Datadog's profilers do). submit() never waits on the network: it
// assigns the flush's tags (profile_seq in submission order), queues it and returns. The queue is bounded:
// when it is full the oldest waiting flush is dropped and reported as Dropped. Each request has a total
// timeout; network errors and 5xx answers are retried a few times with doubling backoff, 4xx answers are not.
// Every flush, whatever its fate, produces one UploadRecord through the callback. The flush's local file is
// never touched.
//
// Thread: submit(), counters() and finish() from any thread. The callback runs on the uploader thread, except
// for a flush dropped from the full queue, reported on the submitting thread (it never waits on the network).
class Uploader {
public:
    using RecordCallback = std::function<void(std::shared_ptr<const UploadRecord>)>;

    // Fails when the settings name no usable endpoint.
    static Result<std::unique_ptr<Uploader>> create(UploadSettings settings, RecordCallback onRecord);
    ~Uploader(); // stops at once: a transfer in progress is aborted, waiting flushes are reported Cancelled

    void submit(std::shared_ptr<const Flush> flush, const UploadTarget &target = {});
    // Lets the queue drain for up to `deadline`, then stops. True when everything submitted was tried.
    bool finish(std::chrono::milliseconds deadline);
    UploaderCounters counters() const;
    const UploadEndpoint &endpoint() const { return m_endpoint; }
    const UploadSettings &settings() const { return m_settings; }

private:
    struct Job {
        std::shared_ptr<const Flush> flush;
        UploadTarget target;
        std::vector<Tag> tags;
        int64_t queuedAtNs = 0;
    };
    Uploader(UploadSettings settings, UploadEndpoint endpoint, RecordCallback onRecord);
    void upload(Job &job);
    // The jobs a stop left in the queue: never tried.
    void cancelLeft(std::vector<Job> &left);
    void sendWithRetries(const UploadPayload &payload, UploadRecord &record);
    bool waitBackoff(int attempt);
    void report(std::shared_ptr<UploadRecord> record);
    std::shared_ptr<UploadRecord> recordFor(const Job &job) const;
    void stopNow();

    const UploadSettings m_settings;
    const UploadEndpoint m_endpoint;
    RecordCallback m_onRecord;
    TagBuilder m_tags;

    mutable std::mutex m_mutex; // the tags' sequence and the counters (but dropped: the worker counts those)
    UploaderCounters m_counters;
    // The queue, bounded by the settings' capacity; its stop flag aborts a transfer in progress. Last: it stops
    // before what it uses goes.
    Worker<Job> m_worker;
};

int64_t wallClockNs();

} // namespace emberline::engine
