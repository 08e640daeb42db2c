#include "engine/upload/api_key_store.h"

#include <QStandardPaths>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace emberline::engine {
namespace {

Error ioError(const std::string &what, const std::string &path)
{
    return makeError(Error::Code::Io, what + " " + path + ": " + std::strerror(errno));
}

std::string trimmed(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
        s.pop_back();
    size_t start = 0;
    while (start < s.size() && (s[start] == ' ' || s[start] == '\t'))
        ++start;
    return s.substr(start);
}

} // namespace

std::string defaultApiKeyPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation).toStdString() +
           "/emberline/datadog-api-key";
}

Result<std::string> readApiKeyFile(const std::string &path)
{
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return ioError("cannot open the API key file", path);
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return makeError(Error::Code::Invalid, "the API key file " + path + " is not a regular file");
    }
    if (st.st_uid != getuid()) {
        close(fd);
        return makeError(Error::Code::Permission, "the API key file " + path + " belongs to another user");
    }
    if ((st.st_mode & 077) != 0) {
        close(fd);
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return makeError(Error::Code::Permission, "the API key file " + path + " may be read by other users (mode " +
                                                      mode + "); run: chmod 600 " + path);
    }
    std::string key;
    char buffer[256];
    ssize_t n = 0;
    while ((n = read(fd, buffer, sizeof buffer)) > 0 && key.size() < 4096)
        key.append(buffer, static_cast<size_t>(n));
    close(fd);
    if (n < 0)
        return ioError("cannot read the API key file", path);
    return trimmed(std::move(key));
}

Status writeApiKeyFile(const std::string &path, const std::string &key)
{
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
        std::filesystem::create_directories(dir, ec);
        if (ec)
            return makeError(Error::Code::Io, "cannot create " + dir.string() + ": " + ec.message());
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    }
    const std::string temporary = path + ".tmp";
    unlink(temporary.c_str());
    const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return ioError("cannot create", temporary);
    fchmod(fd, 0600); // whatever the umask
    const std::string text = key + "\n";
    const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
    close(fd);
    if (!written || rename(temporary.c_str(), path.c_str()) != 0) {
        const Error e = ioError("cannot write the API key file", path);
        unlink(temporary.c_str());
        return e;
    }
    return Ok{};
}

Status removeApiKeyFile(const std::string &path)
{
    if (unlink(path.c_str()) != 0 && errno != ENOENT)
        return ioError("cannot remove", path);
    return Ok{};
}

} // namespace emberline::engine
