// Line tables kept between sessions (line_table_store.h).
//
// The file: a header; the front, which is the key, the strings (each a 32-bit length and its bytes: source file names,
// each once), padding to 8 bytes and the units' directory (each unit's DIE offset, where its table starts, its counts
// and its table's checksum); then each unit's table, 8-byte aligned: its file names (string ids), padding to 8 bytes,
// its entries (address, file, line, column). The header's checksum (CRC-32) covers the front.
#include "engine/symbols/stores/line_table_store.h"

#include "engine/common/kept_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

namespace emberline::engine {
namespace {

constexpr uint32_t kLineStoreMagic = 0x544c4d45; // "EMLT"
constexpr uint32_t kLineStoreVersion = 2;
constexpr uint64_t kMaxLineStoreBytes = uint64_t(256) << 20;

struct LineStoreHeader {
    uint32_t magic = kLineStoreMagic;
    uint32_t version = kLineStoreVersion;
    uint32_t keyBytes = 0;
    uint32_t stringCount = 0;
    uint64_t frontBytes = 0; // the key, the strings and the directory, after the header
    uint64_t fileBytes = 0;  // the whole file
    uint32_t unitCount = 0;
    uint32_t crc = 0; // of the front
};

struct StoredUnit {
    uint64_t offset = 0; // the unit's DIE offset
    uint64_t at = 0;     // where its table starts in the file
    uint32_t fileCount = 0;
    uint32_t entryCount = 0;
    uint32_t crc = 0; // of its table
    uint32_t reserved = 0;
};

uint64_t alignedTo8(uint64_t n)
{
    return (n + 7) & ~uint64_t(7);
}

// A unit's table: its file ids, padding, its entries.
uint64_t unitTableBytes(uint64_t fileCount, uint64_t entryCount, uint64_t entryBytes)
{
    return alignedTo8(fileCount * 4) + entryCount * entryBytes;
}

std::string lineStoreFile(const std::string &directory, const std::string &buildId)
{
    if (directory.empty() || buildId.empty() || buildId.size() > 128 ||
        buildId.find_first_not_of("0123456789abcdef") != std::string::npos)
        return {};
    return directory + "/" + buildId + ".lines";
}

uint32_t lineStoreChecksum(const char *data, size_t size)
{
    uLong crc = crc32(0, nullptr, 0);
    while (size > 0) {
        const uInt chunk = static_cast<uInt>(std::min<size_t>(size, std::numeric_limits<uInt>::max()));
        crc = crc32(crc, reinterpret_cast<const Bytef *>(data), chunk);
        data += chunk;
        size -= chunk;
    }
    return static_cast<uint32_t>(crc);
}

template <typename T> void appendBytes(std::string &out, const T &value)
{
    out.append(reinterpret_cast<const char *>(&value), sizeof value);
}

template <typename T> T bytesAt(const std::string &bytes, uint64_t at)
{
    T value;
    std::memcpy(&value, bytes.data() + at, sizeof value);
    return value;
}

} // namespace

std::string LineTableStore::defaultDirectory()
{
    return keptFilesDirectory("line-tables", "EMBERLINE_SYMBOL_CACHE");
}

LineTableStore::LineTableStore(const std::string &directory, const std::string &buildId, std::string key)
    : m_file(lineStoreFile(directory, buildId)), m_key(std::move(key))
{
    if (!m_file.empty() && !load()) {
        m_strings.clear();
        m_stringIds.clear();
        m_units.clear();
        m_unitsReadBack = 0;
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
    }
}

LineTableStore::~LineTableStore()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

uint32_t LineTableStore::stringId(const char *s)
{
    const auto [it, inserted] = m_stringIds.try_emplace(s ? s : "", static_cast<uint32_t>(m_strings.size()));
    if (inserted)
        m_strings.push_back(it->first);
    return it->second;
}

const LineTableStore::Unit *LineTableStore::unit(Dwarf_Off unitOffset) const
{
    const auto it = m_units.find(unitOffset);
    if (it == m_units.end())
        return nullptr;
    if (it->second.pending) {
        if (!readUnit(it->second)) {
            m_units.erase(it); // libdw decodes it again, and the file is rewritten with it
            return nullptr;
        }
        ++m_unitsReadBack; // (not those read only to be written again)
    }
    return &it->second;
}

std::optional<LineTableStore::Location> LineTableStore::find(Dwarf_Off unitOffset, Dwarf_Addr address) const
{
    const Unit *kept = unit(unitOffset);
    if (kept == nullptr)
        return std::nullopt;
    const std::vector<Entry> &entries = kept->entries;
    auto it = std::upper_bound(entries.begin(), entries.end(), address,
                               [](Dwarf_Addr a, const Entry &e) { return a < e.low; });
    if (it == entries.begin() || (--it)->file == kNone)
        return std::nullopt;
    return Location{&m_strings[it->file], static_cast<int>(it->line), static_cast<int>(it->column)};
}

const std::vector<const std::string *> *LineTableStore::unitFiles(Dwarf_Off unitOffset) const
{
    const Unit *kept = unit(unitOffset);
    return kept == nullptr ? nullptr : &kept->files;
}

void LineTableStore::addUnit(Dwarf_Die *cu)
{
    const Dwarf_Off offset = dwarf_dieoffset(cu);
    Dwarf_Lines *lines = nullptr;
    size_t count = 0;
    if (m_units.count(offset) != 0 || dwarf_getsrclines(cu, &lines, &count) != 0 || count == 0)
        return;
    const auto addressOf = [&](size_t i) {
        Dwarf_Addr a = 0;
        dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
        return a;
    };
    // Each address run gets the row dwfl_module_getsrc picks for it: the last row at that address, or none when
    // that row ends a sequence.
    Unit unit;
    for (size_t i = 0; i < count;) {
        const Dwarf_Addr low = addressOf(i);
        size_t last = i;
        while (last + 1 < count && addressOf(last + 1) == low)
            ++last;
        Dwarf_Line *row = dwarf_onesrcline(lines, last);
        bool end = false;
        dwarf_lineendsequence(row, &end);
        Entry entry;
        entry.low = low;
        if (!end) {
            int line = 0;
            int column = 0;
            dwarf_lineno(row, &line);
            dwarf_linecol(row, &column);
            entry.file = stringId(dwarf_linesrc(row, nullptr, nullptr));
            entry.line = static_cast<uint32_t>(line);
            entry.column = static_cast<uint32_t>(column);
        }
        const Entry *before = unit.entries.empty() ? nullptr : &unit.entries.back();
        if (!before || before->file != entry.file || before->line != entry.line || before->column != entry.column)
            unit.entries.push_back(entry);
        i = last + 1;
    }
    Dwarf_Files *files = nullptr;
    size_t fileCount = 0;
    if (dwarf_getsrcfiles(cu, &files, &fileCount) == 0) {
        for (size_t i = 0; i < fileCount; ++i)
            unit.fileIds.push_back(stringId(dwarf_filesrc(files, i, nullptr, nullptr)));
    }
    for (const uint32_t id : unit.fileIds)
        unit.files.push_back(&m_strings[id]);
    m_units.emplace(offset, std::move(unit));
    ++m_unitsAdded;
    m_dirty = true;
}

bool LineTableStore::load()
{
    m_fd = ::open(m_file.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (m_fd < 0 || ::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_size) > kMaxLineStoreBytes)
        return false;
    LineStoreHeader header;
    if (::pread(m_fd, &header, sizeof header, 0) != ssize_t(sizeof header) || header.magic != kLineStoreMagic ||
        header.version != kLineStoreVersion || header.keyBytes != m_key.size() ||
        header.fileBytes != uint64_t(st.st_size) || header.frontBytes > header.fileBytes - sizeof header)
        return false;
    std::string front(header.frontBytes, '\0');
    if (::pread(m_fd, front.data(), front.size(), sizeof header) != ssize_t(front.size()) ||
        lineStoreChecksum(front.data(), front.size()) != header.crc || front.compare(0, m_key.size(), m_key) != 0)
        return false;
    // Every count is checked against what is left of the front before it is used.
    uint64_t at = header.keyBytes;
    const auto left = [&](uint64_t need) { return need <= front.size() - at; };
    for (uint32_t i = 0; i < header.stringCount; ++i) {
        if (!left(sizeof(uint32_t)))
            return false;
        const auto length = bytesAt<uint32_t>(front, at);
        at += sizeof(uint32_t);
        if (!left(length))
            return false;
        std::string s(front.data() + at, length);
        if (!m_stringIds.try_emplace(s, static_cast<uint32_t>(m_strings.size())).second)
            return false; // each string is written once
        m_strings.push_back(std::move(s));
        at += length;
    }
    at = alignedTo8(sizeof header + at) - sizeof header;
    if (at > front.size() || (front.size() - at) / sizeof(StoredUnit) != header.unitCount ||
        (front.size() - at) % sizeof(StoredUnit) != 0)
        return false;
    const uint64_t tablesStart = sizeof header + front.size();
    for (uint32_t u = 0; u < header.unitCount; ++u, at += sizeof(StoredUnit)) {
        const auto stored = bytesAt<StoredUnit>(front, at);
        const uint64_t bytes = unitTableBytes(stored.fileCount, stored.entryCount, sizeof(Entry));
        if (stored.at < tablesStart || stored.at % 8 != 0 || stored.at > header.fileBytes ||
            bytes > header.fileBytes - stored.at)
            return false;
        Unit unit;
        unit.pending = true;
        unit.at = stored.at;
        unit.fileCount = stored.fileCount;
        unit.entryCount = stored.entryCount;
        unit.crc = stored.crc;
        if (!m_units.emplace(stored.offset, std::move(unit)).second)
            return false;
    }
    return true;
}

bool LineTableStore::readUnit(Unit &unit) const
{
    const uint64_t fileIdBytes = alignedTo8(uint64_t(unit.fileCount) * 4);
    std::string bytes(unitTableBytes(unit.fileCount, unit.entryCount, sizeof(Entry)), '\0');
    if (m_fd < 0 || ::pread(m_fd, bytes.data(), bytes.size(), off_t(unit.at)) != ssize_t(bytes.size()) ||
        lineStoreChecksum(bytes.data(), bytes.size()) != unit.crc)
        return false;
    Unit read;
    for (uint32_t f = 0; f < unit.fileCount; ++f) {
        read.fileIds.push_back(bytesAt<uint32_t>(bytes, uint64_t(f) * 4));
        if (read.fileIds.back() >= m_strings.size())
            return false;
        read.files.push_back(&m_strings[read.fileIds.back()]);
    }
    read.entries.resize(unit.entryCount);
    std::memcpy(read.entries.data(), bytes.data() + fileIdBytes, uint64_t(unit.entryCount) * sizeof(Entry));
    for (size_t i = 0; i < read.entries.size(); ++i) {
        const Entry &e = read.entries[i];
        if ((e.file != kNone && e.file >= m_strings.size()) || (i > 0 && e.low <= read.entries[i - 1].low))
            return false;
    }
    unit = std::move(read);
    return true;
}

bool LineTableStore::save()
{
    if (m_file.empty() || !m_dirty)
        return true;
    // The units still in the file are read now, to be written again (one that does not read back is left out).
    for (auto it = m_units.begin(); it != m_units.end();)
        it = it->second.pending && !readUnit(it->second) ? m_units.erase(it) : std::next(it);
    std::string front = m_key;
    for (const std::string &s : m_strings) {
        appendBytes(front, static_cast<uint32_t>(s.size()));
        front += s;
    }
    front.resize(alignedTo8(sizeof(LineStoreHeader) + front.size()) - sizeof(LineStoreHeader), '\0');
    const uint64_t tablesStart = sizeof(LineStoreHeader) + front.size() + m_units.size() * sizeof(StoredUnit);
    std::string tables;
    for (const auto &[offset, unit] : m_units) {
        const size_t start = tables.size();
        for (const uint32_t id : unit.fileIds)
            appendBytes(tables, id);
        tables.resize(start + alignedTo8(unit.fileIds.size() * 4), '\0');
        tables.append(reinterpret_cast<const char *>(unit.entries.data()), unit.entries.size() * sizeof(Entry));
        appendBytes(front, StoredUnit{offset, tablesStart + start, static_cast<uint32_t>(unit.fileIds.size()),
                                      static_cast<uint32_t>(unit.entries.size()),
                                      lineStoreChecksum(tables.data() + start, tables.size() - start), 0});
    }
    LineStoreHeader header;
    header.keyBytes = static_cast<uint32_t>(m_key.size());
    header.stringCount = static_cast<uint32_t>(m_strings.size());
    header.frontBytes = front.size();
    header.fileBytes = sizeof header + front.size() + tables.size();
    header.unitCount = static_cast<uint32_t>(m_units.size());
    header.crc = lineStoreChecksum(front.data(), front.size());
    if (header.fileBytes > kMaxLineStoreBytes)
        return false;
    std::string bytes;
    bytes.reserve(header.fileBytes);
    appendBytes(bytes, header);
    bytes += front;
    bytes += tables;
    if (!writeKeptFile(m_file, bytes, 0600))
        return false;
    m_dirty = false;
    return true;
}

} // namespace emberline::engine
