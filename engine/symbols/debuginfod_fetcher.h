#pragma once

#include "engine/common/result.h"
#include "engine/common/worker.h"
#include "engine/health/unwind_health.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

struct debuginfod_client; // elfutils/debuginfod.h

namespace emberline::engine {

// Downloads the debug files of modules that have no local debug information, by build id, from the servers in
// DEBUGINFOD_URLS (elfutils' libdebuginfod, which keeps its own cache), on a thread of its own: a download may
// take seconds or minutes, and the symbolizer asks for it and goes on naming frames with what it has. A file
// that arrives is checked before anyone uses it (an ELF file with the same build id and a symbol table or DWARF);
// one that is not is refused and removed from the cache, so that no later session trusts it either. Each build
// id is asked for once per fetcher, whatever the answer.
//
// Thread: request(), status(), takeFound() and waitIdle() from one owner thread (the exporter's Symbolizer);
// downloads on the fetcher's own thread (a Worker), started at the first request. The destructor cancels a download
// in progress and joins.
class DebuginfodFetcher {
public:
    DebuginfodFetcher();
    ~DebuginfodFetcher();
    DebuginfodFetcher(const DebuginfodFetcher &) = delete;
    DebuginfodFetcher &operator=(const DebuginfodFetcher &) = delete;

    // Queues the download of `buildId`'s debug file for `module` (a path, for messages) unless it was asked for
    // already. Returns at once; whether it was queued now.
    bool request(const std::string &buildId, const std::string &module);
    // NotAsked for a build id never requested.
    DebuginfodStatus status(const std::string &buildId) const;
    // The (build id, checked debug file) pairs found since the last call.
    std::vector<std::pair<std::string, std::string>> takeFound();
    // Waits until no download is queued or running, at most `timeoutMs`; whether it is idle.
    bool waitIdle(int timeoutMs);
    // Whether `path` can stand for the debug file of `buildId`: readable ELF, the same GNU build id, and a symbol
    // table or DWARF. The error says what is wrong with it.
    static Status checkDebugFile(const std::string &path, const std::string &buildId);
    // Where libdebuginfod caches files: DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
    // ~/.cache/debuginfod_client.
    static std::string cacheDirectory();

private:
    void download(const std::string &buildId);
    Result<std::string> fetch(::debuginfod_client *client, const std::string &buildId);
    static int progress(::debuginfod_client *client, long bytes, long total);

    mutable std::mutex m_mutex;
    std::unordered_map<std::string, DebuginfodStatus> m_fetches;
    std::vector<std::pair<std::string, std::string>> m_found;
    std::string m_current; // the build id being downloaded, "" between downloads
    // The fetcher thread's own: begun at its first download, ended when it stops.
    ::debuginfod_client *m_client = nullptr;
    bool m_clientBegun = false;
    Worker<std::string> m_worker{{"debuginfod"}}; // last: it stops before what it uses goes
};

} // namespace emberline::engine
