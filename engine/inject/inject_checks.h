#pragma once

#include "engine/common/result.h"
#include "engine/inject/target_modules.h"

#include <cstdint>
#include <string>
#include <vector>

namespace emberline::engine {

// What /proc says of a process, for the checks below.
struct ProcessFacts {
    std::string name;
    char state = '?'; // /proc/PID/stat's letter: R, S, D, T (stopped), t (tracing stop), Z (zombie)...
    int parent = 0;
    int tracer = 0;        // TracerPid
    unsigned uids[4] = {}; // real, effective, saved, filesystem
    unsigned gids[4] = {};
    int seccomp = 0; // 0 none, 1 strict, 2 filter
    bool kernelThread = false;
};
Result<ProcessFacts> readProcessFacts(int pid);

// Why a library cannot be loaded into this process, checked before it is touched: no such process, a zombie, a
// kernel thread, stopped by a signal (left so), traced already (a debugger), setuid or setgid, in strict seccomp
// mode, or sharing its memory with its parent (a vfork child, which may only exec or exit).
Status checkProcess(int pid, const ProcessFacts &facts);

// A program without a dynamic loader (statically linked) cannot dlopen.
Status checkDynamicallyLinked(int pid, const std::vector<TargetModule> &modules);

// The thread to call on: `tid` when given (it must be a live thread of the process), else the thread-group leader,
// else (a leader that ended while its threads run on) the first other live thread.
Result<int> chooseThread(int pid, int tid);

// PTRACE_SEIZE's refusal in words: for EPERM, Yama's ptrace_scope, another user's process, a seccomp filter on us.
std::string explainPtraceRefusal(int pid, const ProcessFacts &facts, int error);

} // namespace emberline::engine
