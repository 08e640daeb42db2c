#pragma once

#include "engine/agent/agent_unwind.h"
#include "engine/common/result.h"
#include "engine/unwind/elf_cache.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace emberline::engine {

// What a module's table holds and what it leaves to the fallback. Bytes are addresses covered (module-relative).
struct UnwindTableStats {
    uint64_t executableBytes = 0; // the module's executable sections (.init, .plt*, .text, .fini, ...)
    uint64_t coveredBytes = 0;    // of those, the bytes under rows the walk follows (CfaRsp, CfaRbp, End)
    uint32_t fdes = 0;            // FDEs read from .eh_frame and .debug_frame
    uint32_t debugFrameFdes = 0;  // of those, .debug_frame's that filled addresses .eh_frame left uncovered
    uint32_t unreadFdes = 0;      // entries libdw refused, or FDEs whose addresses could not be decoded
    uint32_t dwarfRows = 0;       // the rows libdw gave, before equal neighbours were merged
    uint32_t overlaps = 0;        // rows cut short or dropped because an earlier FDE covered their addresses
    uint64_t pltBytes = 0;        // lazy-binding PLT entries tabled from the linker's PLT expression (two rows each)
    std::array<uint32_t, agent::kUnwindKindCount> rows{};  // the table's rows by kind (the closing row not counted)
    std::array<uint64_t, agent::kUnwindKindCount> bytes{}; // the addresses those rows cover, by kind

    double coveredShare() const { return executableBytes ? double(coveredBytes) / double(executableBytes) : 0.0; }
};

// One module's compact unwind table (agent_unwind.h's rows) and how it was made. Immutable once built; shared
// between the session's threads and, as sharedBytes(), with the agent.
struct ModuleUnwindTable {
    std::string path;
    std::string buildId;
    std::vector<agent::UnwindRow> rows; // sorted, non-overlapping, ending with a NoFde row
    UnwindTableStats stats;

    agent::UnwindTable view() const { return {rows.data(), static_cast<uint32_t>(rows.size())}; }
    // The table as the agent reads it: an UnwindTableHeader, then the rows.
    std::vector<uint8_t> sharedBytes() const;
};

// Builds the table of the ELF file at `path` from its .eh_frame (and .debug_frame, where it covers addresses that
// .eh_frame does not) with libdw's CFI API: every FDE's rows, each translated into a compact row or a fallback
// kind. An error when the file cannot be read as ELF or holds no unwind information at all; a corrupt FDE only
// leaves its addresses to the fallback. Slow (tens of milliseconds for a large library): never on the sampling path.
// `buildId` is only recorded in the table.
Result<std::shared_ptr<const ModuleUnwindTable>> buildUnwindTable(const std::string &path, std::string buildId = {});

// The tables of every module the session has met, keyed by build id, so that a module shared by many processes
// (the C library, libpython) is built once; a module without a build id is keyed by its file (device, inode, path).
// Failures are remembered too, so that a module without unwind information is not read again for every process.
//
// Thread: internally locked; get() builds outside the lock, on whichever worker asks (never the sampling path).
class UnwindTableCache {
public:
    explicit UnwindTableCache(ElfCache &elfs) : m_elfs(elfs) {}

    Result<std::shared_ptr<const ModuleUnwindTable>> get(const std::string &path);
    size_t size() const;

private:
    ElfCache &m_elfs;
    mutable std::mutex m_mutex;
    std::map<std::string, Result<std::shared_ptr<const ModuleUnwindTable>>> m_tables;
};

} // namespace emberline::engine
