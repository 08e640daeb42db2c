#include "engine/import/text_parts.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include <unistd.h>

namespace emberline::engine {
namespace {

constexpr size_t kWindowBytes = 64u << 10;
constexpr uint64_t kSearchBytes = 4u << 20; // past this without an empty line, the cut is left out

// The offset just past the first empty line ("\n\n" or "\n\r\n") at or after `from`, or 0 when there is none
// in kSearchBytes (or the file ends first).
uint64_t nextSampleEnd(int fd, uint64_t from, uint64_t size)
{
    std::vector<char> window(kWindowBytes + 2);
    size_t carried = 0; // the last two bytes of the previous window, at the front
    for (uint64_t offset = from; offset < size && offset - from < kSearchBytes;) {
        const ssize_t got = ::pread(fd, window.data() + carried, kWindowBytes, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        const std::string_view text(window.data(), carried + static_cast<size_t>(got));
        for (size_t nl = text.find('\n'); nl != std::string_view::npos; nl = text.find('\n', nl + 1)) {
            size_t next = nl + 1;
            if (next < text.size() && text[next] == '\r')
                ++next;
            if (next < text.size() && text[next] == '\n')
                return offset - carried + next + 1;
        }
        const size_t keep = std::min<size_t>(2, text.size());
        std::memmove(window.data(), text.data() + text.size() - keep, keep);
        carried = keep;
        offset += static_cast<uint64_t>(got);
    }
    return 0;
}

} // namespace

std::vector<uint64_t> cutAtSampleEnds(int fd, uint64_t size, size_t parts)
{
    std::vector<uint64_t> cuts{0};
    for (size_t i = 1; i < parts; ++i) {
        const uint64_t target = std::max(cuts.back(), size / parts * i);
        const uint64_t cut = nextSampleEnd(fd, target, size);
        if (cut > cuts.back() && cut < size)
            cuts.push_back(cut);
    }
    cuts.push_back(size);
    return cuts;
}

} // namespace emberline::engine
