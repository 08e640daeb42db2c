#include "engine/symbols/debuglink_search.h"

#include "engine/unwind/elf_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <array>

namespace emberline::engine {
namespace {

uint32_t crcOfDescriptor(int fd)
{
    std::array<unsigned char, 65536> buffer{};
    uLong crc = crc32(0, nullptr, 0);
    off_t offset = 0;
    while (true) {
        const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), offset);
        if (n <= 0)
            break;
        crc = crc32(crc, buffer.data(), static_cast<uInt>(n));
        offset += n;
    }
    return static_cast<uint32_t>(crc);
}

bool matches(int fd, const DebuglinkSearch &search)
{
    if (!search.buildId.empty()) {
        const std::string found = readElfBuildIdOf(fd);
        if (!found.empty())
            return found == search.buildId;
    }
    return crcOfDescriptor(fd) == search.crc;
}

} // namespace

int findDebuglinkFile(const DebuglinkSearch &search, std::string *found)
{
    if (search.debuglink.empty() || search.debuglink.find('/') != std::string::npos)
        return -1;
    const size_t slash = search.binaryPath.rfind('/');
    const std::string directory = slash == std::string::npos ? std::string(".") : search.binaryPath.substr(0, slash);
    std::vector<std::string> candidates{directory + "/" + search.debuglink, directory + "/.debug/" + search.debuglink};
    for (const std::string &debugDirectory : search.debugDirectories) {
        if (debugDirectory.empty() || debugDirectory[0] != '/')
            continue;
        candidates.push_back(debugDirectory + directory + "/" + search.debuglink);
        candidates.push_back(debugDirectory + "/" + search.debuglink);
    }
    struct stat binary {};
    const bool binaryKnown = ::stat(search.binaryPath.c_str(), &binary) == 0;
    for (const std::string &candidate : candidates) {
        const int fd = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct stat status {};
        const bool regular = ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
        const bool itself = binaryKnown && status.st_dev == binary.st_dev && status.st_ino == binary.st_ino;
        if (regular && !itself && matches(fd, search)) {
            *found = candidate;
            return fd;
        }
        ::close(fd);
    }
    return -1;
}

} // namespace emberline::engine
