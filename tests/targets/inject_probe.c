// The library the injection tests load into running programs (engine/inject). Its constructor counts its runs; its
// entry point records each call and returns a number derived from its argument, so that a test sees that the
// library was loaded once, that the call happened with the right argument, and that its result came back.
//
//   int inject_probe_entry(const char *arg): arg is "FILE[;sleep=MS][;policy]". Appends "<constructor runs> <arg>\n"
//       to FILE; with sleep, first creates FILE.started and sleeps MS milliseconds (a slow call, for the tests that
//       kill the profiler while it runs); with policy, the line ends " policy=<the calling thread's scheduling policy
//       as the call runs, less SCHED_RESET_ON_FORK>". Returns inject_probe_hash(arg).
//   int inject_probe_constructed(const char *unused): the constructor's runs.
//
// Built with PROBE_NEEDS_GONE, it also needs a library that is nowhere on the search path: its dlopen fails.
// It makes only plain system calls (no stdio, no allocation), as code called in a stopped thread should.
#define _GNU_SOURCE // SCHED_RESET_ON_FORK
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static int g_constructed;

#ifdef PROBE_NEEDS_GONE
extern int emberline_gone_marker(void);
int probe_needs_gone(void) EXPORT;
int probe_needs_gone(void)
{
    return emberline_gone_marker();
}
#endif

__attribute__((constructor)) static void probe_constructor(void)
{
    __atomic_add_fetch(&g_constructed, 1, __ATOMIC_RELAXED);
}

// What the tests compute on their side: a 31-based hash of the bytes, below one million.
EXPORT int inject_probe_hash(const char *arg)
{
    unsigned h = 7;
    for (const char *c = arg; *c; ++c)
        h = h * 31u + (unsigned char)*c;
    return (int)(h % 1000000u);
}

EXPORT int inject_probe_constructed(const char *unused)
{
    (void)unused;
    return __atomic_load_n(&g_constructed, __ATOMIC_RELAXED);
}

static void write_all(int fd, const char *text, size_t size)
{
    while (size > 0) {
        const ssize_t n = write(fd, text, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        text += n;
        size -= (size_t)n;
    }
}

static void sleep_ms(long ms)
{
    struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
}

EXPORT int inject_probe_entry(const char *arg)
{
    char path[512];
    const char *semicolon = strchr(arg, ';');
    const size_t length = semicolon ? (size_t)(semicolon - arg) : strlen(arg);
    if (length == 0 || length >= sizeof path)
        return -1;
    memcpy(path, arg, length);
    path[length] = '\0';
    const char *sleep = semicolon ? strstr(semicolon, "sleep=") : NULL;
    if (sleep) {
        char started[600];
        snprintf(started, sizeof started, "%s.started", path);
        const int fd = open(started, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
        sleep_ms(atol(sleep + 6));
    }
    char line[700];
    const int n = semicolon && strstr(semicolon, "policy")
                      ? snprintf(line, sizeof line, "%d %s policy=%d\n", inject_probe_constructed(NULL), arg,
                                 sched_getscheduler(0) & ~SCHED_RESET_ON_FORK)
                      : snprintf(line, sizeof line, "%d %s\n", inject_probe_constructed(NULL), arg);
    const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -2;
    write_all(fd, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : strlen(line));
    close(fd);
    return inject_probe_hash(arg);
}
