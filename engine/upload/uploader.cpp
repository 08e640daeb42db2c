#include "engine/upload/uploader.h"

#include "engine/upload/code_provenance.h"
#include "engine/upload/curl_api.h"
#include "engine/upload/upload_logging.h"

#include <random>

namespace emberline::engine {
namespace {

std::string defaultServiceOf(const UploadTarget &target, const Flush &flush)
{
    std::string exe = target.executable;
    if (exe.empty() && flush.profile)
        exe = guessMainExecutable(*flush.profile);
    const size_t slash = exe.rfind('/');
    return slash == std::string::npos ? exe : exe.substr(slash + 1);
}

} // namespace

int64_t wallClockNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Result<std::unique_ptr<Uploader>> Uploader::create(UploadSettings settings, RecordCallback onRecord)
{
    auto endpoint = uploadEndpoint(settings);
    if (!endpoint)
        return endpoint.error();
    if (settings.mode == UploadMode::Agentless) {
        if (auto st = validateApiKey(settings.apiKey); !st)
            return st.error();
    }
    // The transport is loaded now, so that a machine without libcurl hears so at the start, not at the first flush.
    if (std::string why; curlApi(&why) == nullptr)
        return makeError(Error::Code::Unsupported, "upload: " + why);
    return std::unique_ptr<Uploader>(
        new Uploader(std::move(settings), std::move(endpoint).value(), std::move(onRecord)));
}

Uploader::Uploader(UploadSettings settings, UploadEndpoint endpoint, RecordCallback onRecord)
    : m_settings(std::move(settings)), m_endpoint(std::move(endpoint)), m_onRecord(std::move(onRecord)),
      m_tags(TagBuilder::Identity{m_settings.service, m_settings.env, m_settings.version, {}, m_settings.tags}),
      m_worker({"uploader", std::max<size_t>(1, m_settings.queueCapacity)})
{
    qCInfo(lcUpload, "uploading to %s", m_endpoint.describe().c_str());
    m_worker.start(
        {.item = [this](Job &job) { upload(job); }, .finished = [this](std::vector<Job> &left) { cancelLeft(left); }});
}

Uploader::~Uploader()
{
    stopNow();
}

void Uploader::stopNow()
{
    m_worker.stop(WorkerStop::Discard);
}

void Uploader::submit(std::shared_ptr<const Flush> flush, const UploadTarget &target)
{
    if (!flush || !flush->upload)
        return; // a short final flush: its samples stay local (in the session's profile and folder)
    std::shared_ptr<UploadRecord> dropped;
    {
        // Under the lock, so that the sequence of the tags is the order of the queue.
        std::lock_guard lock(m_mutex);
        ++m_counters.submitted;
        auto tags = m_tags.nextFlushTags(target.pid, defaultServiceOf(target, *flush));
        Worker<Job>::Posted posted = m_worker.post(Job{std::move(flush), target, std::move(tags), wallClockNs()});
        if (!posted.queued) {
            ++m_counters.cancelled;
            dropped = recordFor(*posted.dropped);
            dropped->outcome = UploadOutcome::Cancelled;
            dropped->message = "the uploader has stopped";
        } else if (posted.dropped) {
            dropped = recordFor(*posted.dropped);
            dropped->outcome = UploadOutcome::Dropped;
            dropped->message = "the upload queue was full (" + std::to_string(m_settings.queueCapacity) +
                               " flushes waiting), so the oldest was dropped; the local copy is kept";
        }
    }
    if (dropped)
        report(std::move(dropped));
}

bool Uploader::finish(std::chrono::milliseconds deadline)
{
    const bool drained = m_worker.waitIdle(deadline);
    stopNow();
    return drained;
}

UploaderCounters Uploader::counters() const
{
    std::lock_guard lock(m_mutex);
    UploaderCounters counters = m_counters;
    counters.dropped = m_worker.dropped(); // only submit() drops, under the same lock
    return counters;
}

void Uploader::cancelLeft(std::vector<Job> &left)
{
    {
        std::lock_guard lock(m_mutex);
        m_counters.cancelled += left.size();
    }
    for (const Job &job : left) {
        auto record = recordFor(job);
        record->outcome = UploadOutcome::Cancelled;
        record->message = "the session ended before its turn came; the local copy is kept";
        report(std::move(record));
    }
}

std::shared_ptr<UploadRecord> Uploader::recordFor(const Job &job) const
{
    auto record = std::make_shared<UploadRecord>();
    record->flushSequence = job.flush->sequence;
    record->flushStartNs = job.flush->startNs;
    record->flushEndNs = job.flush->endNs;
    record->flushPath = job.flush->path;
    record->targetPid = job.target.pid;
    record->endpoint = m_endpoint.describe();
    record->tags = job.tags;
    record->queuedAtNs = job.queuedAtNs;
    record->finishedAtNs = wallClockNs();
    record->flushToSentNs = record->finishedAtNs - job.queuedAtNs;
    return record;
}

void Uploader::upload(Job &job)
{
    PayloadContext context{m_settings.codec, m_settings.service, m_settings.env, m_settings.version,
                           job.target.executable};
    auto payload = buildUploadPayload(*job.flush, job.tags, context);
    auto record = recordFor(job);
    record->headers = uploadHeaders(m_settings, m_endpoint, job.target.pid, false);
    if (!payload) {
        record->outcome = UploadOutcome::Invalid;
        record->message = "not sent: " + payload.error().message;
        std::lock_guard lock(m_mutex);
        ++m_counters.failed;
    } else {
        record->eventJson = payload->eventJson;
        record->bodyBytes = payload->bodyBytes();
        for (const UploadAttachment &a : payload->attachments)
            record->attachments.push_back({a.name, a.bytes.size(), a.rawBytes, a.encoding});
        sendWithRetries(payload.value(), *record);
    }
    record->finishedAtNs = wallClockNs();
    record->flushToSentNs = record->finishedAtNs - job.queuedAtNs;
    report(std::move(record));
}

void Uploader::sendWithRetries(const UploadPayload &payload, UploadRecord &record)
{
    const auto headers = uploadHeaders(m_settings, m_endpoint, record.targetPid, true);
    const int maxAttempts = std::max(1, m_settings.maxAttempts);
    for (int attempt = 1; attempt <= maxAttempts; ++attempt) {
        record.attempts = attempt;
        const HttpResult r = postPayload(m_endpoint, headers, payload, m_settings.timeoutMs,
                                         m_settings.connectTimeoutMs, &m_worker.stopFlag());
        record.httpStatus = r.status;
        record.requestLatencyNs = r.latencyNs;
        if (!r.networkError && r.status >= 200 && r.status < 300) {
            record.outcome = UploadOutcome::Sent;
            record.message = "HTTP " + std::to_string(r.status);
            break;
        }
        if (!r.networkError && r.status >= 400 && r.status < 500) {
            record.outcome = UploadOutcome::Rejected;
            record.message = describeHttpStatus(r.status, m_endpoint, payload.bodyBytes());
            break;
        }
        record.outcome = r.cancelled ? UploadOutcome::Cancelled : UploadOutcome::Failed;
        record.message = r.networkError ? describeNetworkError(r, m_endpoint, m_settings.timeoutMs)
                                        : describeHttpStatus(r.status, m_endpoint, payload.bodyBytes());
        if (attempt < maxAttempts && !r.cancelled)
            record.message += " (tried " + std::to_string(attempt) + " time(s))";
        if (r.cancelled || attempt == maxAttempts || !waitBackoff(attempt))
            break;
    }
    std::lock_guard lock(m_mutex);
    m_counters.retries += record.retries();
    switch (record.outcome) {
    case UploadOutcome::Sent:
        ++m_counters.sent;
        break;
    case UploadOutcome::Rejected:
        ++m_counters.rejected;
        break;
    case UploadOutcome::Cancelled:
        ++m_counters.cancelled;
        break;
    default:
        ++m_counters.failed;
    }
}

// Doubling backoff with jitter, interrupted by stop. False when stopping.
bool Uploader::waitBackoff(int attempt)
{
    thread_local std::minstd_rand rng{std::random_device{}()};
    const int base = m_settings.backoffMs << std::min(attempt - 1, 5);
    const auto wait = std::chrono::milliseconds(base + static_cast<int>(rng() % static_cast<unsigned>(base / 4 + 1)));
    return m_worker.sleepUnlessStopped(wait);
}

void Uploader::report(std::shared_ptr<UploadRecord> record)
{
    // The callback shows every outcome to the user (panel, command line); the log only traces.
    qCInfo(lcUpload, "flush %u (%s): %s", record->flushSequence, outcomeName(record->outcome), record->message.c_str());
    if (m_onRecord)
        m_onRecord(std::move(record));
}

} // namespace emberline::engine
