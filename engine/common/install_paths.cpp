#include "engine/common/install_paths.h"

#include <unistd.h>

#include <climits>
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

} // namespace emberline::engine
