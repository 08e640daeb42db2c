#pragma once

#include "engine/common/result.h"
#include "engine/upload/tags.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace emberline::engine {

enum class UploadMode { Agent, Agentless };
enum class UploadCodec { Zstd, Gzip };

inline constexpr const char *kDefaultAgentSocket = "/var/run/datadog/apm.socket";

// Where flushes go and what they say about the service. Resolved once per session (resolveUploadSettings);
// apiKey is a secret: it is only ever put into the DD-API-KEY header of an agentless request, never logged,
// never written into a profile, never passed on a command line.
struct UploadSettings {
    UploadMode mode = UploadMode::Agent;
    std::string agentUrl = "http://localhost:8126"; // http://, https:// or unix:///path
    std::string site = "datadoghq.com";             // agentless: intake.profile.<site>
    std::string apiKey;                             // agentless only
    std::string service;
    std::string env;
    std::string version;
    std::vector<Tag> tags;        // DD_TAGS, then the user's own
    std::string externalEnv;      // DD_EXTERNAL_ENV, sent as Datadog-External-Env
    std::string testSessionToken; // X-Datadog-Test-Session-Token, for Datadog's test agent
    UploadCodec codec = UploadCodec::Zstd;
    int timeoutMs = 10'000; // whole request, like Go's and ddprof's 10 s
    int connectTimeoutMs = 3'000;
    int maxAttempts = 3;      // network errors and 5xx only
    int backoffMs = 250;      // first wait between attempts; doubled each time
    size_t queueCapacity = 8; // flushes waiting to be sent; the oldest is dropped beyond this
};

// Explicit choices (command-line flags, the settings widget). Each one that is set wins over the environment.
struct UploadOverrides {
    std::optional<UploadMode> mode;
    std::optional<std::string> agentUrl;
    std::optional<std::string> site;
    std::optional<std::string> apiKey;
    std::optional<std::string> service;
    std::optional<std::string> env;
    std::optional<std::string> version;
    std::optional<std::string> tags; // a tag list, parsed like DD_TAGS
};

// Reads a variable; nullopt when unset. A variable that is set but empty counts as unset (Go's rule).
using EnvLookup = std::function<std::optional<std::string>(const std::string &name)>;
EnvLookup processEnvironment();

// Datadog's environment conventions (DD_SERVICE, DD_ENV, DD_VERSION, DD_TAGS, DD_TRACE_AGENT_URL,
// DD_AGENT_HOST, DD_TRACE_AGENT_PORT, the default agent socket, DD_PROFILING_AGENTLESS, DD_SITE,
// DD_API_KEY, DD_EXTERNAL_ENV), then the overrides. Every refused value gives an Error that says which
// setting and why; an API key is never quoted.
Result<UploadSettings> resolveUploadSettings(const EnvLookup &env, const UploadOverrides &overrides,
                                             const std::string &defaultSocket = kDefaultAgentSocket);

// The request target. For a unix-socket agent, url is http://localhost/profiling/v1/input and the request
// goes over unixSocketPath.
struct UploadEndpoint {
    std::string url;
    std::string unixSocketPath;
    bool agentless = false;
    std::string describe() const; // for messages: the URL, or "unix:<path>"
};
Result<UploadEndpoint> uploadEndpoint(const UploadSettings &settings);

// A Datadog API key: 32 lowercase letters and digits (the check Go's profiler makes).
Status validateApiKey(const std::string &key);
Status validateSite(const std::string &site);
Status validateAgentUrl(const std::string &url);

} // namespace emberline::engine
