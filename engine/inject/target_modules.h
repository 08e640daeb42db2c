#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace emberline::engine {

// One line of /proc/PID/maps.
struct TargetMapping {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t offset = 0;
    uint64_t device = 0; // makedev(major, minor) as the kernel reports it
    uint64_t inode = 0;
    bool executable = false;
    std::string path; // as the target sees it; "" for anonymous memory, "[vdso]" and the like
};

Result<std::vector<TargetMapping>> readTargetMaps(int pid);

// A file the target has mapped: where its mappings lie.
struct TargetModule {
    std::string path;
    uint64_t device = 0;
    uint64_t inode = 0;
    uint64_t start = 0; // its lowest mapping: start, end and file offset
    uint64_t firstEnd = 0;
    uint64_t firstOffset = 0;
    uint64_t end = 0; // end of its highest mapping
};

// The modules of a map: one per mapped file (by device and inode), in address order.
std::vector<TargetModule> targetModules(const std::vector<TargetMapping> &maps);

// The module whose base name is `name` or starts with `name` followed by '.' or '-' ("libc" finds libc.so.6).
const TargetModule *findModuleByName(const std::vector<TargetModule> &modules, const std::string &name);
// The module that is this file: by device and inode, else (overlay filesystems show the underlying file's in the
// map) by the path the target loaded it from. Null when the target has not mapped it.
const TargetModule *findModuleByFile(const std::vector<TargetModule> &modules, uint64_t device, uint64_t inode,
                                     const std::string &pathInTarget = {});

// Opens the file behind a module as the target sees it: through /proc/PID/map_files (the very file mapped, even if
// since deleted), else /proc/PID/root/PATH (the target's mount namespace), else PATH. -1 when none can be opened.
int openTargetFile(int pid, const TargetModule &module);

// A defined symbol of an ELF file's .dynsym (`fd` stays open); nullopt when the file has none by that name.
struct ElfSymbol {
    uint64_t value = 0;
    uint64_t size = 0;
};
std::optional<ElfSymbol> findDynamicSymbol(int fd, const std::string &name);

// What turns the ELF virtual addresses of the file open at `fd` into the module's addresses in the target: the
// lowest mapping's start, less the virtual address its file offset loads at. nullopt when no loadable segment holds
// that offset.
std::optional<int64_t> loadBias(int fd, const TargetModule &module);

// The target address of a symbol exported by a module, or nullopt.
std::optional<uint64_t> targetSymbolAddress(int pid, const TargetModule &module, const std::string &name);

// "libc.so.6" of "/usr/lib/x86_64-linux-gnu/libc.so.6".
std::string fileBaseName(const std::string &path);
// Whether a mapped file is the dynamic loader (ld-linux-x86-64.so.2, ld-musl-x86_64.so.1, ...).
bool isDynamicLoader(const std::string &path);

// Whether an ELF executable asks for a program interpreter (PT_INTERP): a dynamically linked program.
bool hasProgramInterpreter(int fd);

} // namespace emberline::engine
