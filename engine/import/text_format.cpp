#include "engine/import/text_format.h"

#include "engine/import/perf_script_reader.h"

#include <cstdio>
#include <fstream>
#include <memory>

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
    // without them for long. The sniffer checks the head of a file as UTF-8 as well.
    bool control = false;
    for (const char ch : line) {
        const auto c = static_cast<unsigned char>(ch);
        control |= (c < 0x20 && c != '\t') || c == 0x7f;
    }
    return !control;
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
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(Error::Code::Io, path + ": cannot be opened");
    in.seekg(0, std::ios::end);
    const auto size = static_cast<double>(in.tellg());
    in.seekg(0);
    auto buffer = std::make_unique<char[]>(kMaxLineBytes + 1);
    for (size_t number = 1;; ++number) {
        in.getline(buffer.get(), static_cast<std::streamsize>(kMaxLineBytes + 1));
        if (in.fail() && !in.eof())
            return makeError(Error::Code::Format,
                             path + ": line " + std::to_string(number) + " is longer than 1 MiB: not a text profile");
        const auto got = static_cast<size_t>(in.gcount());
        if (got == 0 && in.eof())
            break;
        std::string_view line(buffer.get(), got - (in.eof() ? 0 : 1));
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (Status s = onLine(line, number); !s)
            return s.error();
        if (in.eof())
            break;
        if ((number & 0xFFFF) == 0) {
            if (cancel && cancel->load(std::memory_order_relaxed))
                return makeError(Error::Code::Cancelled, "cancelled");
            if (progress && size > 0)
                progress(static_cast<double>(in.tellg()) / size);
        }
    }
    return Ok{};
}

} // namespace emberline::engine
