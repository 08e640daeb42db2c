#pragma once

#include "engine/agent/agent_unwind.h"
#include "engine/common/result.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/unwind_rows.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace emberline::engine {

// One module's compact unwind table (agent_unwind.h's rows) and how it was made. Immutable once built; shared
// between the session's threads and, as sharedBytes(), with the agent.
struct ModuleUnwindTable {
    std::string path;
    std::string buildId;
    std::vector<agent::UnwindRow> rows; // sorted, non-overlapping, ending with a NoFde row
    UnwindTableStats stats;
    bool stored = false; // read from the table store (unwind_table_store.h), not built now

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
// With a store directory, a module with a build id is read from the tables kept by earlier sessions before it is built,
// and kept there once built.
//
// Thread: internally locked; get() builds outside the lock, on whichever worker asks (never the sampling path).
class UnwindTableCache {
public:
    // `storeDirectory`: where tables are kept between sessions (unwind_table_store.h); "" keeps none.
    explicit UnwindTableCache(ElfCache &elfs, std::string storeDirectory = {})
        : m_elfs(elfs), m_storeDirectory(std::move(storeDirectory))
    {
    }

    Result<std::shared_ptr<const ModuleUnwindTable>> get(const std::string &path);
    size_t size() const;

private:
    ElfCache &m_elfs;
    std::string m_storeDirectory;
    mutable std::mutex m_mutex;
    std::map<std::string, Result<std::shared_ptr<const ModuleUnwindTable>>> m_tables;
};

} // namespace emberline::engine
