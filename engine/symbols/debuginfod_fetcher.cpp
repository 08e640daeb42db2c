#include "engine/symbols/debuginfod_fetcher.h"

#include "engine/common/strings.h"
#include "engine/symbols/debuginfod_api.h"
#include "engine/symbols/symbols_logging.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace emberline::engine {
namespace {

// libdebuginfod answers with -errno; these are the ones it maps its transfer failures to.
std::string describeFailure(int error)
{
    switch (error) {
    case ENOENT:
        return "the server has no debug file for this build id";
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ENETUNREACH:
        return std::string("the server is down or unreachable (") + std::strerror(error) + ")";
    case ETIME:
    case ETIMEDOUT:
        return "the server did not answer in time (DEBUGINFOD_TIMEOUT)";
    case ECONNRESET:
        return "the connection to the server broke off";
    case EINTR:
        return "cancelled when the session ended";
    case ENOSYS:
        return "DEBUGINFOD_URLS names no server";
    default:
        break;
    }
    return std::string("the download failed (") + std::strerror(error) + ")";
}

bool hasSection(Elf *elf, bool wantSymtab)
{
    size_t namesIndex = 0;
    if (elf_getshdrstrndx(elf, &namesIndex) != 0)
        return false;
    for (Elf_Scn *section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == nullptr || header.sh_type == SHT_NOBITS || header.sh_size == 0)
            continue;
        if (wantSymtab) {
            if (header.sh_type == SHT_SYMTAB)
                return true;
            continue;
        }
        const char *name = elf_strptr(elf, namesIndex, header.sh_name);
        if (name != nullptr && (std::strcmp(name, ".debug_info") == 0 || std::strcmp(name, ".zdebug_info") == 0))
            return true;
    }
    return false;
}

Status checkElf(Elf *elf, const std::string &buildId)
{
    if (elf == nullptr || elf_kind(elf) != ELF_K_ELF)
        return makeError(Error::Code::Format, "the server sent a file that is not ELF");
    const void *bits = nullptr;
    const ssize_t length = dwelf_elf_gnu_build_id(elf, &bits);
    if (length <= 0)
        return makeError(Error::Code::Format, "the server sent an ELF file without a build id");
    const std::string found = hexBytes(static_cast<const unsigned char *>(bits), static_cast<size_t>(length));
    if (found != lowercaseHex(buildId))
        return makeError(Error::Code::Format, "the server sent the file of another build (build id " + found + ")");
    if (!hasSection(elf, false) && !hasSection(elf, true))
        return makeError(Error::Code::Format, "the server sent a file with neither DWARF nor a symbol table");
    return Ok{};
}

// A refused file must not be found in the cache by the next session (or by libdwfl's own lookup).
void dropFromCache(const std::string &path)
{
    const std::string cache = DebuginfodFetcher::cacheDirectory();
    if (cache.empty() || !path.starts_with(cache + "/"))
        return;
    ::unlink(path.c_str());
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > cache.size())
        ::rmdir(path.substr(0, slash).c_str()); // only when empty
}

} // namespace

DebuginfodFetcher::DebuginfodFetcher() = default;

DebuginfodFetcher::~DebuginfodFetcher()
{
    m_worker.stop(WorkerStop::Discard);
}

bool DebuginfodFetcher::request(const std::string &buildId, const std::string &module)
{
    if (buildId.empty())
        return false;
    std::lock_guard lock(m_mutex);
    if (m_worker.stopRequested() || m_fetches.contains(buildId))
        return false;
    m_fetches[buildId].state = DebuginfodState::Waiting;
    m_worker.post(buildId);
    qCInfo(lcSymbols, "asking debuginfod for the debug file of %s (build id %s)", module.c_str(), buildId.c_str());
    if (!m_worker.started()) {
        m_worker.start({.item = [this](std::string &id) { download(id); },
                        .finished =
                            [this](std::vector<std::string> &) {
                                // Whatever was still queued stays Waiting: the session has ended.
                                if (m_client != nullptr)
                                    debuginfodApi()->end(m_client);
                            }});
    }
    return true;
}

DebuginfodStatus DebuginfodFetcher::status(const std::string &buildId) const
{
    std::lock_guard lock(m_mutex);
    auto it = m_fetches.find(buildId);
    return it != m_fetches.end() ? it->second : DebuginfodStatus{};
}

std::vector<std::pair<std::string, std::string>> DebuginfodFetcher::takeFound()
{
    std::lock_guard lock(m_mutex);
    return std::exchange(m_found, {});
}

bool DebuginfodFetcher::waitIdle(int timeoutMs)
{
    return m_worker.waitIdle(std::chrono::milliseconds(timeoutMs));
}

std::string DebuginfodFetcher::cacheDirectory()
{
    if (const char *path = std::getenv("DEBUGINFOD_CACHE_PATH"); path != nullptr && *path != '\0')
        return path;
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
        return std::string(xdg) + "/debuginfod_client";
    if (const char *home = std::getenv("HOME"); home != nullptr && *home != '\0')
        return std::string(home) + "/.cache/debuginfod_client";
    return {};
}

Status DebuginfodFetcher::checkDebugFile(const std::string &path, const std::string &buildId)
{
    static const bool initialised = elf_version(EV_CURRENT) != EV_NONE;
    (void)initialised;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(Error::Code::Io, "the downloaded file cannot be read: " + std::string(std::strerror(errno)));
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    Status checked = checkElf(elf, buildId);
    if (elf != nullptr)
        elf_end(elf);
    ::close(fd);
    return checked;
}

int DebuginfodFetcher::progress(::debuginfod_client *client, long bytes, long total)
{
    auto *self = static_cast<DebuginfodFetcher *>(debuginfodApi()->getUserData(client));
    std::lock_guard lock(self->m_mutex);
    if (auto it = self->m_fetches.find(self->m_current); it != self->m_fetches.end()) {
        it->second.state = DebuginfodState::Downloading;
        it->second.bytes = bytes;
        // libdebuginfod reports the size once the server's headers are in, and may report it unknown again in a
        // later call: the last known size stays.
        if (total > 0)
            it->second.totalBytes = total;
    }
    return self->m_worker.stopRequested() ? 1 : 0; // non-zero cancels the transfer
}

Result<std::string> DebuginfodFetcher::fetch(::debuginfod_client *client, const std::string &buildId)
{
    char *path = nullptr;
    // A build id length of 0 means a hex string.
    const int fd =
        debuginfodApi()->findDebuginfo(client, reinterpret_cast<const unsigned char *>(buildId.c_str()), 0, &path);
    const std::string found = path != nullptr ? path : "";
    std::free(path);
    // Unsupported marks the servers' plain "no such file" (DebuginfodState::NotFound) apart from failures.
    if (fd == -ENOENT)
        return makeError(Error::Code::Unsupported, describeFailure(ENOENT));
    if (fd < 0)
        return makeError(Error::Code::Io, describeFailure(-fd));
    ::close(fd);
    if (found.empty())
        return makeError(Error::Code::Io, "the server's answer came without a file");
    if (Status checked = checkDebugFile(found, buildId); !checked) {
        dropFromCache(found);
        return checked.error();
    }
    return found;
}

void DebuginfodFetcher::download(const std::string &buildId)
{
    // Why there is no client, for every fetch: the library's loading error where it could not be loaded.
    std::string notStarted = "the client could not start";
    const DebuginfodApi *api = debuginfodApi(&notStarted);
    if (!m_clientBegun) {
        m_clientBegun = true;
        m_client = api != nullptr ? api->begin() : nullptr;
        if (m_client != nullptr) {
            api->setUserData(m_client, this);
            api->setProgressfn(m_client, &DebuginfodFetcher::progress);
        }
    }
    {
        std::lock_guard lock(m_mutex);
        m_current = buildId;
    }
    Result<std::string> fetched = m_client != nullptr
                                      ? fetch(m_client, buildId)
                                      : Result<std::string>(makeError(Error::Code::Internal, notStarted));
    std::lock_guard lock(m_mutex);
    DebuginfodStatus &status = m_fetches[buildId];
    if (fetched) {
        status.state = DebuginfodState::Found;
        status.path = fetched.value();
        m_found.emplace_back(buildId, fetched.value());
        qCInfo(lcSymbols, "debuginfod gave build id %s: %s", buildId.c_str(), status.path.c_str());
    } else {
        status.state =
            fetched.error().code == Error::Code::Unsupported ? DebuginfodState::NotFound : DebuginfodState::Failed;
        status.error = fetched.error().message;
        qCInfo(lcSymbols, "debuginfod, build id %s: %s", buildId.c_str(), status.error.c_str());
    }
    m_current.clear();
}

} // namespace emberline::engine
