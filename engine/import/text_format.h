#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"
#include "engine/pprof/pprof_reader.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace emberline::engine {

// What a profile file holds, told by its content, never by its name.
enum class ProfileFormat {
    Pprof,      // gzip or raw profile.proto, and anything that is not one of the others (the reader says why not)
    PerfData,   // perf record's binary file
    PerfScript, // `perf script` text
    Folded,     // Brendan Gregg's collapsed stacks
};

// Tells the format from the first bytes of a file (a few KiB are enough).
ProfileFormat sniffFormat(std::string_view head);
Result<ProfileFormat> sniffFileFormat(const std::string &path);

// True when `line` holds no control byte but tabs: what text importers accept on a line.
bool isTextLine(std::string_view line);

// Reads a text file line by line without holding it whole, calling `onLine(line, number)` for each (numbers
// from 1, newline removed). Stops at the first error `onLine` returns, at a line longer than 1 MiB, or when
// `cancel` rises. `progress` (may be empty) hears the fraction read now and then.
Status readTextLines(const std::string &path, const std::function<Status(std::string_view, size_t)> &onLine,
                     const std::atomic<bool> *cancel, const std::function<void(double)> &progress);

// A byte range of an open text file, read line by line by readTextRange: `begin` is the start of a line, `end` the
// start of another (or the file's size). Numbers are counted from `firstNumber`. The reader stops between blocks
// when `cancel` or `stop` rises (both may be null), and adds the bytes it read to `bytesRead` (may be null), which
// another thread may watch.
struct TextRange {
    int fd = -1;
    std::string path; // for errors
    uint64_t begin = 0;
    uint64_t end = 0;
    size_t firstNumber = 1;
    const std::atomic<bool> *cancel = nullptr;
    const std::atomic<bool> *stop = nullptr;
    std::atomic<uint64_t> *bytesRead = nullptr;
};

// Reads the lines of `range` as readTextLines does, calling `onLine(line, number)` for each and
// `onBlock()` (may be empty) after each block. After each line, `takeAhead(ahead, lines)` (may be empty) is
// handed the lines that follow it in the buffer (`ahead`, up to the last newline read so far) and may take some
// whole lines at its front as read: it returns how many bytes it took and adds how many lines they were to
// `lines`. What it takes is not handed to `onLine`.
Status readTextRange(const TextRange &range, const std::function<Status(std::string_view, size_t)> &onLine,
                     const std::function<void()> &onBlock,
                     const std::function<size_t(std::string_view, size_t &)> &takeAhead = {});

// Reads a text profile file with a `Parser` made from the file's path (the name its errors give): every line
// through `feed(line, number)`, then the profile `finish()` makes. `options` gives the cancel flag and the
// progress callback.
template <typename Parser> Result<Profile> readTextProfileFile(const std::string &path, const PprofReadOptions &options)
{
    Parser parser(path);
    const Status read = readTextLines(
        path, [&](std::string_view line, size_t number) { return parser.feed(line, number); }, options.cancel,
        options.progress);
    if (!read)
        return read.error();
    return parser.finish();
}

// "line 12: " followed by the line itself, cut to a readable length: how importers name a bad line.
std::string lineContext(size_t number, std::string_view line);

} // namespace emberline::engine
