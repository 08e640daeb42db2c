#include "engine/symbols/perf_map.h"

#include <algorithm>
#include <charconv>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emberline::engine {
namespace {

bool parseHex(std::string_view text, uint64_t &out)
{
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        text.remove_prefix(2);
    if (text.empty())
        return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
    return ec == std::errc() && end == text.data() + text.size();
}

std::string_view nextField(std::string_view &rest)
{
    const size_t space = rest.find(' ');
    const std::string_view field = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    return field;
}

} // namespace

void PerfMap::parseLine(std::string_view line)
{
    ++m_lines;
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    if (line.empty())
        return;
    std::string_view rest = line;
    uint64_t start = 0;
    uint64_t size = 0;
    const bool numbers = parseHex(nextField(rest), start) && parseHex(nextField(rest), size);
    const bool control =
        std::any_of(rest.begin(), rest.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t'; });
    if (!numbers || size == 0 || start + size < start || rest.empty() || control ||
        line.size() > m_limits.maxLineBytes || m_names.size() + rest.size() > UINT32_MAX) {
        ++m_malformed;
        return;
    }
    m_entries.push_back(
        Entry{start, start + size, m_lines, static_cast<uint32_t>(m_names.size()), static_cast<uint32_t>(rest.size())});
    m_names.append(rest);
    m_maxSpan = std::max(m_maxSpan, size);
}

void PerfMap::parse(std::string_view text)
{
    const size_t before = m_entries.size();
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t newline = text.find('\n', pos);
        if (newline == std::string_view::npos)
            break; // a line still being written: read it next time, whole
        parseLine(text.substr(pos, newline - pos));
        pos = newline + 1;
    }
    m_readBytes += pos;
    if (m_entries.size() != before) {
        const auto byStart = [](const Entry &a, const Entry &b) {
            return a.start != b.start ? a.start < b.start : a.order < b.order;
        };
        std::sort(m_entries.begin() + static_cast<std::ptrdiff_t>(before), m_entries.end(), byStart);
        std::inplace_merge(m_entries.begin(), m_entries.begin() + static_cast<std::ptrdiff_t>(before), m_entries.end(),
                           byStart);
    }
}

bool PerfMap::refresh()
{
    const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    m_opened = true;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return false;
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size < m_readBytes) {
        // Rewritten (a new process with this pid): start again.
        const size_t rewrites = m_rewrites + 1;
        *this = PerfMap(m_path, m_limits);
        m_opened = true;
        m_rewrites = rewrites;
    }
    const uint64_t end = std::min(size, m_limits.maxBytes);
    m_overLimit = size > m_limits.maxBytes;
    std::string text;
    constexpr size_t kChunk = 1 << 20;
    while (m_readBytes < end) {
        // Read from the first unconsumed byte: whole lines are parsed, a cut one is read again next time.
        const uint64_t want = std::min<uint64_t>(end - m_readBytes, kChunk);
        text.resize(static_cast<size_t>(want));
        const ssize_t got = ::pread(fd, text.data(), text.size(), static_cast<off_t>(m_readBytes));
        if (got <= 0)
            break;
        text.resize(static_cast<size_t>(got));
        const uint64_t consumedBefore = m_readBytes;
        parse(text);
        if (m_readBytes == consumedBefore) {
            if (text.size() >= m_limits.maxLineBytes && text.find('\n') == std::string::npos) {
                // No newline in a chunk: one line longer than any name; skip past it.
                ++m_malformed;
                m_readBytes += text.size();
                continue;
            }
            break;
        }
    }
    ::close(fd);
    return true;
}

std::string_view PerfMap::lookup(uint64_t address) const
{
    // Entries starting at or before `address`, the latest start first; a blob holding it starts within the
    // longest blob's size (and a hostile file's huge blob costs at most kMaxScan steps).
    constexpr int kMaxScan = 4096;
    auto it = std::upper_bound(m_entries.begin(), m_entries.end(), address,
                               [](uint64_t v, const Entry &e) { return v < e.start; });
    const Entry *best = nullptr;
    for (int steps = 0; it != m_entries.begin() && steps < kMaxScan; ++steps) {
        --it;
        if (address - it->start >= m_maxSpan)
            break;
        if (address < it->end && (!best || it->order > best->order))
            best = &*it;
    }
    return best ? std::string_view(m_names).substr(best->name, best->nameSize) : std::string_view();
}

std::string PerfMap::describe() const
{
    if (!m_opened)
        return m_path + ": not found";
    std::string s = m_path + ": " + std::to_string(m_entries.size()) + " symbols";
    if (m_malformed > 0)
        s += ", " + std::to_string(m_malformed) + " malformed line(s) skipped";
    if (m_overLimit)
        s += ", read only its first " + std::to_string(m_limits.maxBytes >> 20) + " MiB";
    return s;
}

} // namespace emberline::engine
