// libemberline_agent.so's exec hooks (the preload front end's, agent_preload.cpp, and the injected one's by their
// hidden names): an exec ends the process image, and the calling thread's CPU clock with it.
//
// Thread: any thread of the program.

#include "engine/agent/agent_core.h"
#include "engine/agent/agent_cpu.h"
#include "engine/agent/got/agent_got.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>

namespace emberline::agent {
namespace {

using ExecveFn = int (*)(const char *, char *const[], char *const[]);
using ExecvFn = int (*)(const char *, char *const[]);
using FexecveFn = int (*)(int, char *const[], char *const[]);

template <typename Fn> Fn nextExecAs(int which)
{
    return reinterpret_cast<Fn>(nextExec(which));
}

} // namespace
} // namespace emberline::agent

using namespace emberline::agent;

// An exec ends the process image: the calling thread's CPU clock ends before it (cpuBeforeExec says why) and starts
// again when the exec failed, errno as the exec left it. The list forms build their argument vector here and call
// the next vector form themselves: the C library's build it and call its internal execve, past every hook.
namespace {

template <typename Next, typename... Args> int aroundExec(Next next, Args... args)
{
    const bool ended = cpuBeforeExec();
    const int rc = next(args...);
    if (ended) {
        const int error = errno;
        cpuAfterFailedExec();
        errno = error;
    }
    return rc;
}

// The list forms' arguments: the bytes of a vector of those from `args` to the null one and two more, and `first` and
// those into `argv`, `args` left after the null, where execle's environment comes.
size_t listBytes(va_list &args)
{
    va_list copy;
    va_copy(copy, args);
    size_t count = 2;
    while (va_arg(copy, const char *) != nullptr)
        ++count;
    va_end(copy);
    return count * sizeof(char *);
}

char *const *listArgv(void *room, const char *first, va_list &args)
{
    auto **argv = static_cast<char **>(room);
    argv[0] = const_cast<char *>(first);
    for (size_t i = 1; (argv[i] = va_arg(args, char *)) != nullptr; ++i) {}
    return argv;
}

} // namespace

EMBERLINE_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return aroundExec(nextExecAs<ExecveFn>(NextExecve), path, argv, envp);
}

EMBERLINE_EXPORT int execv(const char *path, char *const argv[])
{
    return aroundExec(nextExecAs<ExecvFn>(NextExecv), path, argv);
}

EMBERLINE_EXPORT int execvp(const char *file, char *const argv[])
{
    return aroundExec(nextExecAs<ExecvFn>(NextExecvp), file, argv);
}

EMBERLINE_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return aroundExec(nextExecAs<ExecveFn>(NextExecvpe), file, argv, envp);
}

EMBERLINE_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    return aroundExec(nextExecAs<FexecveFn>(NextFexecve), fd, argv, envp);
}

EMBERLINE_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list args;
    va_start(args, arg);
    char *const *argv = listArgv(__builtin_alloca(listBytes(args)), arg, args);
    va_end(args);
    return aroundExec(nextExecAs<ExecvFn>(NextExecv), path, argv);
}

EMBERLINE_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list args;
    va_start(args, arg);
    char *const *argv = listArgv(__builtin_alloca(listBytes(args)), arg, args);
    va_end(args);
    return aroundExec(nextExecAs<ExecvFn>(NextExecvp), file, argv);
}

EMBERLINE_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list args;
    va_start(args, arg);
    char *const *argv = listArgv(__builtin_alloca(listBytes(args)), arg, args);
    char *const *envp = va_arg(args, char *const *);
    va_end(args);
    return aroundExec(nextExecAs<ExecveFn>(NextExecve), path, argv, envp);
}

extern "C" {
int hook_execve(const char *, char *const[], char *const[]) EMBERLINE_HOOK_ALIAS(execve);
int hook_execv(const char *, char *const[]) EMBERLINE_HOOK_ALIAS(execv);
int hook_execvp(const char *, char *const[]) EMBERLINE_HOOK_ALIAS(execvp);
int hook_execvpe(const char *, char *const[], char *const[]) EMBERLINE_HOOK_ALIAS(execvpe);
int hook_fexecve(int, char *const[], char *const[]) EMBERLINE_HOOK_ALIAS(fexecve);
int hook_execl(const char *, const char *, ...) EMBERLINE_HOOK_ALIAS(execl);
int hook_execlp(const char *, const char *, ...) EMBERLINE_HOOK_ALIAS(execlp);
int hook_execle(const char *, const char *, ...) EMBERLINE_HOOK_ALIAS(execle);
}
