#include "engine/common/install_paths.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace emberline::engine {

std::string installedLibraryFile(const std::string &name)
{
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return {};
    self[n] = '\0';
    const std::filesystem::path exe(self);
    return (exe.parent_path().parent_path() / "lib" / "emberline" / name).string();
}

std::string keptFilesDirectory(const char *name, const char *offVariable)
{
    if (const char *off = std::getenv(offVariable); off && std::strcmp(off, "off") == 0)
        return {};
    if (const char *cache = std::getenv("XDG_CACHE_HOME"); cache && cache[0] == '/')
        return std::string(cache) + "/emberline/" + name;
    if (const char *home = std::getenv("HOME"); home && home[0] == '/')
        return std::string(home) + "/.cache/emberline/" + name;
    return {};
}

} // namespace emberline::engine
