#pragma once

namespace emberline::ui {

// Lowers the calling worker thread's scheduling priority (nice +5, once per thread), so that when Emberline's
// own threads compete for a core, the GUI thread (and the sampling thread) run first: a refresh computed a few
// milliseconds later is invisible, a GUI thread kept waiting is not. Called at the start of view work on pools.
//
// Thread: any worker thread; never the GUI thread.
void lowerWorkerPriority();

} // namespace emberline::ui
