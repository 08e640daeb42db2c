#pragma once

#include "engine/upload/upload_payload.h"
#include "engine/upload/upload_settings.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace emberline::engine {

using HttpHeader = std::pair<std::string, std::string>;

// The headers of every profile upload (spec section 1): DD-EVP-ORIGIN and its version, User-Agent,
// Connection: close, Datadog-Container-ID / Datadog-Entity-ID for a target in a container,
// Datadog-External-Env, X-Datadog-Test-Session-Token when set, and DD-API-KEY in agentless mode only.
// With revealSecrets false the key's value is replaced by "<hidden>", for showing and logging.
std::vector<HttpHeader> uploadHeaders(const UploadSettings &settings, const UploadEndpoint &endpoint, int targetPid,
                                      bool revealSecrets);

// Container identity of a process from /proc/PID/cgroup (0: our own): a 64-hex-digit or UUID container id in
// the cgroup path, and the entity id Datadog expects (cid-<id>, or in-<inode> of the cgroup v2 directory).
struct ContainerIdentity {
    std::string containerId;
    std::string entityId;
};
ContainerIdentity containerIdentity(int pid);
ContainerIdentity parseCgroupFile(const std::string &contents);

// What one POST produced. status is 0 when no HTTP answer came (networkError says why).
struct HttpResult {
    long status = 0;
    bool networkError = false;
    bool timedOut = false;
    bool cancelled = false;
    std::string error; // libcurl's description of a network error
    int64_t latencyNs = 0;
    uint64_t bytesSent = 0;
    std::string responseBody; // the first KiB, for messages
};

// POSTs the payload as multipart/form-data with libcurl's mime API: the `event` part (event.json,
// application/json, never compressed) and one part per attachment, named by its filename. Agentless requests
// are allowed over HTTPS only; redirects are not followed (so a key never travels elsewhere). `cancel`, when
// set, aborts a transfer in progress.
//
// Thread: the uploader thread (any one thread per call; libcurl handles are not shared).
HttpResult postPayload(const UploadEndpoint &endpoint, const std::vector<HttpHeader> &headers,
                       const UploadPayload &payload, int timeoutMs, int connectTimeoutMs,
                       const std::atomic<bool> *cancel);

} // namespace emberline::engine
