#include "engine/upload/curl_api.h"

#include "engine/common/shared_library.h"

namespace emberline::engine {
namespace {

using LoadedCurl = LoadedFunctions<CurlApi>;

LoadedCurl loadCurl()
{
    LoadedCurl loaded;
    static SharedLibrary library("libcurl.so.4");
    CurlApi &a = loaded.api;
    const bool bound =
        library.bind(a.globalInit, "curl_global_init") && library.bind(a.easyInit, "curl_easy_init") &&
        library.bind(a.easySetopt, "curl_easy_setopt") && library.bind(a.easyPerform, "curl_easy_perform") &&
        library.bind(a.easyGetinfo, "curl_easy_getinfo") && library.bind(a.easyStrerror, "curl_easy_strerror") &&
        library.bind(a.easyCleanup, "curl_easy_cleanup") && library.bind(a.mimeInit, "curl_mime_init") &&
        library.bind(a.mimeAddpart, "curl_mime_addpart") && library.bind(a.mimeName, "curl_mime_name") &&
        library.bind(a.mimeFilename, "curl_mime_filename") && library.bind(a.mimeType, "curl_mime_type") &&
        library.bind(a.mimeData, "curl_mime_data") && library.bind(a.mimeFree, "curl_mime_free") &&
        library.bind(a.slistAppend, "curl_slist_append") && library.bind(a.slistFreeAll, "curl_slist_free_all");
    if (!bound) {
        loaded.error = "libcurl could not be loaded: " + library.error();
        return loaded;
    }
    if (const CURLcode rc = a.globalInit(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
        loaded.error = std::string("libcurl could not start: ") + a.easyStrerror(rc);
        return loaded;
    }
    loaded.ok = true;
    return loaded;
}

} // namespace

const CurlApi *curlApi(std::string *error)
{
    static const LoadedCurl loaded = loadCurl();
    return loaded.get(error);
}

} // namespace emberline::engine
