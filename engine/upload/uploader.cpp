#include "engine/upload/uploader.h"

#include "engine/upload/code_provenance.h"
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
    ensureCurlInitialized();
    return std::unique_ptr<Uploader>(new Uploader(std::move(settings), std::move(endpoint).value(), std::move(onRecord)));
}

Uploader::Uploader(UploadSettings settings, UploadEndpoint endpoint, RecordCallback onRecord)
    : m_settings(std::move(settings)), m_endpoint(std::move(endpoint)), m_onRecord(std::move(onRecord)),
      m_tags(TagBuilder::Identity{m_settings.service, m_settings.env, m_settings.version, {}, m_settings.tags})
{
    qCInfo(lcUpload, "uploading to %s", m_endpoint.describe().c_str());
    m_thread = std::thread([this] { run(); });
}

Uploader::~Uploader()
{
    stopNow();
}

void Uploader::stopNow()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_cancel = true;
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void Uploader::submit(std::shared_ptr<const Flush> flush, const UploadTarget &target)
{
    if (!flush || !flush->upload)
        return; // a short final flush: its samples stay local (in the session's profile and folder)
    std::shared_ptr<UploadRecord> dropped;
    {
        std::lock_guard lock(m_mutex);
        ++m_counters.submitted;
        Job job{flush, target, m_tags.nextFlushTags(target.pid, defaultServiceOf(target, *flush)), wallClockNs()};
        if (m_stopping) {
            ++m_counters.cancelled;
            dropped = recordFor(job);
            dropped->outcome = UploadOutcome::Cancelled;
            dropped->message = "the uploader has stopped";
        } else {
            if (m_queue.size() >= std::max<size_t>(1, m_settings.queueCapacity)) {
                ++m_counters.dropped;
                dropped = recordFor(m_queue.front());
                dropped->outcome = UploadOutcome::Dropped;
                dropped->message = "the upload queue was full (" +
                                   std::to_string(m_settings.queueCapacity) +
                                   " flushes waiting), so the oldest was dropped; the local copy is kept";
                m_queue.pop_front();
            }
            m_queue.push_back(std::move(job));
        }
    }
    m_wake.notify_one();
    if (dropped)
        report(std::move(dropped));
}

bool Uploader::finish(std::chrono::milliseconds deadline)
{
    bool drained = false;
    {
        std::unique_lock lock(m_mutex);
        drained = m_idle.wait_for(lock, deadline, [this] { return m_queue.empty() && !m_busy; });
    }
    stopNow();
    return drained;
}

UploaderCounters Uploader::counters() const
{
    std::lock_guard lock(m_mutex);
    return m_counters;
}

void Uploader::run()
{
    std::unique_lock lock(m_mutex);
    while (true) {
        m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
        if (m_stopping)
            break;
        Job job = std::move(m_queue.front());
        m_queue.pop_front();
        m_busy = true;
        lock.unlock();
        upload(job);
        lock.lock();
        m_busy = false;
        m_idle.notify_all();
    }
    // Whatever is still waiting was never tried.
    std::deque<Job> left;
    left.swap(m_queue);
    m_counters.cancelled += left.size();
    lock.unlock();
    for (const Job &job : left) {
        auto record = recordFor(job);
        record->outcome = UploadOutcome::Cancelled;
        record->message = "the session ended before its turn came; the local copy is kept";
        report(std::move(record));
    }
    m_idle.notify_all();
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
                                         m_settings.connectTimeoutMs, &m_cancel);
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
    std::unique_lock lock(m_mutex);
    return !m_wake.wait_for(lock, wait, [this] { return m_stopping; });
}

void Uploader::report(std::shared_ptr<UploadRecord> record)
{
    // The callback shows every outcome to the user (panel, command line); the log only traces.
    qCInfo(lcUpload, "flush %u (%s): %s", record->flushSequence, outcomeName(record->outcome),
           record->message.c_str());
    if (m_onRecord)
        m_onRecord(std::move(record));
}

} // namespace emberline::engine
