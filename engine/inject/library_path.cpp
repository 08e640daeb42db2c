#include "engine/inject/library_path.h"

#include "engine/common/fd_closer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace emberline::engine {
namespace {

std::string readWhole(const std::string &path, bool &ok)
{
    std::string bytes;
    FdCloser fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ok = fd.fd >= 0;
    char buffer[65536];
    ssize_t n = 0;
    while (ok && (n = ::read(fd.fd, buffer, sizeof buffer)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0;
        if (ok)
            bytes.append(buffer, static_cast<size_t>(n));
    }
    return bytes;
}

// FNV-1a: names the copy after its contents, so that the same library finds its earlier copy.
uint64_t contentHash(const std::string &bytes)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (const char c : bytes)
        hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
    return hash;
}

// Our folder in the target's temporary directory: a real directory (not a link someone placed there), ours or
// root's, writable by its owner alone. "" when it is fine, else why not.
std::string prepareFolder(const std::string &folder)
{
    if (::mkdir(folder.c_str(), 0755) == 0)
        ::chmod(folder.c_str(), 0755); // whatever our umask: every user's program must reach the copy
    else if (errno != EEXIST)
        return folder + ": " + std::strerror(errno);
    struct stat st {};
    if (::lstat(folder.c_str(), &st) != 0)
        return folder + ": " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode) || (st.st_uid != ::geteuid() && st.st_uid != 0) || (st.st_mode & 022))
        return folder + " exists but is not a private directory of this user or root";
    return {};
}

// Puts `bytes` at `path` unless a file with these very bytes is there already. link() rather than rename(): a file
// placed meanwhile by another injector is kept (the target may have mapped it).
std::string placeCopy(const std::string &folder, const std::string &path, const std::string &bytes, bool mayCopy)
{
    bool readable = false;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISREG(st.st_mode) && readWhole(path, readable) == bytes && readable)
            return {};
        return path + " exists with other contents";
    }
    if (!mayCopy)
        return path + ": no copy there";
    std::string temporary = folder + "/.copy-XXXXXX";
    FdCloser fd(::mkstemp(temporary.data()));
    if (fd.fd < 0)
        return folder + ": " + std::strerror(errno);
    const bool written =
        ::write(fd.fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) && ::fchmod(fd.fd, 0644) == 0;
    const int error = errno;
    const bool linked = written && ::link(temporary.c_str(), path.c_str()) == 0;
    const int linkError = errno;
    ::unlink(temporary.c_str());
    if (!written)
        return temporary + ": " + std::strerror(error);
    if (!linked && linkError == EEXIST)
        return placeCopy(folder, path, bytes, true);
    if (!linked)
        return path + ": " + std::strerror(linkError);
    return {};
}

} // namespace

Result<LibraryInTarget> libraryPathInTarget(int pid, const std::string &library, bool mayCopy, bool copyAlways)
{
    char real[PATH_MAX];
    if (!::realpath(library.c_str(), real))
        return makeError(Error::Code::Io, "cannot find the library " + library + ": " + std::strerror(errno));
    struct stat ours {};
    if (::stat(real, &ours) != 0 || !S_ISREG(ours.st_mode))
        return makeError(Error::Code::Invalid, std::string(real) + " is not a file");
    const std::string root = "/proc/" + std::to_string(pid) + "/root";
    struct stat theirs {};
    if (!copyAlways && ::stat((root + real).c_str(), &theirs) == 0 && theirs.st_dev == ours.st_dev &&
        theirs.st_ino == ours.st_ino)
        return LibraryInTarget{real, real, false};

    // Another mount namespace (a container), or a chroot, where that path is another file or none.
    bool readable = false;
    const std::string bytes = readWhole(real, readable);
    if (!readable)
        return makeError(Error::Code::Io, std::string("cannot read ") + real);
    std::string name = std::strrchr(real, '/') + 1;
    name = name.substr(0, name.find(".so"));
    char hash[24];
    std::snprintf(hash, sizeof hash, "-%016llx.so", static_cast<unsigned long long>(contentHash(bytes)));
    name += hash;
    std::string reasons;
    for (const char *dir : {"/tmp", "/dev/shm", "/var/tmp"}) {
        struct statvfs fs {};
        std::string reason;
        if (::statvfs((root + dir).c_str(), &fs) != 0)
            reason = std::string(dir) + ": " + std::strerror(errno);
        else if (fs.f_flag & (ST_NOEXEC | ST_RDONLY))
            reason = std::string(dir) + " is mounted " + (fs.f_flag & ST_RDONLY ? "read-only" : "noexec");
        const std::string folder = std::string(dir) + "/emberline-inject";
        const std::string copy = (folder + "/").append(name);
        if (reason.empty() && mayCopy)
            reason = prepareFolder(root + folder);
        if (reason.empty())
            reason = placeCopy(root + folder, root + copy, bytes, mayCopy);
        if (reason.empty())
            return LibraryInTarget{copy, root + copy, true};
        reasons += (reasons.empty() ? "" : "; ") + reason;
    }
    return makeError(Error::Code::Io, "process " + std::to_string(pid) + " does not see " + real +
                                          " (it runs in another mount namespace or root), and no copy could be "
                                          "placed where it can open it: " +
                                          reasons);
}

} // namespace emberline::engine
