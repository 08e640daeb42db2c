// KernelSymbols kept per boot on disk (see KernelSymbols::loadLive): one file per boot id, mode 0600 since kernel
// addresses are sensitive, written under a temporary name and renamed; the files of earlier boots are removed when a
// new one is written. A file that does not read back whole and well formed, or whose key differs, is ignored and
// replaced.
#include "engine/symbols/kernel_symbols.h"

#include "engine/common/kept_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace emberline::engine {
namespace {

constexpr uint32_t kKernelStoreMagic = 0x534b4d45; // "EMKS"
constexpr uint32_t kKernelStoreVersion = 1;

struct KernelStoreHeader {
    uint32_t magic = kKernelStoreMagic;
    uint32_t version = kKernelStoreVersion;
    uint32_t count = 0;
    uint32_t namesBytes = 0;
    uint64_t coreStart = 0;
    uint64_t coreEnd = 0;
    uint32_t keyBytes = 0;
    uint32_t entryBytes = 0;
};

std::string readSmallFile(const std::string &path, size_t limit)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    std::string text(limit, '\0');
    in.read(text.data(), std::streamsize(limit));
    text.resize(size_t(in.gcount()));
    return text;
}

// What the kept table depends on besides the boot: kptr_restrict, and each loaded module's name, size and address
// (not its use count, which changes as devices open and close).
std::string storeKey(const KernelSymbols::LiveFiles &files, std::string &bootId)
{
    bootId = readSmallFile(files.bootId, 64);
    while (!bootId.empty() && (bootId.back() == '\n' || bootId.back() == ' '))
        bootId.pop_back();
    if (bootId.empty() || bootId.find_first_not_of("0123456789abcdef-") != std::string::npos)
        return {};
    std::string key = "boot " + bootId + "\nkptr_restrict " + readSmallFile(files.kptrRestrict, 16);
    std::ifstream modules(files.modules);
    if (!modules) {
        key += "\nno modules\n";
        return key;
    }
    uLong crc = crc32(0, nullptr, 0);
    size_t count = 0;
    for (std::string line; std::getline(modules, line); ++count) {
        std::istringstream fields(line);
        std::string name, size, uses, users, state, address;
        fields >> name >> size >> uses >> users >> state >> address;
        std::string kept = name;
        kept.append(1, ' ').append(size).append(1, ' ').append(address).append(1, '\n');
        crc = crc32(crc, reinterpret_cast<const Bytef *>(kept.data()), uInt(kept.size()));
    }
    key += "\nmodules " + std::to_string(count) + ' ' + std::to_string(crc) + '\n';
    return key;
}

bool storeKernelTable(const std::string &directory, const std::string &file, const std::string &bytes)
{
    // Mode 0600: kernel addresses are sensitive.
    if (!writeKeptFile(file, bytes, 0600))
        return false;
    std::error_code ec;
    // Earlier boots' tables are never used again.
    for (const auto &entry : std::filesystem::directory_iterator(directory, ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.path() != file && name.rfind("kernel-", 0) == 0 && entry.path().extension() == ".syms")
            std::filesystem::remove(entry.path(), ec);
    }
    return true;
}

} // namespace

std::string KernelSymbols::storeDirectory()
{
    return keptFilesDirectory("kernel-symbols", "EMBERLINE_SYMBOL_CACHE");
}

// The header, the key, the entries of the kernel's own text (_stext to _etext, both included) with their name
// offsets counted from the start of the names kept, then those names. "" when the table has no _stext or _etext.
std::string KernelSymbols::coreBytes(const std::string &key) const
{
    KernelStoreHeader header;
    for (const Entry &entry : m_entries) {
        const std::string_view name = std::string_view(m_names).substr(entry.nameOffset, entry.nameLength);
        if (name == "_stext")
            header.coreStart = entry.address;
        else if (name == "_etext")
            header.coreEnd = entry.address;
    }
    if (header.coreStart == 0 || header.coreEnd <= header.coreStart)
        return {};
    std::vector<Entry> entries;
    std::string names;
    for (const Entry &entry : m_entries) {
        if (entry.address < header.coreStart || entry.address > header.coreEnd)
            continue;
        entries.push_back({entry.address, uint32_t(names.size()), entry.nameLength});
        names.append(m_names, entry.nameOffset, entry.nameLength);
    }
    header.count = uint32_t(entries.size());
    header.namesBytes = uint32_t(names.size());
    header.keyBytes = uint32_t(key.size());
    header.entryBytes = sizeof(Entry);
    std::string bytes(reinterpret_cast<const char *>(&header), sizeof header);
    bytes += key;
    bytes.append(reinterpret_cast<const char *>(entries.data()), entries.size() * sizeof(Entry));
    bytes += names;
    return bytes;
}

bool KernelSymbols::fromCoreBytes(const std::string &bytes, const std::string &key, KernelSymbols &table)
{
    KernelStoreHeader header;
    if (bytes.size() < sizeof header)
        return false;
    std::memcpy(&header, bytes.data(), sizeof header);
    const KernelStoreHeader expected;
    if (header.magic != expected.magic || header.version != expected.version || header.entryBytes != sizeof(Entry) ||
        header.keyBytes != key.size() || header.count == 0 || header.coreEnd <= header.coreStart ||
        bytes.size() != sizeof header + size_t(header.keyBytes) + size_t(header.count) * sizeof(Entry) +
                            size_t(header.namesBytes) ||
        bytes.compare(sizeof header, key.size(), key) != 0)
        return false;
    const size_t entriesAt = sizeof header + key.size();
    table.m_entries.resize(header.count);
    std::memcpy(table.m_entries.data(), bytes.data() + entriesAt, size_t(header.count) * sizeof(Entry));
    table.m_names.assign(bytes, entriesAt + size_t(header.count) * sizeof(Entry), header.namesBytes);
    for (size_t i = 0; i < table.m_entries.size(); ++i) {
        const Entry &entry = table.m_entries[i];
        if ((i > 0 && entry.address < table.m_entries[i - 1].address) || entry.address < header.coreStart ||
            entry.address > header.coreEnd || entry.nameOffset > header.namesBytes ||
            entry.nameLength > header.namesBytes - entry.nameOffset)
            return false;
    }
    table.m_coreOnly = true;
    table.m_coreStart = header.coreStart;
    table.m_coreEnd = header.coreEnd;
    return true;
}

Result<KernelSymbols> KernelSymbols::loadLive(const std::string &directory, const LiveFiles &files)
{
    std::string bootId;
    const std::string key = directory.empty() ? std::string() : storeKey(files, bootId);
    // Only while the live file shows addresses to this user: a table kept by a session that saw them does not
    // answer for one that does not.
    if (key.empty() || !problem(files.kallsyms).empty())
        return load(files.kallsyms);
    const std::string file = directory + "/kernel-" + bootId + ".syms";
    std::string bytes;
    {
        std::error_code ec;
        const uintmax_t size = std::filesystem::file_size(file, ec);
        std::ifstream in(file, std::ios::binary);
        if (!ec && in && size > 0 && size < (uintmax_t(64) << 20)) {
            bytes.resize(size);
            if (!in.read(bytes.data(), std::streamsize(size)))
                bytes.clear();
        }
    }
    KernelSymbols kept;
    if (!bytes.empty() && fromCoreBytes(bytes, key, kept))
        return kept;
    Result<KernelSymbols> loaded = load(files.kallsyms);
    if (loaded) {
        // What this session saw with addresses is what is kept: never a table of zeros.
        if (const std::string core = loaded->coreBytes(key); !core.empty())
            storeKernelTable(directory, file, core);
    }
    return loaded;
}

} // namespace emberline::engine
