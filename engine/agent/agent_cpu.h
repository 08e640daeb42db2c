#pragma once

// The in-process sampler's half in the agent (agent_cpu.cpp): a CPU timer per thread whose signal handler writes the
// interrupted registers and the top of the stack into the ring.
//
// Thread: every thread of the program; the handler runs on the thread its timer belongs to.

#include <stdint.h>

namespace emberline::agent {

extern uint64_t g_cpuPeriodNs; // the sampler's period (0: off)

// The clock table's mark of a perf event's file descriptor (a timer's id has it clear).
constexpr int kPerfId = 1 << 30;
// The thread's own clock as a perf event (agent_cpu_clock.cpp): a cpu-clock event on thread `tid` whose every overflow
// signals that thread with `signal`; -1 when perf events are refused (errno says why).
int openPerfClock(uint32_t tid, int signal);
// At a sample of the calling thread's perf clock `fd`, in its handler: the thread's CPU time since its previous sample
// (the event's own count); at one sample in eight, the next period drawn at random, from half to one and a half of
// g_cpuPeriodNs. A fixed period keeps its phase through a program's regular rounds: a round of 30 ms sampled every
// 1.001 ms moves by a thirtieth of a millisecond a round, so that its phases are sampled in whole numbers of samples
// a round for seconds, and a function of 3 ms came out at 13 to 21% of the time instead of 10.
uint64_t perfClockSampled(int fd);
// Whether its threads' clocks are perf events where the system allows them (the session's kEnvCpuClock), else POSIX
// CPU timers.
void cpuUsePerfEvents(bool perfEvents);

// Its start in a process image (after the ring is made), its restart in a forked child, and its end (every timer
// deleted).
void cpuStart();
// Loaded into a running program: a timer for every thread it has besides the calling one (which cpuStart serves).
void cpuStartOtherThreads();
void cpuForkChild();
void cpuStop();
// Whether `signal` is the sampler's own, still in use: a program that installs a handler for it takes it over.
bool cpuOwnsSignal(int signal);
// The program takes the sampler's signal: every timer is deleted first and the session told.
void cpuGiveUpSignal();
// A pthread_create'd thread starts its timer before its start routine runs: the arguments of cpuThreadStart for
// `routine` and `arg` (null: start the thread as it is), and given back when the thread could not be made.
void *cpuThreadStartArgs(void *(*routine)(void *), void *arg);
void *cpuThreadStart(void *args);
void cpuDropThreadStartArgs(void *args);
// The calling thread execs the program: its clock ends first, and a tick it sent that is still pending is taken
// here. (A tick pending through the exec is delivered to the new image, whose action for the signal is the default:
// it would end the program. A perf event counting kernel time ticks during the exec itself: an exec that tears down
// a large address space takes longer than a tick.) True when a clock was ended: cpuAfterFailedExec starts it again
// if the exec returns. Nothing is done in a child of vfork, which runs on its parent's memory and has no clock.
bool cpuBeforeExec();
void cpuAfterFailedExec();

} // namespace emberline::agent
