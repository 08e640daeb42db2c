#pragma once

#include <cstdint>
#include <string>

#include <libelf.h>

namespace emberline::engine {

// Uncompressed copies of separate debug files whose DWARF sections are compressed (SHF_COMPRESSED, as Debian's
// libc6-dbg ships them): libdw inflates such sections whole at first use, about 80 ms of CPU for libc's in every
// session, while a copy with the sections stored plain is only mapped. One file per build id, named also by the
// original's size and modification time so that a rebuilt or reinstalled debug file is not matched by an old copy,
// under $XDG_CACHE_HOME/emberline/debug-files (or ~/.cache/emberline/debug-files). A copy is written from the
// sections libdw already inflated, after the session used them (off the sampling path), under a temporary name and
// renamed; when the folder holds more than a bound, the copies used least lately are removed. A copy that does not
// check (not ELF, sections past its end, another build id) is removed and written again after the next use. Best
// effort: a read-only or missing cache folder only means the original is read each time.
//
// Thread: any; files are never changed in place (only their modification time, which marks their use).

// The folder the copies are kept in; "" when there is none to use (no $HOME, EMBERLINE_SYMBOL_CACHE=off).
std::string debugFileStoreDirectory();

// The copy's file name for a debug file of `buildId` whose own file is open at `originalFd`; "" when the build id
// is not plain hex or the file cannot be examined.
std::string storedDebugFilePath(const std::string &directory, const std::string &buildId, int originalFd);

// The stored copy at `copyPath` opened read-only, checked whole and against `buildId`; -1 when there is none or it
// does not check (then it is removed).
int openStoredDebugFile(const std::string &copyPath, const std::string &buildId);

// Whether the ELF file open at `fd` has compressed sections (those a copy is worth keeping for).
bool hasCompressedSections(int fd);

// Writes `elf` (a debug file's sections, those libdw used already inflated in memory) to `copyPath`, then keeps
// the folder under `maximumBytes` by removing the copies used least lately. False when it could not be written, or
// when the copy would take more than a quarter of `maximumBytes`.
bool storeDebugFile(const std::string &copyPath, Elf *elf, uint64_t maximumBytes = uint64_t(1) << 30);

} // namespace emberline::engine
