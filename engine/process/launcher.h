#pragma once

#include "engine/common/result.h"

#include <string>
#include <vector>

namespace emberline::engine {

struct LaunchOptions {
    std::vector<std::string> argv;                                // argv[0] is looked up in PATH
    std::string workingDirectory;                                 // empty: ours
    std::vector<std::pair<std::string, std::string>> environment; // added to ours
    // Start the program in a session of its own (setsid): it leaves our terminal's job control, and where the
    // kernel shares CPU between sessions (autogroup), a target that saturates every core leaves the
    // profiler's own threads their share instead of outnumbering them thread for thread. Such a child is also
    // sent SIGTERM if the thread that launched it dies before ending it (no terminal would hang up on it).
    bool ownSession = false;
};

// A child process created stopped before exec: it waits on a pipe so that sampling can be armed on it
// (perf events with enable_on_exec) before its first instruction. release() lets it exec and reports an
// exec failure as an Error. It inherits stdin, stdout and stderr.
//
// Thread: the thread that created it also waits for it.
class LaunchedProcess {
public:
    static Result<LaunchedProcess> spawn(const LaunchOptions &options);
    LaunchedProcess(LaunchedProcess &&other) noexcept;
    LaunchedProcess &operator=(LaunchedProcess &&) = delete;
    ~LaunchedProcess();

    int pid() const { return m_pid; }
    Status release();
    // Non-blocking; true once the child has exited, with its shell-style status (code, or 128 + signal).
    bool poll(int &exitStatus);
    // The child's exit was collected by someone else (its tracer): don't wait for it again.
    void markReaped(int exitStatus)
    {
        m_reaped = true;
        m_status = exitStatus;
    }
    // Ends the child: SIGTERM, then SIGKILL after `graceMs`; reaps it.
    void terminate(int graceMs, int &exitStatus);

private:
    LaunchedProcess() = default;
    int m_pid = -1;
    int m_goFd = -1;    // writing a byte lets the child exec
    int m_errorFd = -1; // the child's exec errno arrives here; closed on a successful exec
    bool m_reaped = false;
    int m_status = 0;
};

// A waitpid() status as a shell reports it: the exit code, or 128 + the signal.
int shellExitStatus(int waitStatus);

// PATH lookup as execvp does it; empty when not found or not executable.
std::string findExecutable(const std::string &name);

} // namespace emberline::engine
