#pragma once

#include "engine/common/result.h"

#include <string>

struct debuginfod_client; // elfutils/debuginfod.h

namespace emberline::engine {

// Files by build id from the debuginfod servers named in DEBUGINFOD_URLS (elfutils' libdebuginfod), cached by the
// library under DEBUGINFOD_CACHE_PATH (default ~/.cache/debuginfod_client). A query is a network round trip that
// may take seconds, so it is refused on the thread of a QGuiApplication: the window asks through a job, the
// command line and the exporter ask from their own threads.
//
// Thread: any thread but the GUI thread; one client per object, not shared between threads.
class DebuginfodClient {
public:
    DebuginfodClient();
    ~DebuginfodClient();
    DebuginfodClient(const DebuginfodClient &) = delete;
    DebuginfodClient &operator=(const DebuginfodClient &) = delete;

    // DEBUGINFOD_URLS is set and not empty.
    static bool configured();
    // The path of the cached file, or why there is none (not configured, not found, server down, GUI thread).
    Result<std::string> findExecutable(const std::string &buildId);
    Result<std::string> findDebuginfo(const std::string &buildId);

private:
    enum class Kind { Executable, Debuginfo };
    Result<std::string> find(Kind kind, const std::string &buildId);

    ::debuginfod_client *m_client = nullptr;
};

} // namespace emberline::engine
