#include "engine/process/launcher.h"

#include "engine/common/thread_priority.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace emberline::engine {
namespace {

bool isExecutableFile(const std::string &path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

} // namespace

int shellExitStatus(int waitStatus)
{
    if (WIFEXITED(waitStatus))
        return WEXITSTATUS(waitStatus);
    if (WIFSIGNALED(waitStatus))
        return 128 + WTERMSIG(waitStatus);
    return 1;
}

std::string findExecutable(const std::string &name)
{
    if (name.empty())
        return {};
    if (name.find('/') != std::string::npos)
        return isExecutableFile(name) ? name : std::string{};
    const char *path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        const size_t colon = dirs.find(':', start);
        const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        // An empty PATH entry means the current directory.
        std::string candidate = dir.empty() ? std::string(".") : dir;
        candidate.append("/").append(name);
        if (isExecutableFile(candidate))
            return candidate;
        if (colon == std::string::npos)
            break;
        start = colon + 1;
    }
    return {};
}

Result<LaunchedProcess> LaunchedProcess::spawn(const LaunchOptions &options)
{
    if (options.argv.empty() || options.argv[0].empty())
        return makeError(Error::Code::Invalid, "no command to run");
    const std::string program = findExecutable(options.argv[0]);
    if (program.empty()) {
        struct stat st {};
        if (options.argv[0].find('/') != std::string::npos && ::stat(options.argv[0].c_str(), &st) == 0)
            return makeError(Error::Code::Invalid, options.argv[0] + ": not an executable file");
        return makeError(Error::Code::Invalid, options.argv[0] + ": command not found");
    }
    if (!options.workingDirectory.empty() && ::access(options.workingDirectory.c_str(), X_OK) != 0)
        return makeError(Error::Code::Invalid, options.workingDirectory + ": " + std::strerror(errno));

    int go[2], err[2];
    if (::pipe2(go, O_CLOEXEC) != 0)
        return makeError(Error::Code::Io, std::string("pipe: ") + std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(go[0]);
        ::close(go[1]);
        return makeError(Error::Code::Io, std::string("pipe: ") + std::strerror(errno));
    }
    // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
    std::vector<char *> argv;
    for (const std::string &a : options.argv)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> envStrings;
    for (char **e = environ; *e; ++e)
        envStrings.emplace_back(*e);
    for (const auto &[k, v] : options.environment)
        envStrings.push_back(std::string(k).append("=").append(v));
    std::vector<char *> envp;
    envp.reserve(envStrings.size() + 1);
    for (std::string &e : envStrings)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0)
        return makeError(Error::Code::Io, std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::close(go[1]);
        ::close(err[0]);
        char byte;
        if (::read(go[0], &byte, 1) != 1)
            ::_exit(127); // the profiler gave up before releasing us
        if (options.ownSession) {
            ::setsid(); // cannot fail: a freshly forked child is never a process group leader
            // No terminal hangs up on it any more: if the thread that launched it dies with the profiler, end it
            // rather than leave it running unseen. (That thread ends a launched target itself before it returns.)
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (::getppid() != parent)
                ::_exit(127); // the profiler died before the line above
        }
        if (t_niceBeforeRaise) // the session thread raised itself (thread_priority.h): not the program's to keep
            (void)::setpriority(PRIO_PROCESS, 0, *t_niceBeforeRaise);
        if (!options.workingDirectory.empty() && ::chdir(options.workingDirectory.c_str()) != 0) {
            const int e = errno;
            (void)!::write(err[1], &e, sizeof e);
            ::_exit(127);
        }
        ::execve(program.c_str(), argv.data(), envp.data());
        const int e = errno;
        (void)!::write(err[1], &e, sizeof e);
        ::_exit(127);
    }
    ::close(go[0]);
    ::close(err[1]);
    LaunchedProcess p;
    p.m_pid = pid;
    p.m_goFd = go[1];
    p.m_errorFd = err[0];
    return p;
}

LaunchedProcess::LaunchedProcess(LaunchedProcess &&o) noexcept
    : m_pid(o.m_pid), m_goFd(o.m_goFd), m_errorFd(o.m_errorFd), m_reaped(o.m_reaped), m_status(o.m_status)
{
    o.m_pid = -1;
    o.m_goFd = -1;
    o.m_errorFd = -1;
}

LaunchedProcess::~LaunchedProcess()
{
    if (m_goFd >= 0)
        ::close(m_goFd); // an unreleased child reads EOF and exits
    if (m_errorFd >= 0)
        ::close(m_errorFd);
    if (m_pid > 0 && !m_reaped) {
        int status;
        terminate(2000, status);
    }
}

Status LaunchedProcess::release()
{
    const char byte = 1;
    if (::write(m_goFd, &byte, 1) != 1)
        return makeError(Error::Code::Io, std::string("cannot start the command: ") + std::strerror(errno));
    ::close(m_goFd);
    m_goFd = -1;
    int childErrno = 0;
    ssize_t n;
    do {
        n = ::read(m_errorFd, &childErrno, sizeof childErrno);
    } while (n < 0 && errno == EINTR);
    ::close(m_errorFd);
    m_errorFd = -1;
    if (n == sizeof childErrno) {
        int status;
        ::waitpid(m_pid, &status, 0);
        m_reaped = true;
        return makeError(Error::Code::Invalid, std::string("cannot execute the command: ") + std::strerror(childErrno));
    }
    return Ok{};
}

bool LaunchedProcess::poll(int &exitStatus)
{
    if (!m_reaped) {
        int status = 0;
        const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
        if (r == m_pid) {
            m_reaped = true;
            m_status = shellExitStatus(status);
        } else if (r < 0 && errno == ECHILD) {
            m_reaped = true;
            m_status = 1;
        }
    }
    exitStatus = m_status;
    return m_reaped;
}

void LaunchedProcess::terminate(int graceMs, int &exitStatus)
{
    if (poll(exitStatus))
        return;
    ::kill(m_pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(graceMs);
    while (std::chrono::steady_clock::now() < deadline) {
        if (poll(exitStatus))
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(m_pid, SIGKILL);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    m_reaped = true;
    m_status = shellExitStatus(status);
    exitStatus = m_status;
}

} // namespace emberline::engine
