#include "engine/pprof/session_folder.h"

#include "engine/model/merge.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <system_error>

namespace emberline::engine {
namespace {

namespace fs = std::filesystem;

const std::regex kFlushName(R"(flush-\d{4,}\.pprof)");

// The folder's flush files, in flush order (their numbers have at least four digits, zero-padded).
std::vector<fs::path> flushFiles(const fs::path &directory)
{
    std::vector<fs::path> files;
    std::error_code ec;
    for (const fs::directory_entry &entry : fs::directory_iterator(directory, ec)) {
        if (entry.is_regular_file(ec) && std::regex_match(entry.path().filename().string(), kFlushName))
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end(), [](const fs::path &a, const fs::path &b) {
        const std::string x = a.filename().string(), y = b.filename().string();
        return x.size() != y.size() ? x.size() < y.size() : x < y;
    });
    return files;
}

// The options for file `index` of `count`: progress scaled into the file's share of the whole.
PprofReadOptions fileOptions(const PprofReadOptions &options, size_t index, size_t count)
{
    PprofReadOptions o = options;
    if (options.progress) {
        o.progress = [progress = options.progress, index, count](double f) {
            progress((static_cast<double>(index) + f) / static_cast<double>(count));
        };
    }
    return o;
}

bool cancelled(const PprofReadOptions &options)
{
    return options.cancel && options.cancel->load(std::memory_order_relaxed);
}

// Whether any sample carries an end_timestamp_ns label (the string table names it only then, as written).
bool carriesTimestamps(const Profile &profile)
{
    const StringId key = profile.findString("end_timestamp_ns");
    if (key == kNoIndex)
        return false;
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        for (const Label &label : profile.sampleLabels(i)) {
            if (label.key == key)
                return true;
        }
    }
    return false;
}

uint64_t totalBytes(const std::vector<fs::path> &files)
{
    uint64_t bytes = 0;
    std::error_code ec;
    for (const fs::path &file : files) {
        const auto size = fs::file_size(file, ec);
        bytes += ec ? 0 : size;
    }
    return bytes;
}

// The flush files merged in order into `out` (skipped ones named); an error when cancelled.
Status mergeFlushFiles(const std::vector<fs::path> &flushes, const PprofReadOptions &options, SessionFolderProfile &out)
{
    // One flush at a time into the merger: only the merged result and the flush being read are in memory. Each
    // flush of a memory session holds the whole live heap at its end: only the last one's in-use values stay.
    ProfileMerger::Options mergeOptions;
    mergeOptions.latestSnapshots = true;
    ProfileMerger merger(mergeOptions);
    for (size_t i = 0; i < flushes.size(); ++i) {
        if (cancelled(options))
            return makeError(Error::Code::Cancelled, flushes[i].parent_path().string() + ": loading cancelled");
        auto flush = readPprofFile(flushes[i].string(), fileOptions(options, i, flushes.size()));
        if (!flush) {
            if (flush.error().code == Error::Code::Cancelled)
                return flush.error();
            out.skipped.push_back(flush.error().message);
            continue;
        }
        if (auto st = merger.add(flush.value()); !st) {
            out.skipped.push_back(flushes[i].string() + ": " + st.error().message);
            continue;
        }
        ++out.flushesMerged;
    }
    out.profile = merger.takeResult();
    return Ok{};
}

// profile.pprof's samples carry no time; the flush files do: merged instead when they are not too large and all
// of them read (otherwise profile.pprof, whole, stays, and `timesProblem` says why).
void preferTimedFlushes(const std::vector<fs::path> &flushes, const PprofReadOptions &options,
                        SessionFolderProfile &out)
{
    if (flushes.empty() || carriesTimestamps(out.profile))
        return;
    const uint64_t bytes = totalBytes(flushes);
    if (bytes > kTimedFlushesMaxBytes) {
        out.timesProblem = "its " + std::to_string(flushes.size()) + " flush files (" + std::to_string(bytes >> 20) +
                           " MiB) are too large to read for their timestamps";
        return;
    }
    SessionFolderProfile timed;
    if (!mergeFlushFiles(flushes, options, timed) || !timed.skipped.empty() || timed.flushesMerged == 0) {
        out.timesProblem = timed.skipped.empty() ? std::string("its flush files could not be read")
                                                 : "a flush file could not be read: " + timed.skipped.front();
        return;
    }
    out.profile = std::move(timed.profile);
    out.flushesMerged = timed.flushesMerged;
    out.timesFromFlushes = true;
}

} // namespace

bool isSessionFolder(const std::string &directory)
{
    std::error_code ec;
    if (!fs::is_directory(directory, ec))
        return false;
    return fs::exists(fs::path(directory) / "profile.pprof", ec) || !flushFiles(directory).empty();
}

Result<SessionFolderProfile> readSessionFolder(const std::string &directory, const PprofReadOptions &options,
                                               SessionTimes times)
{
    std::error_code ec;
    if (!fs::is_directory(directory, ec))
        return makeError(Error::Code::Io, directory + ": not a folder");
    const fs::path dir(directory);
    const std::vector<fs::path> flushes = flushFiles(dir);
    const fs::path sessionProfile = dir / "profile.pprof";

    SessionFolderProfile out;
    if (fs::exists(sessionProfile, ec)) {
        auto whole = readPprofFile(sessionProfile.string(), fileOptions(options, 0, 1));
        if (whole) {
            out.profile = std::move(whole).value();
            if (times == SessionTimes::Wanted)
                preferTimedFlushes(flushes, options, out);
            if (cancelled(options))
                return makeError(Error::Code::Cancelled, directory + ": loading cancelled");
            return out;
        }
        if (whole.error().code == Error::Code::Cancelled || flushes.empty())
            return whole.error();
        out.sessionProfileProblem = whole.error().message;
    } else {
        out.sessionProfileProblem = sessionProfile.string() + ": missing";
    }
    if (flushes.empty())
        return makeError(Error::Code::Format, directory + ": no profile.pprof and no flush-NNNN.pprof files: not "
                                                          "a session folder");

    out.fromFlushes = true;
    if (auto st = mergeFlushFiles(flushes, options, out); !st)
        return st.error();
    if (out.flushesMerged == 0) {
        std::string why = directory + ": no flush file could be read";
        for (const std::string &s : out.skipped)
            why += "; " + s;
        return makeError(Error::Code::Format, why);
    }
    return out;
}

} // namespace emberline::engine
