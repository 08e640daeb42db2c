#include "engine/sampler/sample_log.h"

#include <cerrno>
#include <cstring>

namespace emberline::engine {
namespace {

// Version 2 adds each sample's kernel callchain, version 3 each mapping's inode, version 4 each sample's stack
// copy limit; older logs are still read.
constexpr char kMagic[] = "EMBERLINE-SAMPLE-LOG 4\n";
constexpr char kMagicV3[] = "EMBERLINE-SAMPLE-LOG 3\n";
constexpr char kMagicV2[] = "EMBERLINE-SAMPLE-LOG 2\n";
constexpr char kMagicV1[] = "EMBERLINE-SAMPLE-LOG 1\n";
constexpr size_t kMagicSize = sizeof kMagic - 1;
constexpr size_t kMaxKernelFrames = 512;
// Larger than any record a sampler can deliver (a 64 KiB stack copy, registers, a path): a length past it is
// corruption, not a record to allocate for.
constexpr uint32_t kMaxRecordBytes = 1u << 20;
constexpr size_t kMaxRegs = 64;

enum RecordType : uint8_t { Sample = 1, Mmap, Comm, Fork, Exit, Lost, Switch };

// Reads fixed-size values and byte runs from one record's payload; any read past its end marks it bad.
class RecordCursor {
public:
    RecordCursor(const std::vector<uint8_t> &data) : m_data(data) {}
    template <typename T> T get()
    {
        T value{};
        if (m_pos + sizeof value > m_data.size()) {
            m_bad = true;
            return value;
        }
        std::memcpy(&value, m_data.data() + m_pos, sizeof value);
        m_pos += sizeof value;
        return value;
    }
    std::span<const uint8_t> bytes(size_t n)
    {
        if (m_pos + n > m_data.size()) {
            m_bad = true;
            return {};
        }
        std::span<const uint8_t> out(m_data.data() + m_pos, n);
        m_pos += n;
        return out;
    }
    std::string_view text()
    {
        const auto n = get<uint32_t>();
        const auto b = bytes(n);
        return {reinterpret_cast<const char *>(b.data()), b.size()};
    }
    bool ok() const { return !m_bad && m_pos == m_data.size(); }

private:
    const std::vector<uint8_t> &m_data;
    size_t m_pos = 0;
    bool m_bad = false;
};

} // namespace

Result<std::unique_ptr<SampleLogWriter>> SampleLogWriter::create(const std::string &path)
{
    std::FILE *file = std::fopen(path.c_str(), "wb");
    if (!file)
        return makeError(Error::Code::Io, "cannot create " + path + ": " + std::strerror(errno));
    std::setvbuf(file, nullptr, _IOFBF, 1 << 20);
    auto writer = std::unique_ptr<SampleLogWriter>(new SampleLogWriter(file, path));
    writer->writeRaw(kMagic, kMagicSize);
    return writer;
}

SampleLogWriter::SampleLogWriter(std::FILE *file, std::string path) : m_file(file), m_path(std::move(path)) {}

SampleLogWriter::~SampleLogWriter()
{
    (void)close();
}

Status SampleLogWriter::close()
{
    if (m_file) {
        if (std::fclose(m_file) != 0 && !m_error)
            m_error = errno;
        m_file = nullptr;
    }
    if (m_error)
        return makeError(Error::Code::Io, "cannot write " + m_path + ": " + std::strerror(m_error));
    return Ok{};
}

void SampleLogWriter::put(const void *data, size_t size)
{
    const auto *bytes = static_cast<const uint8_t *>(data);
    m_record.insert(m_record.end(), bytes, bytes + size);
}

void SampleLogWriter::begin(uint8_t type)
{
    m_record.clear();
    m_record.push_back(type);
    m_record.resize(1 + sizeof(uint32_t)); // the payload's length, set by end()
}

void SampleLogWriter::end()
{
    const auto length = static_cast<uint32_t>(m_record.size() - 1 - sizeof(uint32_t));
    std::memcpy(m_record.data() + 1, &length, sizeof length);
    writeRaw(m_record.data(), m_record.size());
    ++m_records;
}

void SampleLogWriter::writeRaw(const void *data, size_t size)
{
    if (m_file && !m_error && std::fwrite(data, 1, size, m_file) != size)
        m_error = errno ? errno : EIO;
}

void SampleLogWriter::onSample(const RawSample &s)
{
    begin(Sample);
    putValue(static_cast<uint8_t>(s.kind));
    putValue(s.pid);
    putValue(s.tid);
    putValue(s.timeNs);
    putValue(s.period);
    putValue(s.wallNs);
    putValue(static_cast<uint8_t>(s.state));
    putValue(s.ip);
    putValue(static_cast<uint8_t>(s.inKernel));
    putValue(static_cast<uint8_t>(s.sameStack));
    putValue(static_cast<uint32_t>(s.regs.size()));
    put(s.regs.data(), s.regs.size_bytes());
    putValue(static_cast<uint32_t>(s.stack.size()));
    put(s.stack.data(), s.stack.size());
    putValue(static_cast<uint32_t>(s.kernelStack.size()));
    put(s.kernelStack.data(), s.kernelStack.size_bytes());
    putValue(s.stackLimit);
    end();
    if (m_next)
        m_next->onSample(s);
}

void SampleLogWriter::onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable,
                             uint64_t inode, std::string_view path)
{
    begin(Mmap);
    putValue(pid);
    putValue(start);
    putValue(length);
    putValue(pgoff);
    putValue(static_cast<uint8_t>(executable));
    putValue(inode);
    putValue(static_cast<uint32_t>(path.size()));
    put(path.data(), path.size());
    end();
    if (m_next)
        m_next->onMmap(pid, start, length, pgoff, executable, inode, path);
}

void SampleLogWriter::onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec)
{
    begin(Comm);
    putValue(pid);
    putValue(tid);
    putValue(static_cast<uint8_t>(exec));
    putValue(static_cast<uint32_t>(name.size()));
    put(name.data(), name.size());
    end();
    if (m_next)
        m_next->onComm(pid, tid, name, exec);
}

void SampleLogWriter::onFork(uint32_t pid, uint32_t ppid, uint32_t tid)
{
    begin(Fork);
    putValue(pid);
    putValue(ppid);
    putValue(tid);
    end();
    if (m_next)
        m_next->onFork(pid, ppid, tid);
}

void SampleLogWriter::onExit(uint32_t pid, uint32_t tid)
{
    begin(Exit);
    putValue(pid);
    putValue(tid);
    end();
    if (m_next)
        m_next->onExit(pid, tid);
}

void SampleLogWriter::onLost(uint64_t count)
{
    begin(Lost);
    putValue(count);
    end();
    if (m_next)
        m_next->onLost(count);
}

void SampleLogWriter::onSwitch(uint32_t pid, uint32_t tid, uint64_t timeNs, bool out, bool preempted)
{
    begin(Switch);
    putValue(pid);
    putValue(tid);
    putValue(timeNs);
    putValue(static_cast<uint8_t>(out));
    putValue(static_cast<uint8_t>(preempted));
    end();
    if (m_next)
        m_next->onSwitch(pid, tid, timeNs, out, preempted);
}

Result<std::unique_ptr<SampleLogReader>> SampleLogReader::open(const std::string &path)
{
    std::FILE *file = std::fopen(path.c_str(), "rb");
    if (!file)
        return makeError(Error::Code::Io, "cannot open " + path + ": " + std::strerror(errno));
    std::setvbuf(file, nullptr, _IOFBF, 1 << 20);
    char magic[kMagicSize];
    const bool read = std::fread(magic, 1, kMagicSize, file) == kMagicSize;
    const bool v4 = read && std::memcmp(magic, kMagic, kMagicSize) == 0;
    const bool v3 = v4 || (read && std::memcmp(magic, kMagicV3, kMagicSize) == 0);
    const bool v2 = read && std::memcmp(magic, kMagicV2, kMagicSize) == 0;
    if (!v3 && !v2 && !(read && std::memcmp(magic, kMagicV1, kMagicSize) == 0)) {
        std::fclose(file);
        return makeError(Error::Code::Format, path + " is not an Emberline sample log");
    }
    auto reader = std::unique_ptr<SampleLogReader>(new SampleLogReader(file, path, kMagicSize));
    reader->m_kernelStacks = v3 || v2;
    reader->m_inodes = v3;
    reader->m_stackLimits = v4;
    return reader;
}

SampleLogReader::SampleLogReader(std::FILE *file, std::string path, uint64_t offset)
    : m_file(file), m_path(std::move(path)), m_offset(offset)
{
}

SampleLogReader::~SampleLogReader()
{
    std::fclose(m_file);
}

Error SampleLogReader::corrupt(const std::string &what) const
{
    return makeError(Error::Code::Format, m_path + ": " + what + " at byte " + std::to_string(m_offset));
}

Result<size_t> SampleLogReader::deliver(SampleSink &sink, size_t maxRecords)
{
    size_t n = 0;
    while (n < maxRecords && !m_atEnd) {
        auto more = deliverOne(sink);
        if (!more)
            return more.error();
        if (!more.value()) {
            m_atEnd = true;
            break;
        }
        ++n;
    }
    return n;
}

Result<bool> SampleLogReader::deliverOne(SampleSink &sink)
{
    uint8_t header[1 + sizeof(uint32_t)];
    const size_t got = std::fread(header, 1, sizeof header, m_file);
    if (got == 0 && std::feof(m_file))
        return false;
    if (got != sizeof header)
        return corrupt("a cut record header");
    uint32_t length = 0;
    std::memcpy(&length, header + 1, sizeof length);
    if (length > kMaxRecordBytes)
        return corrupt("a record of " + std::to_string(length) + " bytes");
    m_record.resize(length);
    if (std::fread(m_record.data(), 1, length, m_file) != length)
        return corrupt("a cut record");
    RecordCursor c(m_record);
    switch (header[0]) {
    case Sample: {
        RawSample s;
        s.kind = static_cast<RawSample::Kind>(c.get<uint8_t>());
        s.pid = c.get<uint32_t>();
        s.tid = c.get<uint32_t>();
        s.timeNs = c.get<uint64_t>();
        s.period = c.get<uint64_t>();
        s.wallNs = c.get<uint64_t>();
        s.state = static_cast<ThreadState>(c.get<uint8_t>());
        s.ip = c.get<uint64_t>();
        s.inKernel = c.get<uint8_t>() != 0;
        s.sameStack = c.get<uint8_t>() != 0;
        const auto regCount = c.get<uint32_t>();
        if (regCount > kMaxRegs || s.kind > RawSample::Kind::Wait)
            return corrupt("a malformed sample");
        m_regs.resize(regCount);
        const auto regBytes = c.bytes(regCount * sizeof(uint64_t));
        if (!regBytes.empty())
            std::memcpy(m_regs.data(), regBytes.data(), regBytes.size());
        const auto stackSize = c.get<uint32_t>();
        s.stack = c.bytes(stackSize);
        s.regs = std::span<const uint64_t>(m_regs.data(), regCount);
        if (m_kernelStacks) {
            const auto kernelFrames = c.get<uint32_t>();
            if (kernelFrames > kMaxKernelFrames)
                return corrupt("a malformed sample");
            m_kernelStack.resize(kernelFrames);
            const auto kernelBytes = c.bytes(kernelFrames * sizeof(uint64_t));
            if (!kernelBytes.empty())
                std::memcpy(m_kernelStack.data(), kernelBytes.data(), kernelBytes.size());
            s.kernelStack = std::span<const uint64_t>(m_kernelStack.data(), kernelFrames);
        }
        if (m_stackLimits)
            s.stackLimit = c.get<uint32_t>();
        if (!c.ok())
            return corrupt("a malformed sample");
        sink.onSample(s);
        break;
    }
    case Mmap: {
        const auto pid = c.get<uint32_t>();
        const auto start = c.get<uint64_t>();
        const auto len = c.get<uint64_t>();
        const auto pgoff = c.get<uint64_t>();
        const bool exec = c.get<uint8_t>() != 0;
        const uint64_t inode = m_inodes ? c.get<uint64_t>() : 0;
        const auto path = c.text();
        if (!c.ok())
            return corrupt("a malformed mapping");
        sink.onMmap(pid, start, len, pgoff, exec, inode, path);
        break;
    }
    case Comm: {
        const auto pid = c.get<uint32_t>();
        const auto tid = c.get<uint32_t>();
        const bool exec = c.get<uint8_t>() != 0;
        const auto name = c.text();
        if (!c.ok())
            return corrupt("a malformed thread name");
        sink.onComm(pid, tid, name, exec);
        break;
    }
    case Fork: {
        const auto pid = c.get<uint32_t>();
        const auto ppid = c.get<uint32_t>();
        const auto tid = c.get<uint32_t>();
        if (!c.ok())
            return corrupt("a malformed fork");
        sink.onFork(pid, ppid, tid);
        break;
    }
    case Exit: {
        const auto pid = c.get<uint32_t>();
        const auto tid = c.get<uint32_t>();
        if (!c.ok())
            return corrupt("a malformed exit");
        sink.onExit(pid, tid);
        break;
    }
    case Lost: {
        const auto count = c.get<uint64_t>();
        if (!c.ok())
            return corrupt("a malformed lost count");
        sink.onLost(count);
        break;
    }
    case Switch: {
        const auto pid = c.get<uint32_t>();
        const auto tid = c.get<uint32_t>();
        const auto time = c.get<uint64_t>();
        const bool out = c.get<uint8_t>() != 0;
        const bool preempted = c.get<uint8_t>() != 0;
        if (!c.ok())
            return corrupt("a malformed context switch");
        sink.onSwitch(pid, tid, time, out, preempted);
        break;
    }
    default:
        return corrupt("an unknown record type " + std::to_string(header[0]));
    }
    m_offset += sizeof header + length;
    ++m_delivered;
    return true;
}

} // namespace emberline::engine
