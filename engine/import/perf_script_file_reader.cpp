#include "engine/import/perf_script_file_reader.h"

#include "engine/common/fd_closer.h"
#include "engine/import/perf_script_reader.h"
#include "engine/import/text_format.h"
#include "engine/import/text_parts.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emberline::engine {
namespace {

constexpr uint64_t kMinPartBytes = 16u << 20;
constexpr size_t kMaxParts = 8;

// One part: its parser and how its reading ended. A thread that fails raises `stop` for the others.
struct Part {
    explicit Part(const std::string &path) : parser(path) {}
    PerfScriptParser parser;
    Status status = Ok{};
};

void parsePart(Part &part, const TextRange &range, std::atomic<bool> &stop, const std::function<void()> &onBlock)
{
    try {
        part.status = readTextRange(
            range, [&](std::string_view line, size_t number) { return part.parser.feed(line, number); }, onBlock,
            [&](std::string_view ahead, size_t &lines) { return part.parser.takeKnownFrames(ahead, lines); });
    } catch (const std::bad_alloc &) {
        part.status = makeError(Error::Code::Limit, range.path + ": out of memory");
    }
    if (!part.status)
        stop.store(true, std::memory_order_relaxed);
}

// Parses the parts of the file between `cuts` (one part: {0, UINT64_MAX}), the first on the calling thread.
Result<Profile> readParts(int fd, const std::string &path, const PprofReadOptions &options,
                          const std::vector<uint64_t> &cuts, uint64_t size)
{
    std::vector<std::unique_ptr<Part>> pieces;
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
        pieces.push_back(std::make_unique<Part>(path));
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> bytesRead{0};
    const auto rangeOf = [&](size_t i) {
        return TextRange{fd, path, cuts[i], cuts[i + 1], 1, options.cancel, &stop, &bytesRead};
    };
    std::vector<std::thread> threads;
    try {
        for (size_t i = 1; i < pieces.size(); ++i)
            threads.emplace_back([&, i] { parsePart(*pieces[i], rangeOf(i), stop, {}); });
    } catch (const std::system_error &) {
        stop.store(true);
        for (std::thread &t : threads)
            t.join();
        return readParts(fd, path, options, {0, UINT64_MAX}, size); // no thread to be had: one is enough
    }
    parsePart(*pieces[0], rangeOf(0), stop, [&] {
        if (options.progress && size > 0)
            options.progress(std::min(1.0, static_cast<double>(bytesRead.load(std::memory_order_relaxed)) /
                                               static_cast<double>(size)));
    });
    for (std::thread &t : threads)
        t.join();

    const Status &first = pieces[0]->status;
    if (options.cancel && options.cancel->load())
        return makeError(Error::Code::Cancelled, "cancelled");
    if (!first && first.error().code != Error::Code::Cancelled)
        return first.error(); // the first part's lines are the file's first lines, with their numbers
    bool joined = first.ok();
    for (size_t i = 1; joined && i < pieces.size(); ++i)
        joined = pieces[i]->status.ok() && pieces[0]->parser.append(std::move(pieces[i]->parser)).ok();
    if (!joined)
        return readParts(fd, path, options, {0, UINT64_MAX}, size); // the error as the whole file words it
    return pieces[0]->parser.finish();
}

} // namespace

size_t perfScriptPartsFor(uint64_t bytes)
{
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    return static_cast<size_t>(std::clamp<uint64_t>(bytes / kMinPartBytes, 1, std::min(cores, kMaxParts)));
}

Result<Profile> readPerfScriptFile(const std::string &path, const PprofReadOptions &options)
{
    struct stat st {};
    const uint64_t size = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    return readPerfScriptFileInParts(path, options, perfScriptPartsFor(size));
}

Result<Profile> readPerfScriptFileInParts(const std::string &path, const PprofReadOptions &options, size_t parts)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(Error::Code::Io, path + ": cannot be opened: " + std::strerror(errno));
    const FdCloser closer(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return makeError(Error::Code::Io, path + ": cannot be read: " + std::strerror(errno));
    const auto size = static_cast<uint64_t>(st.st_size);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    std::vector<uint64_t> cuts = parts > 1 ? cutAtSampleEnds(fd, size, parts) : std::vector<uint64_t>{};
    if (cuts.size() <= 2)
        cuts = {0, UINT64_MAX};
    return readParts(fd, path, options, cuts, size);
}

} // namespace emberline::engine
