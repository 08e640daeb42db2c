#include "engine/inject/remote_memory.h"

#include "engine/common/fd_closer.h"

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace emberline::engine {
namespace {

std::string describe(const char *what, uint64_t address, size_t size, int error)
{
    char text[96];
    std::snprintf(text, sizeof text, " %zu bytes at 0x%llx: ", size, static_cast<unsigned long long>(address));
    return std::string(what) + text + std::strerror(error);
}

bool viaProcMem(int pid, uint64_t address, void *buffer, size_t size, bool write)
{
    FdCloser fd(::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), (write ? O_RDWR : O_RDONLY) | O_CLOEXEC));
    if (fd.fd < 0)
        return false;
    const auto offset = static_cast<off_t>(address);
    const ssize_t n = write ? ::pwrite(fd.fd, buffer, size, offset) : ::pread(fd.fd, buffer, size, offset);
    return n == static_cast<ssize_t>(size);
}

// Word by word; the partial words at either end are read first so that the bytes around the range stay as they are.
bool viaPtrace(int tid, uint64_t address, void *buffer, size_t size, bool write)
{
    auto *bytes = static_cast<uint8_t *>(buffer);
    const uint64_t first = address & ~uint64_t(7);
    for (uint64_t word = first; word < address + size; word += 8) {
        errno = 0;
        // NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace takes the remote address as a pointer
        long value = ::ptrace(PTRACE_PEEKDATA, tid, reinterpret_cast<void *>(word), nullptr);
        if (errno != 0)
            return false;
        const uint64_t from = std::max(word, address);
        const uint64_t to = std::min(word + 8, address + size);
        auto *valueBytes = reinterpret_cast<uint8_t *>(&value);
        if (write) {
            std::memcpy(valueBytes + (from - word), bytes + (from - address), to - from);
            // NOLINTNEXTLINE(performance-no-int-to-ptr): as above
            if (::ptrace(PTRACE_POKEDATA, tid, reinterpret_cast<void *>(word), reinterpret_cast<void *>(value)) != 0)
                return false;
        } else {
            std::memcpy(bytes + (from - address), valueBytes + (from - word), to - from);
        }
    }
    return true;
}

} // namespace

Status readRemote(int pid, int tid, uint64_t address, void *out, size_t size)
{
    iovec local{out, size};
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the remote address as a pointer
    iovec remote{reinterpret_cast<void *>(address), size};
    if (::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size))
        return Ok{};
    const int error = errno;
    if (viaProcMem(pid, address, out, size, false) || (tid > 0 && viaPtrace(tid, address, out, size, false)))
        return Ok{};
    return makeError(Error::Code::Io, describe("cannot read the target's memory:", address, size, error));
}

Status writeRemote(int pid, int tid, uint64_t address, const void *data, size_t size)
{
    iovec local{const_cast<void *>(data), size};
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the remote address as a pointer
    iovec remote{reinterpret_cast<void *>(address), size};
    if (::process_vm_writev(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size))
        return Ok{};
    const int error = errno;
    void *buffer = const_cast<void *>(data); // written from, never to
    if (viaProcMem(pid, address, buffer, size, true) || (tid > 0 && viaPtrace(tid, address, buffer, size, true)))
        return Ok{};
    return makeError(Error::Code::Io, describe("cannot write the target's memory:", address, size, error));
}

Result<std::string> readRemoteString(int pid, int tid, uint64_t address, size_t maxBytes)
{
    std::string out;
    // A page at a time: a string that ends near the end of its mapping must not make the read fail.
    while (out.size() < maxBytes) {
        const size_t inPage = 4096 - ((address + out.size()) & 4095);
        const size_t chunk = std::min(inPage, maxBytes - out.size());
        char buffer[4096];
        if (auto st = readRemote(pid, tid, address + out.size(), buffer, chunk); !st)
            return st.error();
        const void *nul = std::memchr(buffer, '\0', chunk);
        if (nul) {
            out.append(buffer, static_cast<const char *>(nul) - buffer);
            return out;
        }
        out.append(buffer, chunk);
    }
    return out;
}

} // namespace emberline::engine
