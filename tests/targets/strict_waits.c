// Threads whose blocking calls treat EINTR as an error, as some real programs do (no retry loop): each alternates
// a little CPU work (so that CPU timers tick on it) with a wait in poll, epoll_wait, select, nanosleep or a pipe
// read, or (the sixth thread) in vfork, whose parent waits for the child uninterruptibly: the kernel shows it in
// disk wait (D). A signal that interrupted any of those waits would make the program exit with status 3 and name the
// call. Usage: strict_waits [SECONDS] [WORK]; WORK is the steps of CPU work before each wait (20000 by default, some
// 30 us here). Prints "strict_waits ok N" (the waits completed) and exits 0.
#include "target_common.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static double g_end;
static uint64_t g_work = 20000;
static int g_pipe[2];
static long g_waits[6];

static void fail(const char *call)
{
    fprintf(stderr, "strict_waits: %s failed: %s\n", call, strerror(errno));
    _exit(errno == EINTR ? 3 : 4);
}

TARGET_FN static void wait_poll(void)
{
    struct pollfd none = {-1, 0, 0};
    if (poll(&none, 1, 1) < 0)
        fail("poll");
}

TARGET_FN static void wait_epoll(int ep)
{
    struct epoll_event ev;
    if (epoll_wait(ep, &ev, 1, 1) < 0)
        fail("epoll_wait");
}

TARGET_FN static void wait_select(void)
{
    struct timeval tv = {0, 1000};
    if (select(0, NULL, NULL, NULL, &tv) < 0)
        fail("select");
}

TARGET_FN static void wait_nanosleep(void)
{
    struct timespec ts = {0, 300000};
    if (nanosleep(&ts, NULL) < 0)
        fail("nanosleep");
}

TARGET_FN static void wait_read(void)
{
    char c;
    if (read(g_pipe[0], &c, 1) != 1)
        fail("read");
}

// The parent of a vfork waits, in disk wait, until its child exits: here 2 ms later (the child makes only raw system
// calls, as a vfork child may).
TARGET_FN static void wait_vfork(void)
{
    const pid_t child = vfork();
    if (child == 0) {
        struct timespec ts = {0, 2000000};
        syscall(SYS_nanosleep, &ts, NULL);
        _exit(0);
    }
    if (child < 0)
        fail("vfork");
    int status = 0;
    if (waitpid(child, &status, 0) != child || status != 0)
        fail("waitpid");
}

static void *run(void *arg)
{
    const long kind = (long)arg;
    const int ep = kind == 1 ? epoll_create1(0) : -1;
    while (target_now() < g_end) {
        burn(g_work);
        switch (kind) {
        case 0:
            wait_poll();
            break;
        case 1:
            wait_epoll(ep);
            break;
        case 2:
            wait_select();
            break;
        case 3:
            wait_nanosleep();
            break;
        case 4:
            wait_read();
            break;
        case 5:
            wait_vfork();
            break;
        }
        __atomic_add_fetch(&g_waits[kind], 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    g_end = target_now() + target_seconds(argc, argv, 3);
    if (argc > 2)
        g_work = strtoull(argv[2], NULL, 10);
    if (pipe(g_pipe) != 0)
        return 1;
    pthread_t threads[6];
    for (long i = 0; i < 6; ++i)
        pthread_create(&threads[i], NULL, run, (void *)i);
    // The writer feeds the reading thread a byte every half millisecond, past the end so it never blocks for good.
    while (target_now() < g_end + 0.05) {
        struct timespec ts = {0, 500000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
        if (write(g_pipe[1], "x", 1) != 1)
            return 1;
    }
    for (int i = 0; i < 6; ++i)
        pthread_join(threads[i], NULL);
    long total = 0;
    for (int i = 0; i < 6; ++i)
        total += g_waits[i];
    printf("strict_waits ok %ld\n", total);
    return 0;
}
