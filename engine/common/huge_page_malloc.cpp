#include "engine/common/huge_page_malloc.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace emberline::engine {
namespace {

constexpr const char *kTunables = "GLIBC_TUNABLES";
constexpr const char *kHugePages = "glibc.malloc.hugetlb=1";
// Set for the second start: "=" and the user's GLIBC_TUNABLES, or "-" when there was none.
constexpr const char *kSaved = "EMBERLINE_SAVED_GLIBC_TUNABLES";

bool transparentHugePagesOff()
{
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string modes;
    std::getline(in, modes);
    return !in || modes.find("[never]") != std::string::npos;
}

} // namespace

void useHugePageMalloc(char **argv)
{
    // The program's own path, not /proc/self/exe: the kernel names the process after the file it executes, and
    // `ps` and `top` should say emberline.
    char self[4096];
    const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0)
        return;
    self[length] = '\0';
    execWithHugePageMalloc(self, argv);
}

void execWithHugePageMalloc(const char *program, char **argv)
{
    if (const char *saved = std::getenv(kSaved)) {
        // The second start: malloc has read the tunable; the user's environment comes back for every child.
        const std::string value(saved);
        if (value.rfind('=', 0) == 0)
            ::setenv(kTunables, value.c_str() + 1, 1);
        else
            ::unsetenv(kTunables);
        ::unsetenv(kSaved);
        return;
    }
    const char *own = std::getenv(kTunables);
    const char *choice = std::getenv("EMBERLINE_HUGE_PAGES");
    if ((own && std::strstr(own, "glibc.malloc.hugetlb")) || (choice && std::strcmp(choice, "0") == 0) ||
        transparentHugePagesOff())
        return;
    const std::string ownValue = own ? own : "";
    const std::string tunables = ownValue.empty() ? kHugePages : ownValue + ":" + kHugePages;
    ::setenv(kSaved, own ? ("=" + ownValue).c_str() : "-", 1);
    ::setenv(kTunables, tunables.c_str(), 1);
    ::execv(program, argv);
    // The restart failed: go on as started, with the environment as it was.
    if (own)
        ::setenv(kTunables, ownValue.c_str(), 1);
    else
        ::unsetenv(kTunables);
    ::unsetenv(kSaved);
}

} // namespace emberline::engine
