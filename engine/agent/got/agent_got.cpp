// The injected front end's redirection of the allocation functions through each module's global offset table
// (agent_got.h). The dynamic section's tables are read as the dynamic linker left them: on x86-64 it has added the
// load address to their pointers in place (a pointer below the load address is one it left alone, and gets it here).
// A rewritten entry inside the module's RELRO range is on a page the dynamic linker made read-only: it is made
// writable for the one store and read-only again (the range as the dynamic linker protects it: whole pages only).
//
// Thread: the callers hold g_gotLock.

#include "engine/agent/got/agent_got.h"

#include "engine/agent/identity/agent_file_name.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

// Addresses from the dynamic linker's tables are integers until they are read or written.
// NOLINTBEGIN(performance-no-int-to-ptr)
namespace emberline::agent {
namespace {

constexpr int kMaxModules = 2048;
constexpr int kMaxEntries = 16384;

struct Module {
    uint64_t base = 0;
    uint64_t dynamic = 0;
    uint64_t begin = 0; // the lowest and past the highest address its segments are loaded at
    uint64_t end = 0;
    uint64_t relroBegin = 0; // the read-only pages after relocation
    uint64_t relroEnd = 0;
    bool live = false; // found by the last pass over the loaded modules
};
struct Entry {
    uint64_t *slot = nullptr;
    uint64_t original = 0;
    uint64_t hook = 0;
    int module = 0;
};

Module g_modules[kMaxModules];
int g_moduleCount = 0;
Entry g_entries[kMaxEntries];
int g_entryCount = 0;

uint64_t pageSize()
{
    return uint64_t(sysconf(_SC_PAGESIZE)); // from the auxiliary vector: no system call
}

// Stores `value` in `slot`; false when its page could not be made writable.
bool writeEntry(uint64_t *slot, uint64_t value, const Module &module)
{
    const uint64_t address = reinterpret_cast<uint64_t>(slot);
    const bool readOnly = address >= module.relroBegin && address < module.relroEnd;
    void *page = reinterpret_cast<void *>(address & ~(pageSize() - 1));
    if (readOnly && mprotect(page, pageSize(), PROT_READ | PROT_WRITE) != 0)
        return false;
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    if (readOnly)
        mprotect(page, pageSize(), PROT_READ);
    return true;
}

bool contains(const dl_phdr_info *info, uint64_t address)
{
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD && address >= info->dlpi_addr + ph.p_vaddr &&
            address < info->dlpi_addr + ph.p_vaddr + ph.p_memsz)
            return true;
    }
    return false;
}

// The module's PT_DYNAMIC (0: none) and its RELRO pages.
uint64_t dynamicOf(const dl_phdr_info *info, uint64_t &relroBegin, uint64_t &relroEnd)
{
    uint64_t dynamic = 0;
    relroBegin = relroEnd = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_DYNAMIC)
            dynamic = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type == PT_GNU_RELRO) {
            relroBegin = (info->dlpi_addr + ph.p_vaddr) & ~(pageSize() - 1);
            relroEnd = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz) & ~(pageSize() - 1);
        }
    }
    return dynamic;
}

// Whether `original`, an entry's value outside its module, is the hook's definition: the definition itself, or the
// program's canonical stub for the function, whose own entry leads to the definition (or, rewritten, to the hook).
bool leadsToDefinition(uint64_t original, const GotHook &hook)
{
    if (original == reinterpret_cast<uint64_t>(hook.definition))
        return true;
    // Its bytes are read only where a module seen in this pass or an earlier one has them mapped (the program, the
    // first one the dynamic linker lists, comes before every library).
    bool mapped = false;
    for (int i = 0; i < g_moduleCount && !mapped; ++i)
        mapped = g_modules[i].live && original >= g_modules[i].begin && original + 16 <= g_modules[i].end;
    if (!mapped)
        return false;
    void *const *entry = pltStubEntry(reinterpret_cast<const void *>(original));
    if (!entry)
        return false;
    const auto through = reinterpret_cast<uint64_t>(__atomic_load_n(entry, __ATOMIC_ACQUIRE));
    return through == reinterpret_cast<uint64_t>(hook.definition) || through == reinterpret_cast<uint64_t>(hook.hook);
}

// The dynamic linker and the vDSO; and another copy of the agent (a build loaded by an earlier attach whose file was
// replaced since, left in the program, inert): its hooks are its own definitions, not an allocator's.
bool leftAlone(const char *name)
{
    if (!name)
        return false;
    const char *slash = strrchr(name, '/');
    const char *file = slash ? slash + 1 : name;
    return strstr(name, "/ld-linux") || strstr(name, "linux-vdso") || strstr(name, "linux-gate") ||
           isAgentFileName(file, strlen(file));
}

int findModule(uint64_t base, uint64_t dynamic)
{
    for (int i = 0; i < g_moduleCount; ++i)
        if (g_modules[i].base == base && g_modules[i].dynamic == dynamic)
            return i;
    return -1;
}

struct Pass {
    const GotHook *hooks = nullptr;
    int hookCount = 0;
    uint64_t self = 0;
    GotCounts *counts = nullptr;
    int notRelocated = 0; // modules left for a later pass
};

struct Tables {
    const ElfW(Sym) *symbols = nullptr;
    const char *strings = nullptr;
    uint64_t stringBytes = 0;
};

// Rewrites the entries of `count` relocations at `relocations` that name a hooked function, but those of the kinds in
// `leftAlone`; with `scan`, only finds the kinds bound elsewhere (escapedKinds) and rewrites nothing.
void rewrite(const ElfW(Rela) * relocations, uint64_t count, const Tables &t, int moduleIndex, const Pass &pass,
             bool scan, uint32_t leftAlone, bool &redirected, uint32_t &escapedKinds)
{
    const Module &module = g_modules[moduleIndex];
    for (uint64_t i = 0; i < count; ++i) {
        const ElfW(Rela) &r = relocations[i];
        const uint64_t type = ELF64_R_TYPE(r.r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        const ElfW(Sym) &sym = t.symbols[ELF64_R_SYM(r.r_info)];
        if (sym.st_name == 0 || sym.st_name >= t.stringBytes)
            continue;
        const char *name = t.strings + sym.st_name;
        for (int h = 0; h < pass.hookCount; ++h) {
            const GotHook &hook = pass.hooks[h];
            if (name[0] != hook.name[0] || strcmp(name, hook.name) != 0)
                continue;
            if ((leftAlone & (1u << hook.kind)) != 0)
                break;
            // No C++ runtime in the program's scope (a C program; one that later opens a C++ library locally, with the
            // runtime as its dependency): the runtime's operators are left to it, and their mallocs are seen.
            if (hook.kind == GotCxx && hook.definition == nullptr)
                break;
            // A module that defines the function itself, where the program's is another (an allocator in a library
            // of its own, as a plugin opened with RTLD_DEEPBIND brings): its entries, bound or lazy, lead to its own
            // definition, and every block its functions were handed is its own.
            if (sym.st_shndx != SHN_UNDEF && sym.st_value != 0 && hook.definition &&
                module.base + sym.st_value != reinterpret_cast<uint64_t>(hook.definition)) {
                escapedKinds |= 1u << hook.kind;
                break;
            }
            auto *slot = reinterpret_cast<uint64_t *>(module.base + r.r_offset);
            const uint64_t target = reinterpret_cast<uint64_t>(hook.hook);
            const uint64_t original = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
            if (original == target)
                break;
            const bool bound = original < module.begin || original >= module.end;
            if (bound && hook.definition && !leadsToDefinition(original, hook)) {
                escapedKinds |= 1u << hook.kind;
                break;
            }
            if (scan)
                break;
            if (g_entryCount == kMaxEntries) {
                ++pass.counts->full;
                break;
            }
            if (!writeEntry(slot, target, module))
                break;
            g_entries[g_entryCount++] = Entry{slot, original, target, moduleIndex};
            ++pass.counts->entries;
            redirected = true;
            break;
        }
    }
}

int hookModule(dl_phdr_info *info, size_t, void *data)
{
    Pass &pass = *static_cast<Pass *>(data);
    uint64_t relroBegin = 0;
    uint64_t relroEnd = 0;
    const uint64_t dynamic = dynamicOf(info, relroBegin, relroEnd);
    if (dynamic == 0 || leftAlone(info->dlpi_name) || contains(info, pass.self))
        return 0;
    const uint64_t base = info->dlpi_addr;
    if (const int known = findModule(base, dynamic); known >= 0) {
        g_modules[known].live = true;
        return 0;
    }
    if (g_moduleCount == kMaxModules)
        return 0;
    uint64_t begin = ~uint64_t(0);
    uint64_t end = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD)
            continue;
        begin = begin < base + ph.p_vaddr ? begin : base + ph.p_vaddr;
        end = end > base + ph.p_vaddr + ph.p_memsz ? end : base + ph.p_vaddr + ph.p_memsz;
    }
    if (begin >= end)
        return 0; // nothing mapped: no table to rewrite
    if (dl_find_object found{}; _dl_find_object(reinterpret_cast<void *>(begin), &found) != 0) {
        ++pass.notRelocated;
        return 0;
    }
    const int index = g_moduleCount++;
    g_modules[index] = Module{base, dynamic, begin, end, relroBegin, relroEnd, true};
    ++pass.counts->modules;
    // A table pointer the dynamic linker did not relocate in place is below the load address.
    auto pointer = [base](uint64_t value) { return value < base ? value + base : value; };
    Tables t;
    uint64_t rela = 0;
    uint64_t relaBytes = 0;
    uint64_t jumps = 0;
    uint64_t jumpBytes = 0;
    uint64_t jumpKind = DT_RELA;
    for (const auto *d = reinterpret_cast<const ElfW(Dyn) *>(dynamic); d->d_tag != DT_NULL; ++d) {
        switch (d->d_tag) {
        case DT_SYMTAB:
            t.symbols = reinterpret_cast<const ElfW(Sym) *>(pointer(d->d_un.d_ptr));
            break;
        case DT_STRTAB:
            t.strings = reinterpret_cast<const char *>(pointer(d->d_un.d_ptr));
            break;
        case DT_STRSZ:
            t.stringBytes = d->d_un.d_val;
            break;
        case DT_RELA:
            rela = pointer(d->d_un.d_ptr);
            break;
        case DT_RELASZ:
            relaBytes = d->d_un.d_val;
            break;
        case DT_JMPREL:
            jumps = pointer(d->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            jumpBytes = d->d_un.d_val;
            break;
        case DT_PLTREL:
            jumpKind = d->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (!t.symbols || !t.strings)
        return 0;
    bool redirected = false;
    uint32_t escapedKinds = 0;
    // Twice: the kinds of allocation function bound elsewhere first, then the rewrite, which leaves every entry of
    // those kinds alone, the lazy ones not bound yet too. A module opened with RTLD_DEEPBIND whose malloc was bound to
    // an allocator of its own and whose realloc was not called yet would otherwise hand its own blocks to the hooks,
    // and so to the program's allocator, at its first realloc after the attach. (A lazy entry has never been called:
    // where all of a module's are, no block went through them before the attach.)
    for (const bool scan : {true, false}) {
        const uint32_t leftAlone = scan ? 0 : escapedKinds & ~(1u << GotOther);
        if (rela)
            rewrite(reinterpret_cast<const ElfW(Rela) *>(rela), relaBytes / sizeof(ElfW(Rela)), t, index, pass, scan,
                    leftAlone, redirected, escapedKinds);
        if (jumps && jumpKind == DT_RELA)
            rewrite(reinterpret_cast<const ElfW(Rela) *>(jumps), jumpBytes / sizeof(ElfW(Rela)), t, index, pass, scan,
                    leftAlone, redirected, escapedKinds);
    }
    pass.counts->redirected += redirected ? 1 : 0;
    escapedKinds &= ~(1u << GotOther); // said only for the allocation functions
    if (escapedKinds != 0) {
        GotCounts &counts = *pass.counts;
        if (counts.escapes < uint32_t(kMaxGotEscapes))
            counts.escaped[counts.escapes] = GotEscape{begin, escapedKinds};
        ++counts.escapes;
    }
    return 0;
}

int markLive(dl_phdr_info *info, size_t, void *)
{
    uint64_t relroBegin = 0;
    uint64_t relroEnd = 0;
    const uint64_t dynamic = dynamicOf(info, relroBegin, relroEnd);
    if (const int known = dynamic ? findModule(info->dlpi_addr, dynamic) : -1; known >= 0)
        g_modules[known].live = true;
    return 0;
}

} // namespace

int gotHook(const GotHook *hooks, int hookCount, const void *self, GotCounts &counts)
{
    Pass pass;
    pass.hooks = hooks;
    pass.hookCount = hookCount;
    pass.self = reinterpret_cast<uint64_t>(self);
    pass.counts = &counts;
    dl_iterate_phdr(hookModule, &pass);
    return pass.notRelocated;
}

void gotRestore()
{
    // A module unloaded since (dlclose) took its table with it: its entries are not written (another module may be
    // mapped there now).
    for (int i = 0; i < g_moduleCount; ++i)
        g_modules[i].live = false;
    dl_iterate_phdr(markLive, nullptr);
    for (int i = 0; i < g_entryCount; ++i) {
        const Entry &e = g_entries[i];
        if (g_modules[e.module].live && __atomic_load_n(e.slot, __ATOMIC_ACQUIRE) == e.hook)
            writeEntry(e.slot, e.original, g_modules[e.module]);
    }
    g_entryCount = 0;
    g_moduleCount = 0;
}

bool gotHooked()
{
    return g_entryCount > 0;
}

void *const *pltStubEntry(const void *code)
{
    const auto *at = static_cast<const uint8_t *>(code);
    if (at[0] == 0xf3 && at[1] == 0x0f && at[2] == 0x1e && at[3] == 0xfa)
        at += at[4] == 0xf2 ? 5 : 4; // endbr64, then a bnd prefix or none
    else if (at[0] == 0xf2)
        at += 1; // bnd
    if (at[0] != 0xff || at[1] != 0x25)
        return nullptr;
    int32_t displacement = 0;
    memcpy(&displacement, at + 2, sizeof displacement);
    return reinterpret_cast<void *const *>(at + 6 + displacement);
}

bool linkerCode(uint64_t address)
{
    dl_find_object found{};
    const unsigned long linker = getauxval(AT_BASE); // where the kernel mapped the dynamic linker
    return linker != 0 && _dl_find_object(reinterpret_cast<void *>(address), &found) == 0 && found.dlfo_link_map &&
           found.dlfo_link_map->l_addr == linker;
}

} // namespace emberline::agent
// NOLINTEND(performance-no-int-to-ptr)
