#pragma once

namespace emberline::ui {

// Asks the scheduler to run the calling thread promptly when it wakes (a short time slice, Linux 6.12 and
// later; older kernels ignore it): while the profiled program keeps every core busy, the GUI thread's
// timers and input otherwise wait behind the program's threads for up to a slice each (measured: up to 20 ms).
// Takes no more CPU time than before and needs no privilege; the thread's nice value is kept, and threads and
// processes started from it afterwards get the default slice. Returns false (and says why in the log) when the
// kernel refuses.
//
// Thread: the GUI thread, once at start.
bool requestPromptWakeups();

// Raises the calling thread's priority (nice -10, as the session's thread raises itself) where the system allows it
// (root, CAP_SYS_NICE or an RLIMIT_NICE that permits it), so that the GUI thread gets its share of the machine while
// the profiled program keeps every core busy: among the eight busy threads of a live session's target on two cores,
// a thread of ordinary priority gets about a ninth of the machine, and a flush's 25-30 ms of view updates took 60-90
// ms to show. The GUI thread is idle but for those bursts, so the program loses little to it. Threads and processes
// started from it afterwards start at the default priority (the reset-on-fork flag, set here too), not the raised
// one. Returns false (and says why in the log) when the system refuses; nothing changes then.
//
// Thread: the GUI thread, once at start.
bool raiseGuiThread();

} // namespace emberline::ui
