#pragma once

#include "engine/model/thread_state.h"

#include <cstdint>
#include <string>

namespace emberline::engine {

// Small readers of /proc, shared by the process list, the samplers and the sampling pipeline.

// The whole file (NUL bytes included, as in cmdline); empty if it cannot be read.
std::string readProcFile(const std::string &path);

// A thread's name (/proc/PID/task/TID/comm, without its newline); empty if it cannot be read (the thread is gone).
std::string readThreadName(int pid, int tid);

// The state letter of a /proc/PID/task/TID/stat line ("tid (comm) S ..."; comm may hold spaces or ')').
ThreadState threadStateFromStat(const std::string &stat);

// A thread's state from /proc/PID/task/TID/stat, through `statFd` (opened on first use and kept open by the caller,
// who closes it); Unknown when it cannot be read.
ThreadState readThreadState(int &statFd, int pid, int tid);

// The whole of /proc/PID/task/TID/`name` (a file of at most 1 KiB, as stat or syscall), through `fd` (opened on first
// use and kept open by the caller, who closes it: a read at offset 0 makes the kernel write it afresh); empty when it
// cannot be read.
std::string readTaskFile(int &fd, int pid, int tid, const char *name);

// /proc/PID/task/TID/schedstat read from an open descriptor: time on CPU, time waiting to run (ns), times run.
bool readSchedstat(int fd, uint64_t &cpuNs, uint64_t &runDelayNs, uint64_t &runs);

// Whether this process holds `capability` (a CAP_* number) in its effective set, from /proc/self/status's CapEff;
// false when it cannot be read.
bool haveEffectiveCapability(int capability);

// kernel.yama.ptrace_scope (0: any process of the same user may be traced, 1: only descendants, 2: only with
// CAP_SYS_PTRACE, 3: none); 0 where Yama is not built in, as the kernel then applies none of its limits.
int yamaPtraceScope();

// The mapping of /proc/PID/maps that holds `address`, as [start, end), and the file mapped there ("" for anonymous
// memory) when `path` is given; false when none does or the file cannot be read.
bool findMapping(int pid, uint64_t address, uint64_t &start, uint64_t &end, std::string *path = nullptr);

// CPUs the process may run on (its affinity), at least one.
double allowedCpus(int pid);

} // namespace emberline::engine
