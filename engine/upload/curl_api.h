#pragma once

#include <curl/curl.h>

#include <string>

namespace emberline::engine {

// The libcurl functions the uploader calls. libcurl (libcurl.so.4, Debian's libcurl4) is loaded, and
// curl_global_init called, at the first upload, not at the program's start (engine/common/shared_library.h).
struct CurlApi {
    decltype(&::curl_global_init) globalInit = nullptr;
    decltype(&::curl_easy_init) easyInit = nullptr;
    decltype(&::curl_easy_setopt) easySetopt = nullptr;
    decltype(&::curl_easy_perform) easyPerform = nullptr;
    decltype(&::curl_easy_getinfo) easyGetinfo = nullptr;
    decltype(&::curl_easy_strerror) easyStrerror = nullptr;
    decltype(&::curl_easy_cleanup) easyCleanup = nullptr;
    decltype(&::curl_mime_init) mimeInit = nullptr;
    decltype(&::curl_mime_addpart) mimeAddpart = nullptr;
    decltype(&::curl_mime_name) mimeName = nullptr;
    decltype(&::curl_mime_filename) mimeFilename = nullptr;
    decltype(&::curl_mime_type) mimeType = nullptr;
    decltype(&::curl_mime_data) mimeData = nullptr;
    decltype(&::curl_mime_free) mimeFree = nullptr;
    decltype(&::curl_slist_append) slistAppend = nullptr;
    decltype(&::curl_slist_free_all) slistFreeAll = nullptr;
};

// libcurl's functions, loaded once for the whole program (thread-safe); nullptr where libcurl cannot be loaded or
// lacks one of them, and then `error` (if given) says why.
const CurlApi *curlApi(std::string *error = nullptr);

} // namespace emberline::engine
