#pragma once

#include <elfutils/debuginfod.h>

#include <string>

namespace emberline::engine {

// The libdebuginfod functions Emberline calls (the symbolizer's fetches, the disassembler's executables).
// libdebuginfod (libdebuginfod.so.1, Debian's libdebuginfod1) is loaded when first asked for, where DEBUGINFOD_URLS
// is set, as elfutils' libdw itself loads it: not at the program's start (engine/common/shared_library.h).
struct DebuginfodApi {
    decltype(&::debuginfod_begin) begin = nullptr;
    decltype(&::debuginfod_end) end = nullptr;
    decltype(&::debuginfod_find_debuginfo) findDebuginfo = nullptr;
    decltype(&::debuginfod_find_executable) findExecutable = nullptr;
    decltype(&::debuginfod_set_progressfn) setProgressfn = nullptr;
    decltype(&::debuginfod_set_user_data) setUserData = nullptr;
    decltype(&::debuginfod_get_user_data) getUserData = nullptr;
};

// libdebuginfod's functions, loaded once for the whole program (thread-safe); nullptr where it cannot be loaded or
// lacks one of them, and then `error` (if given) says why.
const DebuginfodApi *debuginfodApi(std::string *error = nullptr);

} // namespace emberline::engine
