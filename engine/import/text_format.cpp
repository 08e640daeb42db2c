#include "engine/import/text_format.h"

#include "engine/common/fd_closer.h"
#include "engine/import/perf_script_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emberline::engine {
namespace {

constexpr size_t kMaxLineBytes = 1u << 20;

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

// Valid UTF-8 with no control character but tab and carriage return; `atEnd` false tolerates a character cut
// by the end of a sniffed head.
bool isText(std::string_view s, bool atEnd)
{
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                return false;
            if (c == 0x7f)
                return false;
            ++i;
            continue;
        }
        const size_t n = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
        if (n == 0)
            return false;
        if (i + n > s.size())
            return !atEnd;
        for (size_t k = 1; k < n; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
                return false;
        }
        i += n;
    }
    return true;
}

} // namespace

bool isTextLine(std::string_view line)
{
    // Per line, only control bytes: cheap enough for a gigabyte of perf script text, and binary data is never
    // without them for long. The sniffer checks the head of a file as UTF-8 as well. Eight bytes at a time: a
    // word without a byte below 0x20 or equal to 0x7f is clean; the few with one (a tab) are looked at bytewise.
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHighs = 0x8080808080808080ull;
    const auto clean = [](unsigned char c) { return (c >= 0x20 || c == '\t') && c != 0x7f; };
    const char *p = line.data();
    const char *const end = p + line.size();
    for (; end - p >= 8; p += 8) {
        uint64_t w = 0;
        std::memcpy(&w, p, sizeof w);
        const uint64_t below = (w - kOnes * 0x20) & ~w & kHighs;                              // some byte < 0x20
        const uint64_t del = ((w ^ (kOnes * 0x7f)) - kOnes) & ~(w ^ (kOnes * 0x7f)) & kHighs; // some byte == 0x7f
        if ((below | del) == 0)
            continue;
        for (int k = 0; k < 8; ++k) {
            if (!clean(static_cast<unsigned char>(p[k])))
                return false;
        }
    }
    for (; p < end; ++p) {
        if (!clean(static_cast<unsigned char>(*p)))
            return false;
    }
    return true;
}

ProfileFormat sniffFormat(std::string_view head)
{
    if (startsWith(head, "PERFILE2") || startsWith(head, "PERFFILE"))
        return ProfileFormat::PerfData;
    if (head.empty() || startsWith(head, "\x1f\x8b") || !isText(head, false))
        return ProfileFormat::Pprof;
    // The first line that is not blank or a comment: a perf script sample header, or a folded stack.
    size_t pos = 0;
    while (pos < head.size()) {
        const size_t end = std::min(head.find('\n', pos), head.size());
        const std::string_view line = head.substr(pos, end - pos);
        pos = end + 1;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos || line.front() == '#')
            continue;
        const bool nextIndented = pos < head.size() && (head[pos] == ' ' || head[pos] == '\t');
        return nextIndented || PerfScriptParser::isSampleHeader(line) ? ProfileFormat::PerfScript
                                                                      : ProfileFormat::Folded;
    }
    return ProfileFormat::Folded;
}

Result<ProfileFormat> sniffFileFormat(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(Error::Code::Io, path + ": cannot be opened");
    std::string head(16384, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    return sniffFormat(head);
}

std::string lineContext(size_t number, std::string_view line)
{
    std::string shown;
    for (char c : line.substr(0, 120))
        shown += c == '\t' ? ' ' : static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
    if (line.size() > 120)
        shown += "...";
    return "line " + std::to_string(number) + " (\"" + shown + "\")";
}

Status readTextLines(const std::string &path, const std::function<Status(std::string_view, size_t)> &onLine,
                     const std::atomic<bool> *cancel, const std::function<void(double)> &progress)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(Error::Code::Io, path + ": cannot be opened: " + std::strerror(errno));
    const FdCloser closer{fd};
    struct stat st {};
    const uint64_t size = ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    std::atomic<uint64_t> bytesRead{0};
    const TextRange range{fd, path, 0, UINT64_MAX, 1, cancel, nullptr, &bytesRead};
    return readTextRange(range, onLine, [&] {
        if (progress && size > 0)
            progress(static_cast<double>(bytesRead.load(std::memory_order_relaxed)) / static_cast<double>(size));
    });
}

Status readTextRange(const TextRange &range, const std::function<Status(std::string_view, size_t)> &onLine,
                     const std::function<void()> &onBlock,
                     const std::function<size_t(std::string_view, size_t &)> &takeAhead)
{
    // Whole blocks are read into a buffer that holds the cut line at its front; lines are found with memchr and
    // handed out as views into the buffer, never copied. A block is small enough to stay in the core's cache
    // between the kernel's copy into it and the parse that follows.
    constexpr size_t kBlockBytes = 256u << 10;
    std::vector<char> buffer(kMaxLineBytes + kBlockBytes);
    size_t held = 0; // bytes of a line cut by the previous block, at the buffer's front
    size_t number = range.firstNumber - 1;
    uint64_t offset = range.begin;
    const auto tooLong = [&] {
        return makeError(Error::Code::Format, range.path + ": line " + std::to_string(number + 1) +
                                                  " is longer than 1 MiB: not a text profile");
    };
    const auto emit = [&](std::string_view line) -> Status {
        if (line.size() > kMaxLineBytes)
            return tooLong();
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        return onLine(line, ++number);
    };
    while (offset < range.end) {
        if (range.cancel && range.cancel->load(std::memory_order_relaxed))
            return makeError(Error::Code::Cancelled, "cancelled");
        if (range.stop && range.stop->load(std::memory_order_relaxed))
            return makeError(Error::Code::Cancelled, "stopped");
        const size_t want = static_cast<size_t>(std::min<uint64_t>(kBlockBytes, range.end - offset));
        const ssize_t got = ::pread(range.fd, buffer.data() + held, want, static_cast<off_t>(offset));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return makeError(Error::Code::Io, range.path + ": read failed: " + std::strerror(errno));
        }
        if (got == 0)
            break;
        offset += static_cast<uint64_t>(got);
        if (range.bytesRead)
            range.bytesRead->fetch_add(static_cast<uint64_t>(got), std::memory_order_relaxed);
        const char *const data = buffer.data();
        const size_t filled = held + static_cast<size_t>(got);
        const void *lastNewline = takeAhead ? memrchr(data, '\n', filled) : nullptr;
        const size_t complete =
            lastNewline ? static_cast<size_t>(static_cast<const char *>(lastNewline) - data) + 1 : 0;
        size_t pos = 0;
        for (;;) {
            const void *nl = std::memchr(data + pos, '\n', filled - pos);
            if (!nl)
                break;
            const auto at = static_cast<size_t>(static_cast<const char *>(nl) - data);
            if (Status s = emit(std::string_view(data + pos, at - pos)); !s)
                return s.error();
            pos = at + 1;
            if (takeAhead && pos < complete)
                pos += takeAhead(std::string_view(data + pos, complete - pos), number);
        }
        held = filled - pos;
        if (held > kMaxLineBytes)
            return tooLong();
        std::memmove(buffer.data(), data + pos, held);
        if (onBlock)
            onBlock();
    }
    if (held > 0) {
        if (Status s = emit(std::string_view(buffer.data(), held)); !s)
            return s.error();
    }
    return Ok{};
}

} // namespace emberline::engine
