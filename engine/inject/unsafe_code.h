#pragma once

#include "engine/inject/target_modules.h"

#include <cstdint>
#include <string>
#include <vector>

namespace emberline::engine {

// The code of a target in which a thread may hold a lock that dlopen takes, so that dlopen called on that thread
// would wait for itself: the allocator (malloc's arenas; the whole of a shared object that brings its own malloc,
// jemalloc's or tcmalloc's, whose internal functions no symbol table names), the dynamic linker (its load lock, the
// whole of ld-linux), libc's dlopen family and dl_iterate_phdr, fork (it holds the allocator's and the loader's locks),
// and thread creation and stack reuse (the stack cache lock, which loading a library with static TLS takes).
//
// libc's ranges come from its symbol table with sizes: .symtab when the file has one, else the one of its debug
// file found by build id (/usr/lib/debug/.build-id/, Debian's libc6-dbg), else .dynsym. With .symtab, libc's
// internal functions count too (_int_malloc, malloc_consolidate, sysmalloc, tcache_init..., every local function of
// malloc.c); with .dynsym alone, only the exported entry points (malloc, free, ...) are known, and a thread inside
// _int_free is recognised by its caller's frame, free, one frame out: the safe point walks the whole stack.
//
// Thread: built before the target is stopped (reading symbol tables is the slow part); read-only afterwards.
class UnsafeCode {
public:
    struct Range {
        uint64_t start = 0;
        uint64_t end = 0;
        std::string name; // "malloc in libc.so.6", "the dynamic linker (ld-linux-x86-64.so.2)"
    };

    static UnsafeCode find(int pid, const std::vector<TargetMapping> &maps, const std::vector<TargetModule> &modules);

    // The range that holds `pc`; null when none does.
    const Range *rangeOf(uint64_t pc) const;
    // Where libc's ranges came from: ".symtab of <debug file>", ".dynsym of <libc>", or "" without libc.
    const std::string &source() const { return m_source; }
    size_t size() const { return m_ranges.size(); }

private:
    void addLibc(int pid, const TargetModule &libc);
    void addLoader(const std::vector<TargetMapping> &maps, const TargetModule &loader);
    // Every executable mapping of `module`, as one unsafe range each.
    void addModule(const std::vector<TargetMapping> &maps, const TargetModule &module, const std::string &name);

    std::vector<Range> m_ranges; // sorted by start; aliases (malloc, __libc_malloc) cover the same code
    std::string m_source;
};

} // namespace emberline::engine
