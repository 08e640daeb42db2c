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

} // namespace

bool isSessionFolder(const std::string &directory)
{
    std::error_code ec;
    if (!fs::is_directory(directory, ec))
        return false;
    return fs::exists(fs::path(directory) / "profile.pprof", ec) || !flushFiles(directory).empty();
}

Result<SessionFolderProfile> readSessionFolder(const std::string &directory, const PprofReadOptions &options)
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

    // One flush at a time into the merger: only the merged result and the flush being read are in memory.
    ProfileMerger merger;
    out.fromFlushes = true;
    for (size_t i = 0; i < flushes.size(); ++i) {
        if (cancelled(options))
            return makeError(Error::Code::Cancelled, directory + ": loading cancelled");
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
    if (out.flushesMerged == 0) {
        std::string why = directory + ": no flush file could be read";
        for (const std::string &s : out.skipped)
            why += "; " + s;
        return makeError(Error::Code::Format, why);
    }
    out.profile = merger.takeResult();
    return out;
}

} // namespace emberline::engine
