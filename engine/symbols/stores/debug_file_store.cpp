#include "engine/symbols/stores/debug_file_store.h"

#include "engine/common/kept_files.h"

#include "engine/common/strings.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace emberline::engine {
namespace {

void initStoreLibelf()
{
    static const bool initialised = elf_version(EV_CURRENT) != EV_NONE;
    (void)initialised;
}

// Every section's bytes and the section header table lie inside the file, and the build id is `buildId`.
bool copyChecks(Elf *elf, uint64_t fileSize, const std::string &buildId)
{
    GElf_Ehdr header;
    size_t sections = 0;
    if (elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &header) == nullptr || elf_getshdrnum(elf, &sections) != 0 ||
        sections == 0 || header.e_shoff > fileSize || sections * header.e_shentsize > fileSize - header.e_shoff)
        return false;
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr section;
        if (gelf_getshdr(scn, &section) == nullptr)
            return false;
        if (section.sh_type != SHT_NOBITS &&
            (section.sh_offset > fileSize || section.sh_size > fileSize - section.sh_offset))
            return false;
    }
    const void *bits = nullptr;
    const ssize_t length = dwelf_elf_gnu_build_id(elf, &bits);
    return length > 0 && hexBytes(static_cast<const unsigned char *>(bits), size_t(length)) == buildId;
}

// Removes the copies used least lately (oldest modification time) until the folder holds at most `maximumBytes`;
// `keep` stays whatever its size.
void evictCopies(const std::filesystem::path &directory, const std::filesystem::path &keep, uint64_t maximumBytes)
{
    struct Copy {
        std::filesystem::path path;
        std::filesystem::file_time_type used;
        uint64_t bytes = 0;
    };
    std::vector<Copy> copies;
    uint64_t total = 0;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(directory, ec)) {
        std::error_code entryError;
        if (entry.path().extension() != ".debug" || !entry.is_regular_file(entryError))
            continue;
        const uint64_t bytes = entry.file_size(entryError);
        const auto used = entry.last_write_time(entryError);
        if (entryError)
            continue;
        total += bytes;
        if (entry.path() != keep)
            copies.push_back({entry.path(), used, bytes});
    }
    std::sort(copies.begin(), copies.end(), [](const Copy &a, const Copy &b) { return a.used < b.used; });
    for (const Copy &copy : copies) {
        if (total <= maximumBytes)
            break;
        if (std::filesystem::remove(copy.path, ec))
            total -= copy.bytes;
    }
}

bool writeElfCopy(Elf *in, int fd)
{
    Elf *out = elf_begin(fd, ELF_C_WRITE, nullptr);
    if (out == nullptr)
        return false;
    GElf_Ehdr header;
    size_t programHeaders = 0;
    bool ok = gelf_getehdr(in, &header) != nullptr && elf_getphdrnum(in, &programHeaders) == 0 &&
              gelf_newehdr(out, gelf_getclass(in)) != nullptr;
    if (ok && programHeaders > 0) {
        ok = gelf_newphdr(out, programHeaders) != nullptr;
        for (size_t i = 0; ok && i < programHeaders; ++i) {
            GElf_Phdr programHeader;
            ok = gelf_getphdr(in, int(i), &programHeader) != nullptr &&
                 gelf_update_phdr(out, int(i), &programHeader) != 0;
        }
    }
    // The sections in their order, each with the data libelf holds for it: inflated where libdw inflated it,
    // still compressed (with its SHF_COMPRESSED flag) where libdw left it; libelf lays the file out again.
    for (Elf_Scn *scn = elf_nextscn(in, nullptr); ok && scn != nullptr; scn = elf_nextscn(in, scn)) {
        GElf_Shdr section;
        Elf_Scn *copy = elf_newscn(out);
        ok = copy != nullptr && gelf_getshdr(scn, &section) != nullptr;
        Elf_Data *data = ok ? elf_getdata(scn, nullptr) : nullptr;
        if (ok && data != nullptr) {
            Elf_Data *copied = elf_newdata(copy);
            ok = copied != nullptr && elf_getdata(scn, data) == nullptr; // one data block per section
            if (ok) {
                copied->d_buf = data->d_buf;
                copied->d_type = data->d_type;
                copied->d_size = data->d_size;
                copied->d_align = data->d_align;
                copied->d_version = data->d_version;
                copied->d_off = 0;
            }
        }
        ok = ok && gelf_update_shdr(copy, &section) != 0;
    }
    ok = ok && gelf_update_ehdr(out, &header) != 0 && elf_update(out, ELF_C_WRITE) >= 0;
    elf_end(out);
    return ok;
}

} // namespace

std::string debugFileStoreDirectory()
{
    return keptFilesDirectory("debug-files", "EMBERLINE_SYMBOL_CACHE");
}

std::string storedDebugFilePath(const std::string &directory, const std::string &buildId, int originalFd)
{
    if (directory.empty() || buildId.empty())
        return {};
    for (char c : buildId)
        if (!std::isxdigit(static_cast<unsigned char>(c)))
            return {};
    struct stat status {};
    if (::fstat(originalFd, &status) != 0 || !S_ISREG(status.st_mode))
        return {};
    return directory + '/' + buildId + '-' + std::to_string(status.st_size) + '-' +
           std::to_string(status.st_mtim.tv_sec) + '.' + std::to_string(status.st_mtim.tv_nsec) + ".debug";
}

int openStoredDebugFile(const std::string &copyPath, const std::string &buildId)
{
    if (copyPath.empty())
        return -1;
    const int fd = ::open(copyPath.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    initStoreLibelf();
    struct stat status {};
    bool ok = ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
    if (ok) {
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
        ok = elf != nullptr && copyChecks(elf, uint64_t(status.st_size), buildId);
        elf_end(elf);
    }
    if (!ok) {
        ::close(fd);
        ::unlink(copyPath.c_str());
        return -1;
    }
    // Marks the copy as used now: the bound on the folder removes the copies used least lately first.
    ::utimensat(AT_FDCWD, copyPath.c_str(), nullptr, 0);
    return fd;
}

bool hasCompressedSections(int fd)
{
    initStoreLibelf();
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    bool compressed = false;
    for (Elf_Scn *scn = elf != nullptr ? elf_nextscn(elf, nullptr) : nullptr; scn != nullptr && !compressed;
         scn = elf_nextscn(elf, scn)) {
        GElf_Shdr section;
        compressed = gelf_getshdr(scn, &section) != nullptr && (section.sh_flags & SHF_COMPRESSED) != 0;
    }
    elf_end(elf);
    return compressed;
}

bool storeDebugFile(const std::string &copyPath, Elf *elf, uint64_t maximumBytes)
{
    if (copyPath.empty() || elf == nullptr)
        return false;
    // A copy larger than a quarter of the bound would push out most of the others (and cost a long write): the
    // original is inflated each time instead.
    uint64_t bytes = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr section;
        if (gelf_getshdr(scn, &section) != nullptr && section.sh_type != SHT_NOBITS)
            bytes += section.sh_size;
    }
    if (bytes > maximumBytes / 4)
        return false;
    const std::filesystem::path path(copyPath);
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    const std::string temp = copyPath + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    bool ok = writeElfCopy(elf, fd);
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(temp.c_str(), copyPath.c_str()) != 0) {
        ::unlink(temp.c_str());
        return false;
    }
    evictCopies(path.parent_path(), path, maximumBytes);
    return true;
}

} // namespace emberline::engine
