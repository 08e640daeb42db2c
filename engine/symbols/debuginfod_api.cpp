#include "engine/symbols/debuginfod_api.h"

#include "engine/common/shared_library.h"

namespace emberline::engine {
namespace {

using LoadedDebuginfod = LoadedFunctions<DebuginfodApi>;

LoadedDebuginfod loadDebuginfod()
{
    LoadedDebuginfod loaded;
    static SharedLibrary library("libdebuginfod.so.1");
    DebuginfodApi &a = loaded.api;
    loaded.ok = library.bind(a.begin, "debuginfod_begin") && library.bind(a.end, "debuginfod_end") &&
                library.bind(a.findDebuginfo, "debuginfod_find_debuginfo") &&
                library.bind(a.findExecutable, "debuginfod_find_executable") &&
                library.bind(a.setProgressfn, "debuginfod_set_progressfn") &&
                library.bind(a.setUserData, "debuginfod_set_user_data") &&
                library.bind(a.getUserData, "debuginfod_get_user_data");
    if (!loaded.ok)
        loaded.error = "libdebuginfod could not be loaded: " + library.error();
    return loaded;
}

} // namespace

const DebuginfodApi *debuginfodApi(std::string *error)
{
    static const LoadedDebuginfod loaded = loadDebuginfod();
    return loaded.get(error);
}

} // namespace emberline::engine
