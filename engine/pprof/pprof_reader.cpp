#include "engine/pprof/pprof_reader.h"

#include "engine/common/flat_hash.h"
#include "engine/common/logging.h"
#include "engine/pprof/input_streams.h"
#include "engine/pprof/profile.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <unordered_map>

namespace emberline::engine {

namespace pb = perftools::profiles;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::ZeroCopyInputStream;

namespace {

constexpr uint32_t kBigIdTag = 0x80000000u;

// A string index from the file as a StringId; negative or huge indices become UINT32_MAX, which no string table
// reaches, so the check in finish() refuses them instead of silently reading string 0.
StringId toStringId(int64_t index)
{
    return index >= 0 && index < static_cast<int64_t>(UINT32_MAX) ? static_cast<StringId>(index) : UINT32_MAX;
}

} // namespace

// Decodes the top level of profile.proto field by field, so that each Sample is turned into interned columns
// as soon as it is read. Small tables (locations, functions, mappings) are parsed with the generated classes.
class PprofDecoder {
public:
    PprofDecoder(const std::string &name, const PprofReadOptions &options, CountingStream *compressed,
                 uint64_t inputSize)
        : m_name(name), m_options(options), m_compressed(compressed), m_inputSize(inputSize)
    {
    }

    Result<Profile> decode(ZeroCopyInputStream *input, CountingStream *decompressed, GzipStream *gzip);

private:
    Error fail(const std::string &what) const { return makeError(Error::Code::Format, m_name + ": " + what); }
    template <typename Message> bool readMessage(CodedInputStream &in, Message &msg);
    bool readSample(CodedInputStream &in);
    uint32_t rawLocationRef(uint64_t id);
    std::optional<Error> finish();
    std::optional<Error> checkLimits(const CountingStream &decompressed, bool gzipped) const;
    uint64_t modelBytes() const;
    Error limit(const std::string &what) const
    {
        return makeError(Error::Code::Limit, m_name + ": " + what + ": more than a profile can sensibly hold");
    }
    std::optional<Error> checkString(int64_t index, const char *what) const;

    std::string m_name;
    const PprofReadOptions &m_options;
    CountingStream *m_compressed;
    uint64_t m_inputSize;

    Profile m_profile;
    pb::Sample m_sample; // reused for every sample: no allocation after the first few
    std::vector<uint32_t> m_stackBuffer;
    std::vector<Label> m_labelBuffer;
    std::vector<uint64_t> m_bigIds; // location ids that do not fit in 31 bits, by ordinal
    std::unordered_map<uint64_t, uint32_t> m_bigIdOrdinal;
    size_t m_valuesPerSample = SIZE_MAX;
    std::vector<pb::Location> m_locations;
    std::vector<pb::Function> m_functions;
    std::vector<pb::Mapping> m_mappings;
    uint64_t m_tableHeapBytes = 0;   // heap behind the parsed locations' lines
    uint32_t m_oversizedMessage = 0; // the length of a sample or table entry over maxMessageBytes
    uint64_t m_stringHeapBytes = 0;  // heap behind the strings too long for std::string's inline buffer
};

uint64_t PprofDecoder::modelBytes() const
{
    // Capacities, not sizes: what a vector holds is what it takes.
    const Profile &p = m_profile;
    return p.m_stacks.memoryBytes() + p.sampleMemoryBytes() + p.m_comments.capacity() * sizeof(StringId) +
           p.m_strings.capacity() * sizeof(std::string) + m_stringHeapBytes +
           m_locations.capacity() * sizeof(pb::Location) + m_functions.capacity() * sizeof(pb::Function) +
           m_mappings.capacity() * sizeof(pb::Mapping) + m_tableHeapBytes + m_bigIds.capacity() * sizeof(uint64_t) +
           m_bigIdOrdinal.size() * 32;
}

// Called every few hundred fields, so that no limit is passed by more than that before the read stops.
std::optional<Error> PprofDecoder::checkLimits(const CountingStream &decompressed, bool gzipped) const
{
    const uint64_t out = static_cast<uint64_t>(decompressed.ByteCount());
    const uint64_t in = static_cast<uint64_t>(m_compressed->ByteCount());
    if (gzipped && out > m_options.ratioCheckAfterBytes &&
        out / std::max<uint64_t>(in, 1) > m_options.maxCompressionRatio)
        return makeError(Error::Code::Limit, m_name + ": " + std::to_string(in >> 10) +
                                                 " KiB of gzip data inflate to " + std::to_string(out >> 20) +
                                                 " MiB, more than " + std::to_string(m_options.maxCompressionRatio) +
                                                 " times their size (a gzip bomb?)");
    const Profile &p = m_profile;
    if (p.sampleCount() > m_options.maxSamples)
        return limit("more than " + std::to_string(m_options.maxSamples) + " samples");
    const struct {
        size_t count;
        const char *what;
    } tables[] = {{m_locations.size(), "locations"},
                  {m_functions.size(), "functions"},
                  {m_mappings.size(), "mappings"},
                  {p.m_strings.size(), "strings"}};
    for (const auto &t : tables) {
        if (t.count > m_options.maxTableEntries)
            return limit("more than " + std::to_string(m_options.maxTableEntries) + " " + t.what);
    }
    const uint64_t bytes = modelBytes();
    if (bytes > m_options.ratioCheckAfterBytes &&
        bytes / std::max<uint64_t>(out, 1) > m_options.maxModelBytesPerInputByte)
        return limit("its " + std::to_string(out >> 10) + " KiB read so far take " + std::to_string(bytes >> 20) +
                     " MiB of memory, more than " + std::to_string(m_options.maxModelBytesPerInputByte) +
                     " times their size");
    if (bytes > m_options.maxModelBytes)
        return limit("its " + std::to_string(p.sampleCount()) + " samples, " + std::to_string(m_locations.size()) +
                     " locations and " + std::to_string(p.m_strings.size()) +
                     " strings read so far would take more than " + std::to_string(m_options.maxModelBytes >> 20) +
                     " MiB of memory");
    return std::nullopt;
}

template <typename Message> bool PprofDecoder::readMessage(CodedInputStream &in, Message &msg)
{
    uint32_t length = 0;
    if (!in.ReadVarint32(&length))
        return false;
    if (length > m_options.maxMessageBytes) {
        m_oversizedMessage = length; // reported by decode()
        return false;
    }
    const auto limit = in.PushLimit(static_cast<int>(std::min<uint32_t>(length, INT32_MAX)));
    msg.Clear();
    const bool ok = msg.MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
    in.PopLimit(limit);
    return ok;
}

uint32_t PprofDecoder::rawLocationRef(uint64_t id)
{
    // Ids normally are small and dense; they are kept as is and resolved once per unique stack in finish().
    if (id < kBigIdTag)
        return static_cast<uint32_t>(id);
    auto [it, inserted] = m_bigIdOrdinal.try_emplace(id, static_cast<uint32_t>(m_bigIds.size()));
    if (inserted)
        m_bigIds.push_back(id);
    return kBigIdTag | it->second;
}

bool PprofDecoder::readSample(CodedInputStream &in)
{
    if (!readMessage(in, m_sample))
        return false;
    m_stackBuffer.clear();
    for (uint64_t id : m_sample.location_id())
        m_stackBuffer.push_back(rawLocationRef(id));
    Profile &p = m_profile;
    if (m_valuesPerSample == SIZE_MAX)
        m_valuesPerSample = static_cast<size_t>(m_sample.value_size());
    if (static_cast<size_t>(m_sample.value_size()) != m_valuesPerSample) {
        m_valuesPerSample = SIZE_MAX - 1; // reported in finish()
        return true;
    }
    if (p.m_values.empty())
        p.m_values.setWidth(m_valuesPerSample);
    p.m_sampleStacks.push_back(p.m_stacks.intern(m_stackBuffer));
    p.m_values.appendRow(std::span<const int64_t>(m_sample.value().data(), static_cast<size_t>(m_sample.value_size())));
    m_labelBuffer.clear();
    for (const pb::Label &l : m_sample.label()) {
        m_labelBuffer.push_back(Label{static_cast<StringId>(std::clamp<int64_t>(l.key(), 0, UINT32_MAX)),
                                      static_cast<StringId>(std::clamp<int64_t>(l.str(), 0, UINT32_MAX)), l.num(),
                                      static_cast<StringId>(std::clamp<int64_t>(l.num_unit(), 0, UINT32_MAX))});
        if (l.key() < 0 || l.key() >= UINT32_MAX || l.str() < 0 || l.str() >= UINT32_MAX || l.num_unit() < 0 ||
            l.num_unit() >= UINT32_MAX)
            m_labelBuffer.back().key = UINT32_MAX; // out of range: reported in finish()
    }
    p.m_sampleLabels.push_back(p.m_labelSets.intern(m_labelBuffer));
    return true;
}

Result<Profile> PprofDecoder::decode(ZeroCopyInputStream *input, CountingStream *decompressed, GzipStream *gzip)
{
    if (m_options.cancel && m_options.cancel->load(std::memory_order_relaxed))
        return makeError(Error::Code::Cancelled, m_name + ": loading cancelled");
    CodedInputStream in(input);
    m_profile.m_strings.clear();
    auto streamError = [&](const char *field) -> Error {
        if (m_oversizedMessage)
            return limit(std::string("a ") + field + " of " + std::to_string(m_oversizedMessage) +
                         " bytes is over the limit of " + std::to_string(m_options.maxMessageBytes) + " bytes");
        if (decompressed->exceeded())
            return makeError(Error::Code::Limit, m_name + ": decompressed size exceeds the limit of " +
                                                     std::to_string(m_options.maxDecompressedBytes >> 20) +
                                                     " MiB (a gzip bomb?)");
        if (gzip && !gzip->error().empty())
            return fail("corrupt or truncated gzip data (" + gzip->error() + ")");
        return fail(std::string("truncated or corrupt protobuf while reading ") + field);
    };

    size_t fieldsRead = 0;
    while (true) {
        const uint32_t tag = in.ReadTag();
        if (tag == 0) {
            if (in.ConsumedEntireMessage() && !decompressed->exceeded() && !(gzip && !gzip->error().empty()))
                break;
            return streamError("a field tag");
        }
        if ((++fieldsRead & 0x3FF) == 0) {
            if (auto error = checkLimits(*decompressed, gzip != nullptr))
                return *error;
        }
        if ((fieldsRead & 0xFFF) == 0) {
            if (m_options.cancel && m_options.cancel->load(std::memory_order_relaxed))
                return makeError(Error::Code::Cancelled, m_name + ": loading cancelled");
            if (m_options.progress && m_inputSize > 0)
                m_options.progress(static_cast<double>(m_compressed->ByteCount()) / m_inputSize);
        }
        const int field = WireFormatLite::GetTagFieldNumber(tag);
        const auto wire = WireFormatLite::GetTagWireType(tag);
        const bool delimited = wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
        const bool varint = wire == WireFormatLite::WIRETYPE_VARINT;
        bool ok = true;
        uint64_t v = 0;
        switch (field) {
        case 1: {
            pb::ValueType vt;
            ok = delimited && readMessage(in, vt);
            if (ok)
                m_profile.m_sampleTypes.push_back(ValueType{toStringId(vt.type()), toStringId(vt.unit())});
            break;
        }
        case 2:
            ok = delimited && readSample(in);
            break;
        case 3:
            ok = delimited && readMessage(in, m_mappings.emplace_back());
            break;
        case 4:
            ok = delimited && readMessage(in, m_locations.emplace_back());
            if (ok)
                m_tableHeapBytes += static_cast<uint64_t>(m_locations.back().line_size()) * (sizeof(pb::Line) + 24);
            break;
        case 5:
            ok = delimited && readMessage(in, m_functions.emplace_back());
            break;
        case 6: {
            uint32_t length = 0;
            ok = delimited && in.ReadVarint32(&length);
            if (ok && length > m_options.maxStringBytes)
                return makeError(Error::Code::Limit, m_name + ": a string of " + std::to_string(length) +
                                                         " bytes exceeds the limit of " +
                                                         std::to_string(m_options.maxStringBytes) + " bytes");
            std::string s;
            ok = ok && in.ReadString(&s, static_cast<int>(length));
            if (ok) {
                if (s.capacity() > 15)
                    m_stringHeapBytes += s.capacity() + 1;
                m_profile.m_strings.push_back(std::move(s));
            }
            break;
        }
        case 7:
        case 8:
        case 9:
        case 10:
        case 12:
        case 14:
            ok = varint && in.ReadVarint64(&v);
            if (ok) {
                const auto sv = static_cast<int64_t>(v);
                if (field == 7)
                    m_profile.dropFrames = toStringId(sv);
                if (field == 8)
                    m_profile.keepFrames = toStringId(sv);
                if (field == 9)
                    m_profile.timeNanos = sv;
                if (field == 10)
                    m_profile.durationNanos = sv;
                if (field == 12)
                    m_profile.period = sv;
                if (field == 14)
                    m_profile.defaultSampleType = toStringId(sv);
            }
            break;
        case 11: {
            pb::ValueType vt;
            ok = delimited && readMessage(in, vt);
            if (ok)
                m_profile.periodType = ValueType{toStringId(vt.type()), toStringId(vt.unit())};
            break;
        }
        case 13: {
            // repeated int64: packed or not
            if (delimited) {
                uint32_t length = 0;
                ok = in.ReadVarint32(&length);
                const auto limit = in.PushLimit(static_cast<int>(std::min<uint32_t>(length, INT32_MAX)));
                while (ok && in.BytesUntilLimit() > 0) {
                    ok = in.ReadVarint64(&v);
                    if (ok)
                        m_profile.m_comments.push_back(toStringId(static_cast<int64_t>(v)));
                }
                in.PopLimit(limit);
            } else {
                ok = varint && in.ReadVarint64(&v);
                if (ok)
                    m_profile.m_comments.push_back(toStringId(static_cast<int64_t>(v)));
            }
            break;
        }
        default:
            ok = WireFormatLite::SkipField(&in, tag);
            break;
        }
        if (!ok) {
            static const char *names[] = {"?",
                                          "sample_type",
                                          "sample",
                                          "mapping",
                                          "location",
                                          "function",
                                          "string_table",
                                          "drop_frames",
                                          "keep_frames",
                                          "time_nanos",
                                          "duration_nanos",
                                          "period_type",
                                          "period",
                                          "comment",
                                          "default_sample_type"};
            return streamError(field >= 1 && field <= 14 ? names[field] : "an unknown field");
        }
    }
    if (auto error = finish())
        return *error;
    return std::move(m_profile);
}

std::optional<Error> PprofDecoder::checkString(int64_t index, const char *what) const
{
    if (index < 0 || static_cast<uint64_t>(index) >= m_profile.m_strings.size())
        return fail(std::string(what) + " refers to string " + std::to_string(index) + ", but the string table has " +
                    std::to_string(m_profile.m_strings.size()) + " entries");
    return std::nullopt;
}

std::optional<Error> PprofDecoder::finish()
{
    Profile &p = m_profile;
    if (p.m_strings.empty()) {
        if (m_locations.empty() && p.sampleCount() == 0 && p.m_sampleTypes.empty())
            return fail("not a pprof profile (no string table, no sample types, no samples)");
        return fail("the string table is missing");
    }
    if (!p.m_strings[0].empty())
        return fail("string_table[0] must be the empty string");
    if (p.m_sampleTypes.empty())
        return fail("the profile declares no sample types");
    for (const ValueType &vt : p.m_sampleTypes) {
        if (auto e = checkString(vt.type, "a sample type"))
            return e;
        if (auto e = checkString(vt.unit, "a sample type's unit"))
            return e;
    }
    if (auto e = checkString(p.periodType.type, "period_type"))
        return e;
    if (auto e = checkString(p.periodType.unit, "period_type's unit"))
        return e;
    if (auto e = checkString(p.dropFrames, "drop_frames"))
        return e;
    if (auto e = checkString(p.keepFrames, "keep_frames"))
        return e;
    if (auto e = checkString(p.defaultSampleType, "default_sample_type"))
        return e;
    for (StringId c : p.m_comments)
        if (auto e = checkString(c, "a comment"))
            return e;
    if (m_valuesPerSample == SIZE_MAX - 1)
        return fail("samples carry different numbers of values");
    if (p.sampleCount() != 0 && m_valuesPerSample != p.m_sampleTypes.size())
        return fail("samples carry " + std::to_string(m_valuesPerSample) + " values but the profile declares " +
                    std::to_string(p.m_sampleTypes.size()) + " sample types");
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        for (const Label &l : p.sampleLabels(i)) {
            if (l.key == UINT32_MAX)
                return fail("a sample label has a negative or huge string index");
            if (auto e = checkString(l.key, "a label key"))
                return e;
            if (auto e = checkString(l.str, "a label value"))
                return e;
            if (auto e = checkString(l.numUnit, "a label unit"))
                return e;
        }
    }

    // Mappings and functions: ids to indices.
    std::unordered_map<uint64_t, uint32_t> mappingIndex;
    for (const pb::Mapping &m : m_mappings) {
        if (m.id() == 0 || !mappingIndex.emplace(m.id(), static_cast<uint32_t>(p.m_mappings.size())).second)
            return fail("mapping id " + std::to_string(m.id()) + " is zero or repeated");
        if (auto e = checkString(m.filename(), "a mapping's file name"))
            return e;
        if (auto e = checkString(m.build_id(), "a mapping's build id"))
            return e;
        p.m_mappings.push_back(Mapping{m.id(), m.memory_start(), m.memory_limit(), m.file_offset(),
                                       static_cast<StringId>(m.filename()), static_cast<StringId>(m.build_id()),
                                       m.has_functions(), m.has_filenames(), m.has_line_numbers(),
                                       m.has_inline_frames()});
    }
    std::unordered_map<uint64_t, uint32_t> functionIndex;
    for (const pb::Function &f : m_functions) {
        if (f.id() == 0 || !functionIndex.emplace(f.id(), static_cast<uint32_t>(p.m_functions.size())).second)
            return fail("function id " + std::to_string(f.id()) + " is zero or repeated");
        if (auto e = checkString(f.name(), "a function name"))
            return e;
        if (auto e = checkString(f.system_name(), "a function's system name"))
            return e;
        if (auto e = checkString(f.filename(), "a function's file name"))
            return e;
        p.m_functions.push_back(Function{f.id(), static_cast<StringId>(f.name()),
                                         static_cast<StringId>(f.system_name()), static_cast<StringId>(f.filename()),
                                         f.start_line()});
    }
    std::unordered_map<uint64_t, uint32_t> locationIndex;
    p.m_locations.reserve(m_locations.size());
    for (const pb::Location &l : m_locations) {
        if (l.id() == 0 || !locationIndex.emplace(l.id(), static_cast<uint32_t>(p.m_locations.size())).second)
            return fail("location id " + std::to_string(l.id()) + " is zero or repeated");
        Location loc;
        loc.id = l.id();
        loc.address = l.address();
        loc.isFolded = l.is_folded();
        if (l.mapping_id() != 0) {
            auto it = mappingIndex.find(l.mapping_id());
            if (it == mappingIndex.end())
                return fail("location " + std::to_string(l.id()) + " refers to missing mapping " +
                            std::to_string(l.mapping_id()));
            loc.mappingIndex = it->second;
        }
        loc.lines.reserve(l.line_size());
        for (const pb::Line &line : l.line()) {
            uint32_t fn = kNoIndex;
            if (line.function_id() != 0) {
                auto it = functionIndex.find(line.function_id());
                if (it == functionIndex.end())
                    return fail("location " + std::to_string(l.id()) + " refers to missing function " +
                                std::to_string(line.function_id()));
                fn = it->second;
            }
            loc.lines.push_back(Line{fn, line.line(), line.column()});
        }
        p.m_locations.push_back(std::move(loc));
    }
    m_locations.clear();
    m_locations.shrink_to_fit();

    // Stacks were interned over raw ids. Raw id -> location index is one-to-one, so distinct raw stacks stay
    // distinct once resolved: the table's frames are rewritten in place (and rehashed) instead of re-interned.
    // Location ids are usually small and dense, so they resolve through a vector rather than a hash map.
    std::vector<uint32_t> dense;
    uint64_t maxSmallId = 0;
    for (const Location &loc : p.m_locations) {
        if (loc.id < kBigIdTag)
            maxSmallId = std::max(maxSmallId, loc.id);
    }
    if (maxSmallId <= 4 * p.m_locations.size() + 1024) {
        dense.assign(maxSmallId + 1, kNoIndex);
        for (uint32_t i = 0; i < p.m_locations.size(); ++i) {
            if (p.m_locations[i].id < kBigIdTag)
                dense[p.m_locations[i].id] = i;
        }
    }
    auto resolve = [&](uint32_t raw, uint64_t &id) -> uint32_t {
        id = (raw & kBigIdTag) ? m_bigIds[raw & ~kBigIdTag] : raw;
        if (!(raw & kBigIdTag) && !dense.empty())
            return raw < dense.size() ? dense[raw] : kNoIndex;
        auto it = locationIndex.find(id);
        return it == locationIndex.end() ? kNoIndex : it->second;
    };
    for (uint32_t s = 0; s < p.m_stacks.size(); ++s) {
        for (uint32_t raw : p.m_stacks.stack(s)) {
            uint64_t id = 0;
            if (resolve(raw, id) == kNoIndex)
                return fail("a sample refers to missing location " + std::to_string(id));
        }
    }
    p.m_stacks.remapFrames([&](uint32_t raw) {
        uint64_t id = 0;
        return resolve(raw, id);
    });
    return std::nullopt;
}

namespace {

Result<Profile> decodeStream(ZeroCopyInputStream *raw, bool gzipped, const std::string &name,
                             const PprofReadOptions &options, uint64_t inputSize)
{
    CountingStream compressed(raw, UINT64_MAX);
    std::optional<GzipStream> gzip;
    ZeroCopyInputStream *source = &compressed;
    if (gzipped) {
        gzip.emplace(&compressed);
        source = &*gzip;
    }
    CountingStream decompressed(source, options.maxDecompressedBytes);
    PprofDecoder decoder(name, options, &compressed, inputSize);
    return decoder.decode(&decompressed, &decompressed, gzip ? &*gzip : nullptr);
}

bool hasGzipMagic(const unsigned char *p, size_t n)
{
    return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

} // namespace

Result<Profile> readPprofBytes(std::string_view bytes, const std::string &name, const PprofReadOptions &options)
{
    if (bytes.empty())
        return makeError(Error::Code::Format, name + ": the file is empty");
    const bool gz = hasGzipMagic(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size());
    google::protobuf::io::ArrayInputStream array(bytes.data(), static_cast<int>(bytes.size()));
    return decodeStream(&array, gz, name, options, bytes.size());
}

Result<Profile> readPprofFile(const std::string &path, const PprofReadOptions &options)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(Error::Code::Io, path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return makeError(Error::Code::Io, path + ": not a regular file");
    }
    if (st.st_size == 0) {
        ::close(fd);
        return makeError(Error::Code::Format, path + ": the file is empty");
    }
    unsigned char magic[2] = {0, 0};
    const bool gz = ::pread(fd, magic, 2, 0) == 2 && hasGzipMagic(magic, 2);
    google::protobuf::io::FileInputStream file(fd, 1 << 16);
    file.SetCloseOnDelete(true);
    auto result = decodeStream(&file, gz, path, options, static_cast<uint64_t>(st.st_size));
    if (!result.ok() && file.GetErrno() != 0)
        return makeError(Error::Code::Io, path + ": " + std::strerror(file.GetErrno()));
    return result;
}

} // namespace emberline::engine
