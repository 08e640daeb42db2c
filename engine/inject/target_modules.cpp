#include "engine/inject/target_modules.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

namespace emberline::engine {
namespace {

// libelf over an open descriptor, ended with the scope.
class ElfReader {
public:
    explicit ElfReader(int fd)
    {
        elf_version(EV_CURRENT);
        m_elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
        if (m_elf && elf_kind(m_elf) != ELF_K_ELF) {
            elf_end(m_elf);
            m_elf = nullptr;
        }
    }
    ~ElfReader()
    {
        if (m_elf)
            elf_end(m_elf);
    }
    ElfReader(const ElfReader &) = delete;
    ElfReader &operator=(const ElfReader &) = delete;
    Elf *get() const { return m_elf; }

private:
    Elf *m_elf = nullptr;
};

} // namespace

std::string fileBaseName(const std::string &path)
{
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool isDynamicLoader(const std::string &path)
{
    const std::string base = fileBaseName(path);
    return base.starts_with("ld-linux") || (base.starts_with("ld-") && base.find(".so") != std::string::npos);
}

Result<std::vector<TargetMapping>> readTargetMaps(int pid)
{
    const std::string path = "/proc/" + std::to_string(pid) + "/maps";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        return makeError(error == EACCES || error == EPERM ? Error::Code::Permission : Error::Code::Io,
                         "cannot read " + path + ": " + std::strerror(error));
    }
    std::string text;
    char buffer[65536];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        text.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    std::vector<TargetMapping> out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        unsigned long long start = 0, end = 0, offset = 0, inode = 0;
        unsigned major = 0, minor = 0;
        char perms[8] = {};
        int pathStart = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset, &major, &minor,
                        &inode, &pathStart) < 7)
            continue;
        TargetMapping m;
        m.start = start;
        m.end = end;
        m.offset = offset;
        m.device = makedev(major, minor);
        m.inode = inode;
        m.executable = perms[2] == 'x';
        if (pathStart > 0 && pathStart <= static_cast<int>(line.size()))
            m.path = line.substr(static_cast<size_t>(pathStart));
        out.push_back(std::move(m));
    }
    if (out.empty())
        return makeError(Error::Code::Io, path + " is empty (a kernel thread, or a process that exited)");
    return out;
}

std::vector<TargetModule> targetModules(const std::vector<TargetMapping> &maps)
{
    std::map<std::pair<uint64_t, uint64_t>, TargetModule> byFile;
    for (const TargetMapping &m : maps) {
        if (m.inode == 0 || m.path.empty() || m.path[0] != '/')
            continue;
        auto [it, added] = byFile.try_emplace({m.device, m.inode});
        TargetModule &module = it->second;
        if (added || m.start < module.start) {
            module.path = m.path;
            module.device = m.device;
            module.inode = m.inode;
            module.start = m.start;
            module.firstEnd = m.end;
            module.firstOffset = m.offset;
        }
        module.end = std::max(module.end, m.end);
    }
    std::vector<TargetModule> out;
    out.reserve(byFile.size());
    for (auto &[file, module] : byFile)
        out.push_back(std::move(module));
    std::sort(out.begin(), out.end(), [](const TargetModule &a, const TargetModule &b) { return a.start < b.start; });
    return out;
}

const TargetModule *findModuleByName(const std::vector<TargetModule> &modules, const std::string &name)
{
    for (const TargetModule &m : modules) {
        const std::string base = fileBaseName(m.path);
        if (base == name || (base.size() > name.size() && base.starts_with(name) &&
                             (base[name.size()] == '.' || base[name.size()] == '-')))
            return &m;
    }
    return nullptr;
}

const TargetModule *findModuleByFile(const std::vector<TargetModule> &modules, uint64_t device, uint64_t inode,
                                     const std::string &pathInTarget)
{
    for (const TargetModule &m : modules)
        if (m.device == device && m.inode == inode)
            return &m;
    for (const TargetModule &m : modules)
        if (!pathInTarget.empty() && m.path == pathInTarget)
            return &m;
    return nullptr;
}

int openTargetFile(int pid, const TargetModule &module)
{
    char range[64];
    std::snprintf(range, sizeof range, "%llx-%llx", static_cast<unsigned long long>(module.start),
                  static_cast<unsigned long long>(module.firstEnd));
    const std::string proc = "/proc/" + std::to_string(pid);
    // map_files is the very file mapped (opening it needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE).
    int fd = ::open((proc + "/map_files/" + range).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        return fd;
    // The path in the target's root (its mount namespace), else in ours: taken when it is the file mapped.
    const std::string rootPath = proc + "/root" + module.path;
    for (const std::string &path : {rootPath, module.path}) {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat st {};
        if (::fstat(fd, &st) == 0 && st.st_ino == module.inode && st.st_dev == module.device)
            return fd;
        ::close(fd);
    }
    // An overlay filesystem shows the underlying file's device and inode in the map, not the ones stat gives: the
    // target's own path is the best left.
    return ::open(rootPath.c_str(), O_RDONLY | O_CLOEXEC);
}

std::optional<ElfSymbol> findDynamicSymbol(int fd, const std::string &name)
{
    ElfReader elf(fd);
    if (!elf.get())
        return std::nullopt;
    Elf_Scn *section = nullptr;
    while ((section = elf_nextscn(elf.get(), section))) {
        GElf_Shdr header;
        if (!gelf_getshdr(section, &header) || header.sh_type != SHT_DYNSYM || header.sh_entsize == 0)
            continue;
        Elf_Data *data = elf_getdata(section, nullptr);
        const size_t count = data ? header.sh_size / header.sh_entsize : 0;
        for (size_t i = 0; i < count; ++i) {
            GElf_Sym sym;
            if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
                continue;
            const int type = GELF_ST_TYPE(sym.st_info);
            if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE)
                continue;
            const char *symbolName = elf_strptr(elf.get(), header.sh_link, sym.st_name);
            if (symbolName && name == symbolName)
                return ElfSymbol{sym.st_value, sym.st_size};
        }
    }
    return std::nullopt;
}

std::optional<int64_t> loadBias(int fd, const TargetModule &module)
{
    ElfReader elf(fd);
    if (!elf.get())
        return std::nullopt;
    size_t count = 0;
    if (elf_getphdrnum(elf.get(), &count) != 0)
        return std::nullopt;
    for (size_t i = 0; i < count; ++i) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf.get(), static_cast<int>(i), &ph) || ph.p_type != PT_LOAD)
            continue;
        // The mapping loads the segment's file pages from its page-aligned offset on.
        const uint64_t pageMask = ~uint64_t(::sysconf(_SC_PAGESIZE) - 1);
        if ((ph.p_offset & pageMask) != module.firstOffset)
            continue;
        const uint64_t vaddrAtOffset = ph.p_vaddr - (ph.p_offset - module.firstOffset);
        return static_cast<int64_t>(module.start - vaddrAtOffset);
    }
    return std::nullopt;
}

std::optional<uint64_t> targetSymbolAddress(int pid, const TargetModule &module, const std::string &name)
{
    const int fd = openTargetFile(pid, module);
    if (fd < 0)
        return std::nullopt;
    const std::optional<ElfSymbol> symbol = findDynamicSymbol(fd, name);
    const std::optional<int64_t> bias = symbol ? loadBias(fd, module) : std::nullopt;
    ::close(fd);
    if (!symbol || !bias)
        return std::nullopt;
    return symbol->value + static_cast<uint64_t>(*bias);
}

bool hasProgramInterpreter(int fd)
{
    ElfReader elf(fd);
    size_t count = 0;
    if (!elf.get() || elf_getphdrnum(elf.get(), &count) != 0)
        return false;
    for (size_t i = 0; i < count; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf.get(), static_cast<int>(i), &ph) && ph.p_type == PT_INTERP)
            return true;
    }
    return false;
}

} // namespace emberline::engine
