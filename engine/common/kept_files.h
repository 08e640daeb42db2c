#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace emberline::engine {

// What Emberline keeps between sessions (unwind tables, line tables, the kernel's symbols, uncompressed debug files):
// where it lives, and how a kept file is read and written. A kept file is a cache: it is read whole or not at all,
// and written under a temporary name and renamed, never changed in place, so that a session that dies mid-write, or
// two sessions writing at once, leave a whole file or none.
//
// Thread: any.

// $XDG_CACHE_HOME/emberline/<name>, else ~/.cache/emberline/<name>. Empty when there is no absolute home or cache
// folder to use, or when the environment variable `offVariable` says "off".
std::string keptFilesDirectory(const char *name, const char *offVariable);

// The regular file at `path`, whole, when it holds at most `limit` bytes; false otherwise.
bool readKeptFile(const std::string &path, uint64_t limit, std::string &bytes);

// Writes `bytes` to `path` (its folder made if needed) with permissions `mode`, through a temporary file renamed into
// place; false when anything failed (then nothing is left behind).
bool writeKeptFile(const std::string &path, std::string_view bytes, mode_t mode);

} // namespace emberline::engine
