#include "engine/common/install_paths.h"

#include <unistd.h>

#include <climits>
#include <filesystem>

namespace emberline::engine {

namespace {

// The running executable's path; empty when it cannot be read.
std::filesystem::path runningExecutable()
{
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return {};
    self[n] = '\0';
    return self;
}

} // namespace

std::string installedLibraryFile(const std::string &name)
{
    const std::filesystem::path exe = runningExecutable();
    return exe.empty() ? std::string() : (exe.parent_path().parent_path() / "lib" / "emberline" / name).string();
}

std::string installedProgramFile(const std::string &name)
{
    const std::filesystem::path exe = runningExecutable();
    return exe.empty() ? std::string() : (exe.parent_path() / name).string();
}

} // namespace emberline::engine
