#pragma once

#include "engine/common/result.h"
#include "engine/model/merge.h"
#include "engine/model/profile.h"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// Serializes a Profile as profile.proto; gzip-compressed unless `compress` is false. The output reads in
// `go tool pprof` without warnings: string 0 is "", ids start at 1, every reference resolves.
//
// Thread: any.
std::string writePprof(const Profile &profile, bool compress = true);
Status writePprofFile(const Profile &profile, const std::string &path);
// Writes `bytes` to path.tmp, flushes it to the disk and renames it to `path`: a reader (or a crash) never
// sees half a file under the final name. On any failure (a full disk, a folder that cannot be written) the
// temporary file is removed and the Error says which file and why.
Status writeFileAtomically(const std::string &path, std::string_view bytes);

// Writes one profile made of many (a session's flushes) to a gzip-compressed file as they come, so that only
// the tables, never the samples, stay in memory: each profile's samples are written at once with the file's
// ids, and the tables (mappings, locations, functions, strings) at the end. profile.proto allows that order,
// since a message's repeated fields may come in any order and interleaved. Samples of one added profile with
// the same stack and labels (after dropping `dropLabels`) are written as one; samples of different profiles
// are not combined, as pprof readers add up duplicate stacks.
//
// Written beside `path` as path.tmp and renamed by finish(); destroying the writer unfinished removes it.
//
// Thread: one owner at a time.
class PprofStreamWriter {
public:
    PprofStreamWriter(std::string path, std::vector<std::string> dropLabels);
    ~PprofStreamWriter();
    PprofStreamWriter(const PprofStreamWriter &) = delete;
    PprofStreamWriter &operator=(const PprofStreamWriter &) = delete;

    // The first call creates the file. After an error the writer refuses everything. With `ids` (a live
    // session's flush), the locations met in earlier flushes are found by their session ids.
    // `skipColumns`: values not taken from this profile (written as 0; a sample with nothing else is left out),
    // such as a flush's in-use snapshot, which a sum over flushes would count again and again.
    Status add(const Profile &profile, const SessionIds *ids = nullptr, std::span<const size_t> skipColumns = {});
    // Writes the tables and renames the file into place; returns its path, or "" when nothing was added.
    Result<std::string> finish();
    size_t samplesWritten() const { return m_samplesWritten; }
    // Comments that begin with `prefix` describe one added profile only (a flush's in-use margin): the file leaves
    // them out.
    void dropComments(std::string prefix) { m_dropComments.push_back(std::move(prefix)); }

private:
    class Stream;
    Status open();
    Status failed(const std::string &what);

    std::string m_path;
    std::vector<std::string> m_dropLabels;
    std::vector<std::string> m_dropComments;
    ProfileMerger m_tables;
    std::unique_ptr<Stream> m_stream;
    std::string m_error;
    size_t m_samplesWritten = 0;
};

} // namespace emberline::engine
