// Line tables kept between sessions (line_table_store.h).
//
// The file: a header, the key, the strings (each a 32-bit length and its bytes: source file names, each once), then
// each unit: its DIE offset and counts, its file names (string ids), its entries (address, file, line, column). The
// header's checksum (CRC-32) covers everything after it.
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
constexpr uint32_t kLineStoreVersion = 1;
constexpr uint64_t kMaxLineStoreBytes = uint64_t(256) << 20;

struct LineStoreHeader {
    uint32_t magic = kLineStoreMagic;
    uint32_t version = kLineStoreVersion;
    uint32_t keyBytes = 0;
    uint32_t stringCount = 0;
    uint64_t bodyBytes = 0; // the strings and units, after the key
    uint32_t unitCount = 0;
    uint32_t crc = 0;
};

struct StoredUnit {
    uint64_t offset = 0;
    uint32_t fileCount = 0;
    uint32_t entryCount = 0;
};

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
    }
}

uint32_t LineTableStore::stringId(const char *s)
{
    const auto [it, inserted] = m_stringIds.try_emplace(s ? s : "", static_cast<uint32_t>(m_strings.size()));
    if (inserted)
        m_strings.push_back(it->first);
    return it->second;
}

std::optional<LineTableStore::Location> LineTableStore::find(Dwarf_Off unitOffset, Dwarf_Addr address) const
{
    const auto unit = m_units.find(unitOffset);
    if (unit == m_units.end())
        return std::nullopt;
    const std::vector<Entry> &entries = unit->second.entries;
    auto it = std::upper_bound(entries.begin(), entries.end(), address,
                               [](Dwarf_Addr a, const Entry &e) { return a < e.low; });
    if (it == entries.begin() || (--it)->file == kNone)
        return std::nullopt;
    return Location{&m_strings[it->file], static_cast<int>(it->line), static_cast<int>(it->column)};
}

const std::vector<const std::string *> *LineTableStore::unitFiles(Dwarf_Off unitOffset) const
{
    const auto it = m_units.find(unitOffset);
    return it == m_units.end() ? nullptr : &it->second.files;
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
    std::string bytes;
    if (!readKeptFile(m_file, kMaxLineStoreBytes, bytes) || bytes.size() < sizeof(LineStoreHeader))
        return false;
    const auto header = bytesAt<LineStoreHeader>(bytes, 0);
    if (header.magic != kLineStoreMagic || header.version != kLineStoreVersion || header.keyBytes != m_key.size() ||
        header.keyBytes > bytes.size() - sizeof header ||
        header.bodyBytes != bytes.size() - sizeof header - header.keyBytes ||
        lineStoreChecksum(bytes.data() + sizeof header, bytes.size() - sizeof header) != header.crc ||
        bytes.compare(sizeof header, m_key.size(), m_key) != 0)
        return false;
    // Every count is checked against what is left of the file before it is used.
    uint64_t at = sizeof header + uint64_t(header.keyBytes);
    const auto left = [&](uint64_t need) { return need <= bytes.size() - at; };
    for (uint32_t i = 0; i < header.stringCount; ++i) {
        if (!left(sizeof(uint32_t)))
            return false;
        const auto length = bytesAt<uint32_t>(bytes, at);
        at += sizeof(uint32_t);
        if (!left(length))
            return false;
        std::string s(bytes.data() + at, length);
        if (!m_stringIds.try_emplace(s, static_cast<uint32_t>(m_strings.size())).second)
            return false; // each string is written once
        m_strings.push_back(std::move(s));
        at += length;
    }
    for (uint32_t u = 0; u < header.unitCount; ++u) {
        if (!left(sizeof(StoredUnit)))
            return false;
        const auto stored = bytesAt<StoredUnit>(bytes, at);
        at += sizeof(StoredUnit);
        if (!left(uint64_t(stored.fileCount) * 4 + uint64_t(stored.entryCount) * sizeof(Entry)))
            return false;
        Unit unit;
        for (uint32_t f = 0; f < stored.fileCount; ++f, at += 4) {
            unit.fileIds.push_back(bytesAt<uint32_t>(bytes, at));
            if (unit.fileIds.back() >= m_strings.size())
                return false;
            unit.files.push_back(&m_strings[unit.fileIds.back()]);
        }
        unit.entries.resize(stored.entryCount);
        std::memcpy(unit.entries.data(), bytes.data() + at, uint64_t(stored.entryCount) * sizeof(Entry));
        at += uint64_t(stored.entryCount) * sizeof(Entry);
        for (size_t i = 0; i < unit.entries.size(); ++i) {
            const Entry &e = unit.entries[i];
            if ((e.file != kNone && e.file >= m_strings.size()) || (i > 0 && e.low <= unit.entries[i - 1].low))
                return false;
        }
        if (!m_units.emplace(stored.offset, std::move(unit)).second)
            return false;
    }
    if (at != bytes.size())
        return false;
    m_unitsReadBack = header.unitCount;
    return true;
}

bool LineTableStore::save()
{
    if (m_file.empty() || !m_dirty)
        return true;
    std::string body = m_key;
    for (const std::string &s : m_strings) {
        appendBytes(body, static_cast<uint32_t>(s.size()));
        body += s;
    }
    for (const auto &[offset, unit] : m_units) {
        appendBytes(body, StoredUnit{offset, static_cast<uint32_t>(unit.fileIds.size()),
                                     static_cast<uint32_t>(unit.entries.size())});
        for (const uint32_t id : unit.fileIds)
            appendBytes(body, id);
        body.append(reinterpret_cast<const char *>(unit.entries.data()), unit.entries.size() * sizeof(Entry));
    }
    if (sizeof(LineStoreHeader) + body.size() > kMaxLineStoreBytes)
        return false;
    LineStoreHeader header;
    header.keyBytes = static_cast<uint32_t>(m_key.size());
    header.stringCount = static_cast<uint32_t>(m_strings.size());
    header.bodyBytes = body.size() - m_key.size();
    header.unitCount = static_cast<uint32_t>(m_units.size());
    header.crc = lineStoreChecksum(body.data(), body.size());

    std::string bytes;
    bytes.reserve(sizeof header + body.size());
    appendBytes(bytes, header);
    bytes += body;
    if (!writeKeptFile(m_file, bytes, 0600))
        return false;
    m_dirty = false;
    return true;
}

} // namespace emberline::engine
