#include "engine/pprof/pprof_writer.h"

#include "engine/pprof/profile.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace emberline::engine {
namespace pb = perftools::profiles;

namespace {

// zlib's fastest level, as Go's runtime/pprof writes its profiles: on a session's profiles (about 1.3 MB of
// protobuf a flush) level 6 took 30 ms and level 1 13 ms, for files a fifth larger, and every flush is compressed
// twice (its own file and the session's).
constexpr int kPprofGzipLevel = 1;

void fillTables(const Profile &p, pb::Profile &out)
{
    for (const ValueType &vt : p.sampleTypes()) {
        auto *t = out.add_sample_type();
        t->set_type(vt.type);
        t->set_unit(vt.unit);
    }
    // Ids are written as index + 1: dense, non-zero, and independent of what the source file used.
    for (size_t i = 0; i < p.mappings().size(); ++i) {
        const Mapping &m = p.mappings()[i];
        auto *o = out.add_mapping();
        o->set_id(i + 1);
        o->set_memory_start(m.start);
        o->set_memory_limit(m.limit);
        o->set_file_offset(m.offset);
        o->set_filename(m.filename);
        o->set_build_id(m.buildId);
        o->set_has_functions(m.hasFunctions);
        o->set_has_filenames(m.hasFilenames);
        o->set_has_line_numbers(m.hasLineNumbers);
        o->set_has_inline_frames(m.hasInlineFrames);
    }
    for (size_t i = 0; i < p.locations().size(); ++i) {
        const Location &l = p.locations()[i];
        auto *o = out.add_location();
        o->set_id(i + 1);
        o->set_mapping_id(l.mappingIndex == kNoIndex ? 0 : l.mappingIndex + 1);
        o->set_address(l.address);
        o->set_is_folded(l.isFolded);
        for (const Line &line : l.lines) {
            auto *ol = o->add_line();
            ol->set_function_id(line.functionIndex == kNoIndex ? 0 : line.functionIndex + 1);
            ol->set_line(line.line);
            ol->set_column(line.column);
        }
    }
    for (size_t i = 0; i < p.functions().size(); ++i) {
        const Function &f = p.functions()[i];
        auto *o = out.add_function();
        o->set_id(i + 1);
        o->set_name(f.name);
        o->set_system_name(f.systemName);
        o->set_filename(f.filename);
        o->set_start_line(f.startLine);
    }
    for (const std::string &s : p.strings())
        out.add_string_table(s);
    out.set_drop_frames(p.dropFrames);
    out.set_keep_frames(p.keepFrames);
    out.set_time_nanos(p.timeNanos);
    out.set_duration_nanos(p.durationNanos);
    out.mutable_period_type()->set_type(p.periodType.type);
    out.mutable_period_type()->set_unit(p.periodType.unit);
    out.set_period(p.period);
    for (StringId c : p.comments())
        out.add_comment(c);
    out.set_default_sample_type(p.defaultSampleType);
}

} // namespace

namespace {

using google::protobuf::io::CodedOutputStream;

constexpr uint32_t kSampleTag = (2u << 3) | 2u; // Profile.sample, length-delimited

// Label's fields as proto3 writes them: a field holding 0 is left out.
size_t labelBytes(const Label &l)
{
    const auto field = [](int64_t v) { return v == 0 ? 0 : 1 + CodedOutputStream::VarintSize64(uint64_t(v)); };
    return field(l.key) + field(l.str) + field(l.num) + field(l.numUnit);
}

// One Profile.sample written field by field, as pb::Sample would serialize it, without building one (a message per
// sample and per label: most of the cost of writing a flush). `locationIds` are the file's ids (index + 1).
template <typename LocationIds>
void writeSample(CodedOutputStream &out, const LocationIds &locationIds, std::span<const int64_t> values,
                 std::span<const Label> labels)
{
    size_t locationBytes = 0;
    for (const uint64_t id : locationIds)
        locationBytes += CodedOutputStream::VarintSize64(id);
    size_t valueBytes = 0;
    for (const int64_t v : values)
        valueBytes += CodedOutputStream::VarintSize64(uint64_t(v));
    size_t bytes = 0;
    if (locationBytes != 0)
        bytes += 1 + CodedOutputStream::VarintSize64(locationBytes) + locationBytes;
    if (valueBytes != 0)
        bytes += 1 + CodedOutputStream::VarintSize64(valueBytes) + valueBytes;
    for (const Label &l : labels) {
        const size_t n = labelBytes(l);
        bytes += 1 + CodedOutputStream::VarintSize64(n) + n;
    }
    out.WriteTag(kSampleTag);
    out.WriteVarint64(bytes);
    if (locationBytes != 0) {
        out.WriteTag((1u << 3) | 2u); // location_id, packed
        out.WriteVarint64(locationBytes);
        for (const uint64_t id : locationIds)
            out.WriteVarint64(id);
    }
    if (valueBytes != 0) {
        out.WriteTag((2u << 3) | 2u); // value, packed
        out.WriteVarint64(valueBytes);
        for (const int64_t v : values)
            out.WriteVarint64(uint64_t(v));
    }
    for (const Label &l : labels) {
        out.WriteTag((3u << 3) | 2u); // label
        out.WriteVarint64(labelBytes(l));
        const int64_t fields[4] = {l.key, l.str, l.num, l.numUnit};
        for (uint32_t f = 0; f < 4; ++f) {
            if (fields[f] != 0) {
                out.WriteTag((f + 1) << 3); // varint
                out.WriteVarint64(uint64_t(fields[f]));
            }
        }
    }
}

// A location's file id: its index + 1.
struct FileLocationIds {
    std::span<const uint32_t> indexes;
    struct Iterator {
        const uint32_t *at;
        uint64_t operator*() const { return uint64_t(*at) + 1; }
        Iterator &operator++()
        {
            ++at;
            return *this;
        }
        bool operator!=(const Iterator &o) const { return at != o.at; }
    };
    Iterator begin() const { return {indexes.data()}; }
    Iterator end() const { return {indexes.data() + indexes.size()}; }
};

// The samples, then the tables as a message of their own (protobuf reads concatenated messages as one).
void writeProfile(const Profile &p, google::protobuf::io::ZeroCopyOutputStream &sink)
{
    CodedOutputStream out(&sink);
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        const SampleView s = p.sample(i);
        writeSample(out, FileLocationIds{s.locations}, s.values, s.labels);
    }
    pb::Profile tables;
    fillTables(p, tables);
    tables.SerializeToCodedStream(&out);
}

} // namespace

std::string writePprof(const Profile &p, bool compress)
{
    std::string bytes;
    google::protobuf::io::StringOutputStream sink(&bytes);
    if (!compress) {
        writeProfile(p, sink);
        return bytes;
    }
    google::protobuf::io::GzipOutputStream::Options options;
    options.format = google::protobuf::io::GzipOutputStream::GZIP;
    options.compression_level = kPprofGzipLevel;
    {
        google::protobuf::io::GzipOutputStream zip(&sink, options);
        writeProfile(p, zip);
        zip.Close();
    }
    return bytes;
}

Status writePprofFile(const Profile &profile, const std::string &path)
{
    return writeFileAtomically(path, writePprof(profile, true));
}

Status writeFileAtomically(const std::string &path, std::string_view bytes)
{
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return makeError(Error::Code::Io, path + ": " + std::strerror(errno));
    int err = 0;
    for (size_t done = 0; done < bytes.size() && !err;) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n > 0)
            done += static_cast<size_t>(n);
        else if (n == 0 || errno != EINTR)
            err = n == 0 ? EIO : errno;
    }
    // A full disk may only show at the flush to it (delayed allocation) or at close (network file systems).
    if (!err && ::fdatasync(fd) != 0 && errno != EINVAL)
        err = errno;
    if (::close(fd) != 0 && !err && errno != EINTR)
        err = errno;
    if (!err && std::rename(tmp.c_str(), path.c_str()) != 0)
        err = errno;
    if (err) {
        ::unlink(tmp.c_str());
        return makeError(Error::Code::Io, path + ": " + std::strerror(err));
    }
    return Ok{};
}

// The file, its gzip stream and the protobuf encoder over it, closed in that order's reverse.
class PprofStreamWriter::Stream {
public:
    explicit Stream(int fd) : file(fd), fd(fd)
    {
        google::protobuf::io::GzipOutputStream::Options options;
        options.format = google::protobuf::io::GzipOutputStream::GZIP;
        options.compression_level = kPprofGzipLevel;
        zip.emplace(&file, options);
        coded.emplace(&*zip);
    }
    // False when anything failed on the way to the disk.
    bool close()
    {
        const bool codedOk = !coded->HadError();
        coded.reset();
        const bool zipOk = zip->Close();
        zip.reset();
        // On the disk before the rename, so that a crash leaves the old name or a whole file, never half of one.
        const bool synced = file.Flush() && (::fdatasync(fd) == 0 || errno == EINVAL);
        if (!synced && file.GetErrno() == 0)
            syncErrno = errno;
        closed = true;
        return file.Close() && codedOk && zipOk && synced;
    }
    ~Stream()
    {
        coded.reset();
        zip.reset();
        if (!closed)
            file.Close();
    }

    google::protobuf::io::FileOutputStream file;
    std::optional<google::protobuf::io::GzipOutputStream> zip;
    std::optional<google::protobuf::io::CodedOutputStream> coded;
    int fd;
    int syncErrno = 0;
    bool closed = false;
};

PprofStreamWriter::PprofStreamWriter(std::string path, std::vector<std::string> dropLabels)
    : m_path(std::move(path)), m_dropLabels(std::move(dropLabels))
{
}

PprofStreamWriter::~PprofStreamWriter()
{
    if (m_stream) {
        m_stream.reset();
        std::remove((m_path + ".tmp").c_str());
    }
}

Status PprofStreamWriter::failed(const std::string &what)
{
    m_error = m_path + ": " + what;
    return makeError(Error::Code::Io, m_error);
}

Status PprofStreamWriter::open()
{
    const int fd = ::open((m_path + ".tmp").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return failed(std::strerror(errno));
    m_stream = std::make_unique<Stream>(fd);
    return Ok{};
}

Status PprofStreamWriter::add(const Profile &src, const SessionIds *ids, std::span<const size_t> skipColumns)
{
    if (!m_error.empty())
        return makeError(Error::Code::Io, m_error);
    if (!m_stream) {
        if (auto st = open(); !st)
            return st;
    }
    ProfileMerger::Remap remap;
    if (auto st = ids ? m_tables.addTables(src, *ids, remap) : m_tables.addTables(src, remap); !st)
        return st;
    std::vector<StringId> dropped;
    for (const std::string &key : m_dropLabels) {
        if (const StringId id = src.findString(key); id != kNoIndex)
            dropped.push_back(id);
    }

    // Samples with the same stack and kept labels become one; the key is their ids, as bytes.
    struct Merged {
        size_t first; // the source sample whose stack and labels it has
        std::vector<int64_t> values;
    };
    std::vector<Merged> merged;
    std::unordered_map<std::string, size_t> byKey;
    std::string key;
    const auto append = [&key](auto v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); };
    for (size_t i = 0; i < src.sampleCount(); ++i) {
        key.clear();
        append(src.sampleStackId(i));
        for (const Label &l : src.sampleLabels(i)) {
            if (std::find(dropped.begin(), dropped.end(), l.key) != dropped.end())
                continue;
            append(l.key);
            append(l.str);
            append(l.num);
            append(l.numUnit);
        }
        const auto values = src.sampleValues(i);
        if (!skipColumns.empty()) {
            bool any = false;
            for (size_t v = 0; v < values.size() && !any; ++v)
                any = values[v] != 0 && std::find(skipColumns.begin(), skipColumns.end(), v) == skipColumns.end();
            if (!any)
                continue;
        }
        auto [it, inserted] = byKey.try_emplace(key, merged.size());
        if (inserted) {
            merged.push_back({i, std::vector<int64_t>(values.begin(), values.end())});
            for (size_t v : skipColumns)
                if (v < merged.back().values.size())
                    merged.back().values[v] = 0;
        } else {
            std::vector<int64_t> &sum = merged[it->second].values;
            for (size_t v = 0; v < sum.size() && v < values.size(); ++v)
                if (std::find(skipColumns.begin(), skipColumns.end(), v) == skipColumns.end())
                    sum[v] += values[v];
        }
    }

    std::vector<uint64_t> locationIds;
    std::vector<Label> labels;
    for (const Merged &m : merged) {
        locationIds.clear();
        for (uint32_t loc : src.stacks().stack(src.sampleStackId(m.first)))
            locationIds.push_back(uint64_t(remap.locations[loc]) + 1);
        labels.clear();
        for (const Label &l : src.sampleLabels(m.first)) {
            if (std::find(dropped.begin(), dropped.end(), l.key) != dropped.end())
                continue;
            labels.push_back(Label{remap.strings[l.key], remap.strings[l.str], l.num, remap.strings[l.numUnit]});
        }
        writeSample(*m_stream->coded, locationIds, m.values, labels);
    }
    m_samplesWritten += merged.size();
    if (m_stream->coded->HadError() || m_stream->file.GetErrno() != 0)
        return failed(std::strerror(m_stream->file.GetErrno() ? m_stream->file.GetErrno() : EIO));
    return Ok{};
}

Result<std::string> PprofStreamWriter::finish()
{
    if (!m_error.empty())
        return makeError(Error::Code::Io, m_error);
    if (!m_stream)
        return std::string();
    // The tables as a message of their own: protobuf reads concatenated messages as one.
    pb::Profile tables;
    fillTables(m_tables.result(), tables);
    if (!m_dropComments.empty()) {
        std::vector<int64_t> kept;
        for (int64_t c : tables.comment()) {
            const std::string &text = tables.string_table(static_cast<int>(c));
            if (std::none_of(m_dropComments.begin(), m_dropComments.end(),
                             [&](const std::string &prefix) { return text.starts_with(prefix); }))
                kept.push_back(c);
        }
        tables.clear_comment();
        for (int64_t c : kept)
            tables.add_comment(c);
    }
    tables.SerializeToCodedStream(&*m_stream->coded);
    const bool ok = m_stream->close();
    const int err = m_stream->file.GetErrno() ? m_stream->file.GetErrno() : m_stream->syncErrno;
    m_stream.reset();
    const std::string tmp = m_path + ".tmp";
    if (!ok || std::rename(tmp.c_str(), m_path.c_str()) != 0) {
        const int renameErr = errno;
        std::remove(tmp.c_str());
        return failed(std::strerror(err ? err : renameErr ? renameErr : EIO)).error();
    }
    return m_path;
}

} // namespace emberline::engine
