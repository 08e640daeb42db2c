#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// The name perf gives the kernel's mapping, which Emberline's kernel frames carry too.
inline constexpr std::string_view kKernelMappingName = "[kernel.kallsyms]";

// The kernel's function symbols from /proc/kallsyms, read once into one sorted array (addresses and offsets
// into one block of names), so that a lookup is a binary search and costs no allocation.
//
// Thread: built on any thread, then read-only (safe to share).
class KernelSymbols {
public:
    struct Found {
        std::string_view name; // empty when the address is below the first symbol
        uint64_t offset = 0;   // from the symbol's start
    };

    // Reads `path` (/proc/kallsyms or a copy of it). An unreadable file, or one that shows every address as 0
    // (kernel.kptr_restrict hides them from this user), is an error that says so.
    static Result<KernelSymbols> load(const std::string &path = "/proc/kallsyms");
    // Why kernel frames cannot be named here, in words for the user; empty when `path` shows addresses. Reads
    // only the beginning of the file.
    static std::string problem(const std::string &path = "/proc/kallsyms");

    // The files that tell the running kernel's symbols and whether a table kept from earlier still applies.
    struct LiveFiles {
        std::string kallsyms = "/proc/kallsyms";
        std::string bootId = "/proc/sys/kernel/random/boot_id";
        std::string modules = "/proc/modules";
        std::string kptrRestrict = "/proc/sys/kernel/kptr_restrict";
    };
    // The running kernel's symbols through a table kept in `directory` per boot (kernel_symbol_store.cpp): the
    // symbols of the kernel's own text (_stext to _etext) in a binary form, read in a millisecond or two where
    // the kernel spends 40 to 60 ms producing /proc/kallsyms' text. The table is kept under the boot id and used
    // only while kptr_restrict and the loaded modules are what they were, and while the live file shows addresses to
    // this user (a read that sees only zeros neither writes nor uses it). Without a usable table: load(kallsyms),
    // kept for the next session when it shows addresses. "" as `directory` keeps none.
    static Result<KernelSymbols> loadLive(const std::string &directory, const LiveFiles &files);
    static Result<KernelSymbols> loadLive(const std::string &directory) { return loadLive(directory, LiveFiles{}); }
    // The folder the tables are kept in; "" when there is none (no $HOME, EMBERLINE_SYMBOL_CACHE=off).
    static std::string storeDirectory();

    Found lookup(uint64_t address) const;
    // Whether lookup(address) answers as the table of the whole file would: always for a table read from the file;
    // for a kept one, only inside the kernel's own text (modules, BPF programs and trampolines come and go; ask
    // load() for those).
    bool answersFully(uint64_t address) const { return !m_coreOnly || (address >= m_coreStart && address < m_coreEnd); }
    bool kept() const { return m_coreOnly; }
    size_t size() const { return m_entries.size(); }

private:
    std::string coreBytes(const std::string &key) const;
    static bool fromCoreBytes(const std::string &bytes, const std::string &key, KernelSymbols &table);

    struct Entry {
        uint64_t address = 0;
        uint32_t nameOffset = 0;
        uint32_t nameLength = 0;
    };
    std::vector<Entry> m_entries; // by address
    std::string m_names;
    bool m_coreOnly = false; // the kernel's own text only, from a kept table
    uint64_t m_coreStart = 0;
    uint64_t m_coreEnd = 0;
};

} // namespace emberline::engine
