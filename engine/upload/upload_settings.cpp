#include "engine/upload/upload_settings.h"

#include <QUrl>

#include <cstdlib>
#include <filesystem>

namespace emberline::engine {
namespace {

Error invalid(std::string message)
{
    return makeError(Error::Code::Invalid, std::move(message));
}

bool isTrue(const std::optional<std::string> &v)
{
    return v && (*v == "1" || *v == "true" || *v == "TRUE" || *v == "True");
}

// DD_TRACE_AGENT_URL: http(s)://, unix://, a bare path (a socket, as ddprof reads it) or host:port (http).
Result<std::string> normalizeAgentUrl(std::string url)
{
    while (url.size() > 1 && url.back() == '/' && url.rfind("unix://", 0) != 0)
        url.pop_back();
    if (!url.empty() && url.front() == '/')
        url = "unix://" + url;
    else if (url.find("://") == std::string::npos)
        url = "http://" + url;
    if (auto st = validateAgentUrl(url); !st)
        return st.error();
    return url;
}

Result<std::string> agentUrlFromEnvironment(const EnvLookup &env, const std::string &defaultSocket)
{
    if (auto url = env("DD_TRACE_AGENT_URL")) {
        auto r = normalizeAgentUrl(*url);
        if (!r)
            return invalid("DD_TRACE_AGENT_URL: " + r.error().message);
        return r;
    }
    const auto host = env("DD_AGENT_HOST");
    const auto port = env("DD_TRACE_AGENT_PORT");
    if (host || port) {
        std::string h = host.value_or("localhost");
        if (h.find(':') != std::string::npos && h.front() != '[')
            h = "[" + h + "]"; // an IPv6 address
        const std::string p = port.value_or("8126");
        char *end = nullptr;
        const long n = std::strtol(p.c_str(), &end, 10);
        if (*end != '\0' || n < 1 || n > 65535)
            return invalid("DD_TRACE_AGENT_PORT must be a port number from 1 to 65535, got '" + p + "'");
        return "http://" + h + ":" + p;
    }
    std::error_code ec;
    if (!defaultSocket.empty() && std::filesystem::is_socket(defaultSocket, ec))
        return "unix://" + defaultSocket;
    return std::string("http://localhost:8126");
}

Status applyTags(const std::string &source, const std::string &text, UploadSettings &s)
{
    TagParseResult parsed = parseTagList(text);
    if (!parsed.ok()) {
        std::string message = source + ": ";
        for (size_t i = 0; i < parsed.errors.size(); ++i)
            message += (i ? "; " : "") + parsed.errors[i];
        return invalid(message);
    }
    for (Tag &t : parsed.tags)
        s.tags.push_back(std::move(t));
    return Ok{};
}

// service, env and version may come from tags when nothing more specific names them.
void fillIdentityFromTags(UploadSettings &s)
{
    for (const Tag &t : s.tags) {
        if (t.key == "service" && s.service.empty())
            s.service = t.value;
        else if (t.key == "env" && s.env.empty())
            s.env = t.value;
        else if (t.key == "version" && s.version.empty())
            s.version = t.value;
    }
}

Status checkIdentityValue(const char *name, const std::string &value)
{
    if (value.empty())
        return Ok{};
    if (auto st = validateTag(Tag{name, value}); !st)
        return invalid(std::string(name) + ": " + st.error().message);
    return Ok{};
}

} // namespace

EnvLookup processEnvironment()
{
    return [](const std::string &name) -> std::optional<std::string> {
        const char *v = std::getenv(name.c_str());
        if (!v || !*v)
            return std::nullopt;
        return std::string(v);
    };
}

Status validateApiKey(const std::string &key)
{
    if (key.empty())
        return invalid(
            "agentless upload needs an API key: set DD_API_KEY, give an owner-only key file (--api-key-file), "
            "or save the key in the upload settings");
    bool wellFormed = key.size() == 32;
    for (const char c : key)
        wellFormed = wellFormed && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
    if (!wellFormed)
        return invalid("the API key is not a Datadog API key (32 lowercase letters and digits); the key itself "
                       "is not shown");
    return Ok{};
}

Status validateSite(const std::string &site)
{
    if (site.empty())
        return invalid("the Datadog site is empty (for example datadoghq.com or datadoghq.eu)");
    for (const char c : site) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
            return invalid("the Datadog site '" + site +
                           "' must be a host name such as datadoghq.com or us5.datadoghq.com (no scheme, no path)");
    }
    return Ok{};
}

Status validateAgentUrl(const std::string &url)
{
    if (url.rfind("unix://", 0) == 0) {
        if (url.size() <= 7 || url[7] != '/')
            return invalid("a unix socket URL needs an absolute path: unix:///path/to/apm.socket, got '" + url + "'");
        return Ok{};
    }
    const QUrl u(QString::fromStdString(url), QUrl::StrictMode);
    if (!u.isValid() || (u.scheme() != QLatin1String("http") && u.scheme() != QLatin1String("https")) ||
        u.host().isEmpty())
        return invalid("the agent URL must be http://HOST:PORT, https://HOST:PORT or unix:///PATH, got '" + url + "'");
    return Ok{};
}

Result<UploadSettings> resolveUploadSettings(const EnvLookup &env, const UploadOverrides &o,
                                             const std::string &defaultSocket)
{
    UploadSettings s;
    s.service = o.service.value_or(env("DD_SERVICE").value_or(""));
    s.env = o.env.value_or(env("DD_ENV").value_or(""));
    s.version = o.version.value_or(env("DD_VERSION").value_or(""));
    if (auto tags = env("DD_TAGS"); tags) {
        if (auto st = applyTags("DD_TAGS", *tags, s); !st)
            return st.error();
    }
    if (o.tags) {
        if (auto st = applyTags("tags", *o.tags, s); !st)
            return st.error();
    }
    fillIdentityFromTags(s);
    for (auto [name, value] : {std::pair{"service", &s.service}, {"env", &s.env}, {"version", &s.version}}) {
        if (auto st = checkIdentityValue(name, *value); !st)
            return st.error();
    }
    s.externalEnv = env("DD_EXTERNAL_ENV").value_or("");

    s.mode = o.mode.value_or(isTrue(env("DD_PROFILING_AGENTLESS")) ? UploadMode::Agentless : UploadMode::Agent);
    if (s.mode == UploadMode::Agentless) {
        s.site = o.site.value_or(env("DD_SITE").value_or("datadoghq.com"));
        if (auto st = validateSite(s.site); !st)
            return st.error();
        s.apiKey = o.apiKey.value_or(env("DD_API_KEY").value_or(""));
        if (auto st = validateApiKey(s.apiKey); !st)
            return st.error();
        return s;
    }
    if (o.agentUrl) {
        auto url = normalizeAgentUrl(*o.agentUrl);
        if (!url)
            return url.error();
        s.agentUrl = url.value();
    } else {
        auto url = agentUrlFromEnvironment(env, defaultSocket);
        if (!url)
            return url.error();
        s.agentUrl = url.value();
    }
    return s; // in agent mode the agent adds the key: DD_API_KEY is not read at all
}

std::string UploadEndpoint::describe() const
{
    return unixSocketPath.empty() ? url : "unix:" + unixSocketPath;
}

Result<UploadEndpoint> uploadEndpoint(const UploadSettings &s)
{
    UploadEndpoint e;
    if (s.mode == UploadMode::Agentless) {
        if (auto st = validateSite(s.site); !st)
            return st.error();
        e.url = "https://intake.profile." + s.site + "/api/v2/profile";
        e.agentless = true;
        return e;
    }
    if (auto st = validateAgentUrl(s.agentUrl); !st)
        return st.error();
    if (s.agentUrl.rfind("unix://", 0) == 0) {
        e.unixSocketPath = s.agentUrl.substr(7);
        e.url = "http://localhost/profiling/v1/input";
        return e;
    }
    std::string base = s.agentUrl;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    e.url = base + "/profiling/v1/input";
    return e;
}

} // namespace emberline::engine
