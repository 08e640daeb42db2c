#pragma once

#include "engine/common/result.h"

#include <string>
#include <string_view>

namespace emberline::engine {

struct LibraryInTarget {
    std::string path;    // as the target opens it
    std::string ourPath; // the same file as we reach it (/proc/PID/root/... for a copy)
    bool copied = false;
};

// The path under which the target opens `library`: the library's own (canonical) path when the target sees the very
// same file there (compared by device and inode through /proc/PID/root), else a copy placed in the target's own
// root, in the first of /tmp, /dev/shm, /var/tmp that allows executable mappings:
// <dir>/emberline-inject/<name>-<content hash: 16 hex digits>.so (agent_protocol.h's isAgentFileName knows the agent's
// copies by it), readable by every user. A copy with the same contents is reused,
// never rewritten (the target may have it mapped), so that loading the library again finds it loaded. Without
// `mayCopy`, only a copy already there is named (an error otherwise). With `copyAlways`, the copy is named even where
// the target sees the library's own file (the target holds an older file by that path: dlopen of it would hand that
// one back).
//
// Thread: any.
Result<LibraryInTarget> libraryPathInTarget(int pid, const std::string &library, bool mayCopy = true,
                                            bool copyAlways = false);

} // namespace emberline::engine
