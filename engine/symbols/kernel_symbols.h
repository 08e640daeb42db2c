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

    Found lookup(uint64_t address) const;
    size_t size() const { return m_entries.size(); }

private:
    struct Entry {
        uint64_t address = 0;
        uint32_t nameOffset = 0;
        uint32_t nameLength = 0;
    };
    std::vector<Entry> m_entries; // by address
    std::string m_names;
};

} // namespace emberline::engine
