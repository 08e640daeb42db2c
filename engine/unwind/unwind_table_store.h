#pragma once

#include "engine/unwind/unwind_table_builder.h"

#include <memory>
#include <string>

namespace emberline::engine {

// Built unwind tables kept on disk between sessions, by build id: a session that meets libc, libpython or cc1plus
// again reads its table (a few hundred KiB) instead of building it from the module's CFI again (10 to 300 ms of the
// session's CPU each time). One file per build id and table version, under $XDG_CACHE_HOME/emberline (or
// ~/.cache/emberline); written under a temporary name and renamed, so that a reader never sees half a file. A file
// that does not read back whole and well formed is ignored (and replaced at the next build). Best effort: a
// read-only home or a full disk only means the table is built each time.
//
// Thread: any; files are never changed in place.

// The folder the tables are kept in; "" when there is none to use (no $HOME, EMBERLINE_UNWIND_CACHE=off).
std::string unwindTableStoreDirectory();

// The table kept for `buildId` in `directory`, checked (magic, version, sizes, rows sorted and closed); null when none
// is kept or it does not check.
std::shared_ptr<const ModuleUnwindTable> loadStoredUnwindTable(const std::string &directory, const std::string &buildId,
                                                               const std::string &path);

// Keeps `table` (which has a build id) in `directory`; false when it could not be written.
bool storeUnwindTable(const std::string &directory, const ModuleUnwindTable &table);

} // namespace emberline::engine
