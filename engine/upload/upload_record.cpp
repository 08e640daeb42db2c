#include "engine/upload/upload_record.h"

namespace emberline::engine {

const char *outcomeName(UploadOutcome outcome)
{
    switch (outcome) {
    case UploadOutcome::Sent:
        return "sent";
    case UploadOutcome::Rejected:
        return "rejected";
    case UploadOutcome::Failed:
        return "failed";
    case UploadOutcome::Dropped:
        return "dropped";
    case UploadOutcome::Cancelled:
        return "not sent";
    case UploadOutcome::Invalid:
        return "invalid";
    }
    return "?";
}

std::string describeHttpStatus(long status, const UploadEndpoint &endpoint, uint64_t bodyBytes)
{
    const std::string where = endpoint.describe();
    const std::string code = "HTTP " + std::to_string(status);
    if (status == 401 || status == 403) {
        if (endpoint.agentless)
            return code + " from " + where +
                   ": Datadog refused the API key. Check DD_API_KEY (or the key saved in "
                   "the upload settings) and that DD_SITE is the site the key belongs to.";
        return code + " from " + where +
               ": the agent's API key was refused. Check api_key in the Datadog agent's "
               "configuration (datadog.yaml or the agent's DD_API_KEY).";
    }
    if (status == 404) {
        if (endpoint.agentless)
            return code + " from " + where +
                   ": no profile intake there. Check DD_SITE (for example datadoghq.com, "
                   "datadoghq.eu, us5.datadoghq.com).";
        return code + " from " + where +
               ": the agent does not accept profiles. Either it is too old (profiling needs "
               "Datadog agent 7.20 or newer) or the URL is not a Datadog agent; check DD_TRACE_AGENT_URL, "
               "DD_AGENT_HOST and DD_TRACE_AGENT_PORT.";
    }
    if (status == 413)
        return code + " from " + where + ": the upload (" + std::to_string(bodyBytes) +
               " bytes) is too large. "
               "Use a shorter flush period or a lower sampling frequency.";
    if (status >= 400 && status < 500)
        return code + " from " + where +
               ": the request was refused and is not retried. The local copy of the "
               "flush is kept.";
    if (status >= 500)
        return code + " from " + where +
               ": the server failed on every attempt. The local copy of the flush is "
               "kept.";
    return code + " from " + where;
}

std::string describeNetworkError(const HttpResult &result, const UploadEndpoint &endpoint, int timeoutMs)
{
    const std::string where = endpoint.describe();
    if (result.cancelled)
        return "the upload to " + where + " was stopped when the session ended";
    if (result.timedOut)
        return "no answer from " + where + " within " + std::to_string(timeoutMs / 1000.0).substr(0, 4) +
               " s; is the agent overloaded or the network down?";
    if (endpoint.agentless)
        return "could not reach " + where + ": " + result.error + ". Check the network, a proxy, and DD_SITE.";
    return "could not reach the Datadog agent at " + where + ": " + result.error +
           ". Is the agent running? Set DD_TRACE_AGENT_URL, or DD_AGENT_HOST and DD_TRACE_AGENT_PORT, to where it "
           "listens.";
}

} // namespace emberline::engine
