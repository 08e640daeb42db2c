#pragma once

#include "engine/model/thread_state.h"

#include <cstdint>
#include <string>

namespace emberline::engine {

// Small readers of /proc, shared by the process list and the ptrace sampler.

// The whole file (NUL bytes included, as in cmdline); empty if it cannot be read.
std::string readProcFile(const std::string &path);

// The state letter of a /proc/PID/task/TID/stat line ("tid (comm) S ..."; comm may hold spaces or ')').
ThreadState threadStateFromStat(const std::string &stat);

// /proc/PID/task/TID/schedstat read from an open descriptor: time on CPU, time waiting to run (ns), times run.
bool readSchedstat(int fd, uint64_t &cpuNs, uint64_t &runDelayNs, uint64_t &runs);

// CPUs the process may run on (its affinity), at least one.
double allowedCpus(int pid);

} // namespace emberline::engine
