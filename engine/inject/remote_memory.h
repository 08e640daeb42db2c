#pragma once

#include "engine/common/result.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace emberline::engine {

// Reads and writes another process's memory: process_vm_readv/writev, else /proc/PID/mem, else (for a thread we
// trace and hold stopped, `tid`) PTRACE_PEEKDATA/POKEDATA, which also reach pages the others refuse.
//
// Thread: any; the ptrace fallback only on the thread that traces `tid`.
Status readRemote(int pid, int tid, uint64_t address, void *out, size_t size);
Status writeRemote(int pid, int tid, uint64_t address, const void *data, size_t size);

// A NUL-terminated string of at most `maxBytes` bytes (a longer one is cut there).
Result<std::string> readRemoteString(int pid, int tid, uint64_t address, size_t maxBytes);

} // namespace emberline::engine
