#include "engine/inject/unsafe_code.h"

#include "engine/common/fd_closer.h"
#include "engine/unwind/elf_image.h" // readElfBuildIdOf

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string_view>

namespace emberline::engine {
namespace {

// Exported or hidden global functions that take the allocator's, the loader's or the stack cache's locks, or run
// with them held. Not pthread_join: a thread waiting there holds nothing; freeing the joined thread's stack
// afterwards takes the stack cache lock in functions of their own (__nptl_free_tcb, __nptl_deallocate_stack).
const std::set<std::string_view> kUnsafeFunctions = {
    "malloc",
    "free",
    "calloc",
    "realloc",
    "reallocarray",
    "memalign",
    "posix_memalign",
    "aligned_alloc",
    "valloc",
    "pvalloc",
    "cfree",
    "malloc_trim",
    "malloc_usable_size",
    "malloc_stats",
    "malloc_info",
    "mallinfo",
    "mallinfo2",
    "mallopt",
    "__libc_malloc",
    "__libc_free",
    "__libc_calloc",
    "__libc_realloc",
    "__libc_memalign",
    "__libc_valloc",
    "__libc_pvalloc",
    "__libc_mallopt",
    "__libc_mallinfo",
    "__libc_mallinfo2",
    "__malloc_trim",
    "__posix_memalign",
    "__malloc_usable_size",
    "__malloc_fork_lock_parent",
    "__malloc_fork_unlock_parent",
    "__malloc_fork_unlock_child",
    "__malloc_arena_thread_freeres",
    "fork",
    "__fork",
    "__libc_fork",
    "_Fork",
    "dlopen",
    "dlclose",
    "dlsym",
    "dlvsym",
    "dladdr",
    "dladdr1",
    "dlinfo",
    "dlmopen",
    "dlerror",
    "dl_iterate_phdr",
    "__dl_iterate_phdr",
    "__libc_dlopen_mode",
    "__libc_dlclose",
    "__libc_dlsym",
    "__libc_dlvsym",
    "_dl_addr",
    "pthread_create",
    "__pthread_create_2_1",
    "__pthread_create_2_0",
    "__nptl_deallocate_stack",
    "__nptl_free_stacks",
    "__nptl_stack_list_add",
    "__nptl_stack_list_del",
    "__nptl_free_tcb",
    "__reclaim_stacks",
};

// glibc's source files whose local functions (in .symtab, after the file's STT_FILE symbol) all count.
const std::set<std::string_view> kUnsafeFiles = {
    "malloc.c",  "arena.c",   "hooks.c",      "morecore.c",       "malloc-hugepages.c",
    "fork.c",    "_Fork.c",   "nptl-stack.c", "allocatestack.c",  "pthread_create.c",
    "dl-libc.c", "dl-addr.c", "dl-error.c",   "dl-iteratephdr.c", "dl-sym.c",
    "dladdr.c",  "dladdr1.c", "dlclose.c",    "dlerror.c",        "dlinfo.c",
    "dlmopen.c", "dlopen.c",  "dlopenold.c",  "dlsym.c",          "dlvsym.c",
};

// Local functions of those files that every thread runs outside any lock: the outermost frame of each thread.
const std::set<std::string_view> kAlwaysOnStack = {"start_thread"};

// Adds the unsafe functions of one symbol table section; whether it was a full table (.symtab).
bool collect(Elf *elf, Elf_Scn *section, const GElf_Shdr &header, int64_t bias, const std::string &module,
             std::vector<UnsafeCode::Range> &out)
{
    Elf_Data *data = elf_getdata(section, nullptr);
    const size_t count = data && header.sh_entsize ? header.sh_size / header.sh_entsize : 0;
    std::string_view file;
    for (size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym))
            continue;
        const char *name = elf_strptr(elf, header.sh_link, sym.st_name);
        if (!name)
            continue;
        const int type = GELF_ST_TYPE(sym.st_info);
        if (type == STT_FILE) {
            file = name;
            continue;
        }
        if (type != STT_FUNC || sym.st_size == 0 || sym.st_shndx == SHN_UNDEF)
            continue;
        const std::string_view symbolName(name);
        const bool local = GELF_ST_BIND(sym.st_info) == STB_LOCAL;
        // Local names carry their source file; ".cold" parts of functions are named after them.
        const std::string_view root = symbolName.substr(0, symbolName.find('.'));
        const bool unsafe =
            kUnsafeFunctions.contains(root) || (local && kUnsafeFiles.contains(file) && !kAlwaysOnStack.contains(root));
        if (!unsafe)
            continue;
        const uint64_t start = sym.st_value + static_cast<uint64_t>(bias);
        out.push_back({start, start + sym.st_size, std::string(symbolName) + " in " + module});
    }
    return header.sh_type == SHT_SYMTAB;
}

// Reads the unsafe functions of an ELF file's .symtab (or, without one and if `dynsymToo`, .dynsym).
bool collectFrom(int fd, bool dynsymToo, int64_t bias, const std::string &module, std::vector<UnsafeCode::Range> &out)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    if (!elf)
        return false;
    Elf_Scn *symtab = nullptr, *dynsym = nullptr;
    GElf_Shdr symtabHeader{}, dynsymHeader{};
    for (Elf_Scn *s = elf_nextscn(elf, nullptr); s; s = elf_nextscn(elf, s)) {
        GElf_Shdr h;
        if (!gelf_getshdr(s, &h))
            continue;
        if (h.sh_type == SHT_SYMTAB && h.sh_size > 0) {
            symtab = s;
            symtabHeader = h;
        } else if (h.sh_type == SHT_DYNSYM) {
            dynsym = s;
            dynsymHeader = h;
        }
    }
    bool found = false;
    if (symtab)
        found = collect(elf, symtab, symtabHeader, bias, module, out);
    else if (dynsym && dynsymToo)
        found = collect(elf, dynsym, dynsymHeader, bias, module, out);
    elf_end(elf);
    return found;
}

// Whether a shared object other than libc brings an allocator of its own (jemalloc, tcmalloc, a sanitizer's runtime):
// its .dynsym defines malloc. Its locks are internal to it, so the whole of its code counts (Emberline's own agent,
// whose hooks call the next allocator and hold nothing dlopen takes, is left out).
bool bringsAllocator(int pid, const TargetModule &module)
{
    const std::string base = fileBaseName(module.path);
    if (base.find(".so") == std::string::npos || base.starts_with("libc.so") || base.starts_with("libemberline_agent"))
        return false;
    FdCloser fd(openTargetFile(pid, module));
    if (fd.fd < 0)
        return false;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd.fd, ELF_C_READ_MMAP, nullptr);
    if (!elf)
        return false;
    bool found = false;
    for (Elf_Scn *s = elf_nextscn(elf, nullptr); s && !found; s = elf_nextscn(elf, s)) {
        GElf_Shdr h;
        if (!gelf_getshdr(s, &h) || h.sh_type != SHT_DYNSYM || h.sh_entsize == 0)
            continue;
        Elf_Data *data = elf_getdata(s, nullptr);
        const size_t count = data ? h.sh_size / h.sh_entsize : 0;
        for (size_t i = 0; i < count && !found; ++i) {
            GElf_Sym sym;
            const char *name =
                gelf_getsym(data, static_cast<int>(i), &sym) ? elf_strptr(elf, h.sh_link, sym.st_name) : nullptr;
            found = name && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF &&
                    std::string_view(name) == "malloc";
        }
    }
    elf_end(elf);
    return found;
}

} // namespace

UnsafeCode UnsafeCode::find(int pid, const std::vector<TargetMapping> &maps, const std::vector<TargetModule> &modules)
{
    UnsafeCode code;
    if (const TargetModule *libc = findModuleByName(modules, "libc"))
        code.addLibc(pid, *libc);
    for (const TargetModule &m : modules) {
        if (isDynamicLoader(m.path))
            code.addLoader(maps, m);
        else if (bringsAllocator(pid, m))
            code.addModule(maps, m, "the allocator in " + fileBaseName(m.path));
    }
    std::sort(code.m_ranges.begin(), code.m_ranges.end(),
              [](const Range &a, const Range &b) { return a.start < b.start; });
    return code;
}

void UnsafeCode::addLibc(int pid, const TargetModule &libc)
{
    FdCloser fd(openTargetFile(pid, libc));
    if (fd.fd < 0)
        return;
    const std::optional<int64_t> bias = loadBias(fd.fd, libc);
    if (!bias)
        return;
    const std::string module = fileBaseName(libc.path);
    if (collectFrom(fd.fd, false, *bias, module, m_ranges)) {
        m_source = ".symtab of " + libc.path;
        return;
    }
    // The debug file by build id: the same code, so the same addresses.
    const std::string buildId = readElfBuildIdOf(fd.fd);
    if (buildId.size() > 2) {
        const std::string debug =
            "/usr/lib/debug/.build-id/" + buildId.substr(0, 2) + "/" + buildId.substr(2) + ".debug";
        FdCloser debugFd(::open(debug.c_str(), O_RDONLY | O_CLOEXEC));
        if (debugFd.fd >= 0 && readElfBuildIdOf(debugFd.fd) == buildId &&
            collectFrom(debugFd.fd, false, *bias, module, m_ranges)) {
            m_source = ".symtab of " + debug;
            return;
        }
    }
    collectFrom(fd.fd, true, *bias, module, m_ranges);
    m_source = ".dynsym of " + libc.path;
}

void UnsafeCode::addLoader(const std::vector<TargetMapping> &maps, const TargetModule &loader)
{
    addModule(maps, loader, "the dynamic linker (" + fileBaseName(loader.path) + ")");
}

void UnsafeCode::addModule(const std::vector<TargetMapping> &maps, const TargetModule &module, const std::string &name)
{
    for (const TargetMapping &m : maps)
        if (m.executable && m.device == module.device && m.inode == module.inode)
            m_ranges.push_back({m.start, m.end, name});
}

const UnsafeCode::Range *UnsafeCode::rangeOf(uint64_t pc) const
{
    // Ranges may nest (a .cold part inside nothing, aliases of one function): look back over the few that start
    // before pc.
    auto it = std::upper_bound(m_ranges.begin(), m_ranges.end(), pc,
                               [](uint64_t address, const Range &r) { return address < r.start; });
    for (int steps = 0; it != m_ranges.begin() && steps < 8; ++steps) {
        --it;
        if (pc >= it->start && pc < it->end)
            return &*it;
    }
    return nullptr;
}

} // namespace emberline::engine
