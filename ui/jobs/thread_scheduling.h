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

} // namespace emberline::ui
