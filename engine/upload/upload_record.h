#pragma once

#include "engine/upload/http_transport.h"
#include "engine/upload/tags.h"

#include <cstdint>
#include <string>
#include <vector>

namespace emberline::engine {

enum class UploadOutcome {
    Sent,      // a 2xx answer
    Rejected,  // a 4xx answer: not retried; message says what to fix
    Failed,    // network errors or 5xx on every attempt
    Dropped,   // evicted from a full queue before it was tried
    Cancelled, // the uploader stopped before it could be sent
    Invalid,   // the payload could not be built
};
const char *outcomeName(UploadOutcome outcome);

struct UploadAttachmentInfo {
    std::string name;
    uint64_t bytes = 0; // compressed, as sent
    uint64_t rawBytes = 0;
    std::string encoding;
};

// The story of one flush's upload, for the Upload panel and the command line: what was sent (event.json, the
// attachments, the tags, the headers with the API key hidden), where, and how it went. Immutable once reported.
struct UploadRecord {
    uint32_t flushSequence = 0;
    int64_t flushStartNs = 0;
    int64_t flushEndNs = 0;
    std::string flushPath; // the local copy, kept whatever happens
    int targetPid = 0;
    std::string endpoint; // describe() of the endpoint; never carries a key

    UploadOutcome outcome = UploadOutcome::Failed;
    long httpStatus = 0; // of the last attempt; 0 when no answer came
    int attempts = 0;
    int retries() const { return attempts > 1 ? attempts - 1 : 0; }
    int64_t queuedAtNs = 0;       // wall clock
    int64_t finishedAtNs = 0;     // wall clock, when the outcome was known
    int64_t requestLatencyNs = 0; // of the last attempt
    int64_t flushToSentNs = 0;    // from the hand-over to the uploader to the outcome
    uint64_t bodyBytes = 0;
    std::vector<Tag> tags;
    std::string eventJson;
    std::vector<UploadAttachmentInfo> attachments;
    std::vector<HttpHeader> headers; // DD-API-KEY shown as <hidden>
    std::string message;             // what happened, in words, and what to fix
};

// Words for an HTTP answer that is not a success, saying what the user can change.
std::string describeHttpStatus(long status, const UploadEndpoint &endpoint, uint64_t bodyBytes);
std::string describeNetworkError(const HttpResult &result, const UploadEndpoint &endpoint, int timeoutMs);

struct UploaderCounters {
    uint64_t submitted = 0;
    uint64_t sent = 0;
    uint64_t rejected = 0;
    uint64_t failed = 0;
    uint64_t dropped = 0;
    uint64_t cancelled = 0;
    uint64_t retries = 0;
};

} // namespace emberline::engine
