#include "engine/upload/http_transport.h"

#include "engine/upload/curl_api.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>

namespace emberline::engine {
namespace {

size_t collectBody(char *data, size_t size, size_t count, void *user)
{
    auto *body = static_cast<std::string *>(user);
    const size_t n = size * count;
    if (body->size() < 1024)
        body->append(data, std::min(n, 1024 - body->size()));
    return n;
}

int checkCancel(void *user, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    const auto *cancel = static_cast<const std::atomic<bool> *>(user);
    return cancel && cancel->load() ? 1 : 0;
}

void addPart(const CurlApi &curl, curl_mime *mime, const std::string &name, const std::string &filename,
             const char *type, const std::string &bytes)
{
    curl_mimepart *part = curl.mimeAddpart(mime);
    curl.mimeName(part, name.c_str());
    curl.mimeFilename(part, filename.c_str());
    if (type)
        curl.mimeType(part, type);
    curl.mimeData(part, bytes.data(), bytes.size());
}

} // namespace

ContainerIdentity parseCgroupFile(const std::string &contents)
{
    static const std::regex id(
        R"(([0-9a-f]{64})|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})|([0-9a-f]{32}-[0-9]+))");
    ContainerIdentity identity;
    std::istringstream lines(contents);
    std::string line;
    std::string v2Path;
    while (std::getline(lines, line)) {
        const size_t colon = line.rfind(':');
        if (colon == std::string::npos)
            continue;
        const std::string path = line.substr(colon + 1);
        if (line.rfind("0::", 0) == 0)
            v2Path = path;
        const std::string last = path.substr(path.rfind('/') + 1);
        std::smatch m;
        if (identity.containerId.empty() && std::regex_search(last, m, id))
            identity.containerId = m.str(0);
    }
    if (!identity.containerId.empty()) {
        identity.entityId = "cid-" + identity.containerId;
    } else if (!v2Path.empty() && v2Path != "/") {
        struct stat st {};
        if (stat(("/sys/fs/cgroup" + v2Path).c_str(), &st) == 0)
            identity.entityId = "in-" + std::to_string(st.st_ino);
    }
    return identity;
}

ContainerIdentity containerIdentity(int pid)
{
    std::ifstream in(pid > 0 ? "/proc/" + std::to_string(pid) + "/cgroup" : std::string("/proc/self/cgroup"));
    std::stringstream contents;
    contents << in.rdbuf();
    return parseCgroupFile(contents.str());
}

std::vector<HttpHeader> uploadHeaders(const UploadSettings &settings, const UploadEndpoint &endpoint, int targetPid,
                                      bool revealSecrets)
{
    std::vector<HttpHeader> h{{"DD-EVP-ORIGIN", "emberline"},
                              {"DD-EVP-ORIGIN-VERSION", EMBERLINE_VERSION},
                              {"User-Agent", "Emberline/" EMBERLINE_VERSION},
                              {"Connection", "close"}};
    if (endpoint.agentless)
        h.push_back({"DD-API-KEY", revealSecrets ? settings.apiKey : std::string("<hidden>")});
    const ContainerIdentity container = containerIdentity(targetPid);
    if (!container.containerId.empty())
        h.push_back({"Datadog-Container-ID", container.containerId});
    if (!container.entityId.empty())
        h.push_back({"Datadog-Entity-ID", container.entityId});
    if (!settings.externalEnv.empty())
        h.push_back({"Datadog-External-Env", settings.externalEnv});
    if (!settings.testSessionToken.empty())
        h.push_back({"X-Datadog-Test-Session-Token", settings.testSessionToken});
    return h;
}

HttpResult postPayload(const UploadEndpoint &endpoint, const std::vector<HttpHeader> &headers,
                       const UploadPayload &payload, int timeoutMs, int connectTimeoutMs,
                       const std::atomic<bool> *cancel)
{
    HttpResult result;
    const CurlApi *api = curlApi(&result.error);
    if (api == nullptr) {
        result.networkError = true;
        return result;
    }
    CURL *curl = api->easyInit();
    if (!curl) {
        result.networkError = true;
        result.error = "libcurl could not start a transfer";
        return result;
    }
    curl_mime *mime = api->mimeInit(curl);
    addPart(*api, mime, "event", "event.json", "application/json", payload.eventJson);
    for (const UploadAttachment &a : payload.attachments)
        addPart(*api, mime, a.name, a.name, nullptr, a.bytes);

    curl_slist *list = nullptr;
    for (const auto &[name, value] : headers) {
        if (name == "User-Agent")
            continue;
        std::string line = name;
        line += ": ";
        line += value;
        list = api->slistAppend(list, line.c_str());
    }
    list = api->slistAppend(list, "Expect:"); // no 100-continue round trip
    char errorBuffer[CURL_ERROR_SIZE] = {};

    api->easySetopt(curl, CURLOPT_URL, endpoint.url.c_str());
    if (!endpoint.unixSocketPath.empty())
        api->easySetopt(curl, CURLOPT_UNIX_SOCKET_PATH, endpoint.unixSocketPath.c_str());
    api->easySetopt(curl, CURLOPT_PROTOCOLS_STR, endpoint.agentless ? "https" : "http,https");
    api->easySetopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    api->easySetopt(curl, CURLOPT_NOSIGNAL, 1L);
    api->easySetopt(curl, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
    api->easySetopt(curl, CURLOPT_USERAGENT, "Emberline/" EMBERLINE_VERSION);
    api->easySetopt(curl, CURLOPT_HTTPHEADER, list);
    api->easySetopt(curl, CURLOPT_MIMEPOST, mime);
    api->easySetopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeoutMs));
    api->easySetopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connectTimeoutMs));
    api->easySetopt(curl, CURLOPT_WRITEFUNCTION, collectBody);
    api->easySetopt(curl, CURLOPT_WRITEDATA, &result.responseBody);
    api->easySetopt(curl, CURLOPT_ERRORBUFFER, errorBuffer);
    api->easySetopt(curl, CURLOPT_NOPROGRESS, 0L);
    api->easySetopt(curl, CURLOPT_XFERINFOFUNCTION, checkCancel);
    api->easySetopt(curl, CURLOPT_XFERINFODATA, cancel);

    const auto started = std::chrono::steady_clock::now();
    const CURLcode rc = api->easyPerform(curl);
    result.latencyNs =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count();
    curl_off_t uploaded = 0;
    api->easyGetinfo(curl, CURLINFO_SIZE_UPLOAD_T, &uploaded);
    result.bytesSent = static_cast<uint64_t>(uploaded);
    if (rc == CURLE_OK) {
        api->easyGetinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
    } else {
        result.networkError = true;
        result.timedOut = rc == CURLE_OPERATION_TIMEDOUT;
        result.cancelled = rc == CURLE_ABORTED_BY_CALLBACK;
        result.error = errorBuffer[0] ? errorBuffer : api->easyStrerror(rc);
    }
    api->slistFreeAll(list);
    api->mimeFree(mime);
    api->easyCleanup(curl);
    return result;
}

} // namespace emberline::engine
