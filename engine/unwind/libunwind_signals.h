#pragma once

namespace emberline::engine {

// libunwind (Debian's build) blocks every signal around each of its internal locks: its per-address-space cache of
// register rules (taken on every unw_step) and its memory pools (taken when an FDE is parsed). Each lock costs two
// sigprocmask system calls, and they were a third of the profiler's CPU at 999 Hz. They guard against a signal
// handler that unwinds on the thread holding the lock; Emberline never unwinds from a signal handler, so the
// sigprocmask calls that come from libunwind's own code are answered without a system call (this file defines
// sigprocmask for the process; every other caller gets the real one). Without the call below (sanitizer builds,
// where the sanitizer runtime defines sigprocmask itself) libunwind keeps its system calls and works as before.
//
// Finds libunwind's code in the process (once; later calls return at once). Call before unwinding.
// Thread: any.
void skipLibunwindSignalMasks();

// How many of libunwind's sigprocmask calls were answered without a system call (for tests).
unsigned long long libunwindSignalMasksSkipped();
// False in a build where libunwind keeps its system calls (sanitizers).
bool libunwindSignalMasksCanBeSkipped();

} // namespace emberline::engine
