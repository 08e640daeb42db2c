// The injection tests' target (engine/inject): one program, a mode per test. Each mode prints what the test needs
// (thread ids) on stdout, runs for SECONDS and exits 0 when everything it checks held.
//
//   alloc SECONDS [THREADS]  THREADS threads (default 4) allocate and free without pause; the main thread as well,
//                            between stretches of other work (a third of its time), and with "nonstop" without.
//   waits SECONDS            threads wait in a futex without timeout ("futex TID"), a futex with a 200 ms timeout
//                            ("timed_futex TID") and nanosleep of 300 ms ("nanosleep TID"), each an error on EINTR
//                            (exit 3); a nanosleep that returns early, as measured here, exits 5.
//   registers SECONDS        a thread ("registers TID") holds known values in general, x87, SSE/AVX (and AVX-512)
//                            registers, MXCSR and the x87 control word and checks them in a tight loop; exit 7 if one
//                            changed. It blocks SIGUSR2 and SIGRTMIN+3.
//   signals SECONDS          a 1 ms interval timer's SIGALRM handled (SA_RESTART) by the main thread, which works and
//                            naps, and SIGRTMIN sent to it by another thread every 200 us (real-time signals queue:
//                            each is delivered once); exit 9 if fewer than half the ticks were handled ("ticks N"),
//                            10 if a real-time signal was lost or delivered twice ("queued SENT HANDLED").
//   pause_flag               the main thread waits in pause() until its SIGUSR1 handler sets a flag ("woken").
//   threads SECONDS COUNT    COUNT threads that wake every 10 ms.
//   exit_after MS            the main thread sleeps; another thread ends the program (exit 0) after MS ms.
//   vfork SECONDS            a vfork child ("vfork_child PID") sleeps SECONDS (raw system calls) while its parent
//   waits. idle SECONDS             the main thread sleeps.
#define _GNU_SOURCE
#include "target_common.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

void inject_target_registers(double seconds);

static double g_end;

static void announce(const char *what, long value)
{
    printf("%s %ld\n", what, value);
    fflush(stdout);
}

static void nap(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

// --- alloc ---------------------------------------------------------------------------------------------------
// Allocates and frees until the end; with `otherWork`, burns as much CPU as a round of allocations costs after each.
TARGET_FN static uint64_t churn(unsigned seed, int otherWork)
{
    void *slots[64] = {0};
    uint64_t total = 0;
    while (target_now() < g_end) {
        if (otherWork)
            total += burn(60000) & 1;
        for (int i = 0; i < 1000; ++i) {
            seed = seed * 1103515245u + 12345u;
            const unsigned slot = (seed >> 8) % 64;
            free(slots[slot]);
            slots[slot] = malloc(16 + (seed >> 16) % 4000);
            total += slots[slot] != NULL;
        }
    }
    for (int i = 0; i < 64; ++i)
        free(slots[i]);
    return total;
}

static void *churn_thread(void *arg)
{
    return (void *)(uintptr_t)churn((unsigned)(uintptr_t)arg, 0);
}

static int run_alloc(int threads, int nonstop)
{
    pthread_t t[64];
    threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    for (int i = 0; i < threads; ++i)
        pthread_create(&t[i], NULL, churn_thread, (void *)(uintptr_t)(i + 1));
    churn(99, !nonstop);
    for (int i = 0; i < threads; ++i)
        pthread_join(t[i], NULL);
    return 0;
}

// --- waits ---------------------------------------------------------------------------------------------------
static int g_futex_word;

static long futex(int *word, int op, int value, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, value, timeout, NULL, 0);
}

static void fail(const char *what, int status)
{
    fprintf(stderr, "inject_target: %s: %s\n", what, strerror(errno));
    _exit(status);
}

static void *futex_thread(void *arg)
{
    (void)arg;
    announce("futex", syscall(SYS_gettid));
    // Woken once, by the main thread at the end: a return before that is a wait the injection broke.
    while (__atomic_load_n(&g_futex_word, __ATOMIC_ACQUIRE) == 0) {
        if (futex(&g_futex_word, FUTEX_WAIT_PRIVATE, 0, NULL) != 0 && errno != EAGAIN)
            fail("futex wait", errno == EINTR ? 3 : 4);
    }
    return NULL;
}

static void *timed_futex_thread(void *arg)
{
    (void)arg;
    int word = 0;
    announce("timed_futex", syscall(SYS_gettid));
    while (target_now() < g_end) {
        const struct timespec timeout = {0, 200000000};
        const double start = target_now();
        if (futex(&word, FUTEX_WAIT_PRIVATE, 0, &timeout) == 0 || errno != ETIMEDOUT)
            fail("timed futex wait", errno == EINTR ? 3 : 4);
        if (target_now() - start < 0.199) {
            fprintf(stderr, "inject_target: a 200 ms futex wait lasted %.1f ms\n", (target_now() - start) * 1e3);
            _exit(5);
        }
    }
    return NULL;
}

static void *nanosleep_thread(void *arg)
{
    (void)arg;
    announce("nanosleep", syscall(SYS_gettid));
    while (target_now() < g_end) {
        const struct timespec length = {0, 300000000};
        const double start = target_now();
        if (nanosleep(&length, NULL) != 0)
            fail("nanosleep", errno == EINTR ? 3 : 4);
        const double slept = target_now() - start;
        if (slept < 0.2999) {
            fprintf(stderr, "inject_target: a 300 ms nanosleep lasted %.3f ms\n", slept * 1e3);
            _exit(5);
        }
    }
    return NULL;
}

static int run_waits(void)
{
    pthread_t t[3];
    pthread_create(&t[0], NULL, futex_thread, NULL);
    pthread_create(&t[1], NULL, timed_futex_thread, NULL);
    pthread_create(&t[2], NULL, nanosleep_thread, NULL);
    nap(g_end - target_now());
    __atomic_store_n(&g_futex_word, 1, __ATOMIC_RELEASE);
    futex(&g_futex_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    for (int i = 0; i < 3; ++i)
        pthread_join(t[i], NULL);
    return 0;
}

// --- registers -----------------------------------------------------------------------------------------------
static void *registers_thread(void *arg)
{
    (void)arg;
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR2);
    sigaddset(&blocked, SIGRTMIN + 3);
    pthread_sigmask(SIG_BLOCK, &blocked, NULL);
    announce("registers", syscall(SYS_gettid));
    inject_target_registers(g_end - target_now());
    return NULL;
}

// --- signals -------------------------------------------------------------------------------------------------
static volatile sig_atomic_t g_ticks;
static long g_queued_sent, g_queued_handled;
static pid_t g_main_tid;

static void on_alarm(int sig)
{
    (void)sig;
    g_ticks = g_ticks + 1;
}

static void on_queued(int sig)
{
    (void)sig;
    __atomic_add_fetch(&g_queued_handled, 1, __ATOMIC_RELAXED);
}

static void *queue_sender(void *arg)
{
    (void)arg;
    while (target_now() < g_end) {
        if (syscall(SYS_tgkill, getpid(), g_main_tid, SIGRTMIN) == 0)
            __atomic_add_fetch(&g_queued_sent, 1, __ATOMIC_RELAXED);
        nap(0.0002);
    }
    return NULL;
}

static int run_signals(double seconds)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, NULL);
    action.sa_handler = on_queued;
    sigaction(SIGRTMIN, &action, NULL);
    g_main_tid = (pid_t)syscall(SYS_gettid);
    pthread_t sender;
    pthread_create(&sender, NULL, queue_sender, NULL);
    const struct itimerval every = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &every, NULL);
    while (target_now() < g_end) {
        burn(20000);
        nap(0.001);
    }
    pthread_join(sender, NULL);
    const struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    nap(0.05); // the last signals sent are delivered
    announce("ticks", (long)g_ticks);
    printf("queued %ld %ld\n", g_queued_sent, __atomic_load_n(&g_queued_handled, __ATOMIC_RELAXED));
    if (g_queued_sent != __atomic_load_n(&g_queued_handled, __ATOMIC_RELAXED))
        return 10;
    return g_ticks >= (long)(seconds * 1000 / 2) ? 0 : 9;
}

static volatile sig_atomic_t g_flag;

static void on_usr1(int sig)
{
    (void)sig;
    g_flag = 1;
}

// The classic wait for a handler: pause() returns (EINTR) once a handler has run.
static int run_pause_flag(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_usr1;
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &action, NULL);
    while (!g_flag)
        pause();
    printf("woken\n");
    return 0;
}

// --- threads, exit_after, vfork ------------------------------------------------------------------------------
static void *waking_thread(void *arg)
{
    (void)arg;
    while (target_now() < g_end) {
        nap(0.01);
        burn(100);
    }
    return NULL;
}

static int run_threads(int count)
{
    pthread_t *t = calloc((size_t)count, sizeof *t);
    int started = 0;
    for (; started < count; ++started)
        if (pthread_create(&t[started], NULL, waking_thread, NULL) != 0)
            break;
    announce("threads", started);
    for (int i = 0; i < started; ++i)
        pthread_join(t[i], NULL);
    free(t);
    return started == count ? 0 : 6;
}

static void *ender_thread(void *arg)
{
    nap((double)(uintptr_t)arg / 1000.0);
    exit(0);
}

static int run_vfork(double seconds)
{
    const pid_t child = vfork();
    if (child == 0) {
        // A vfork child may make raw system calls only.
        struct timespec ts = {(time_t)seconds, 0};
        syscall(SYS_nanosleep, &ts, NULL);
        _exit(0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
        return 4;
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "idle";
    const double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    g_end = target_now() + seconds;
    announce("pid", getpid());
    int status = 0;
    if (strcmp(mode, "alloc") == 0) {
        status = run_alloc(argc > 3 ? atoi(argv[3]) : 4, argc > 4 && strcmp(argv[4], "nonstop") == 0);
    } else if (strcmp(mode, "waits") == 0) {
        status = run_waits();
    } else if (strcmp(mode, "registers") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, registers_thread, NULL);
        pthread_join(t, NULL);
    } else if (strcmp(mode, "signals") == 0) {
        status = run_signals(seconds);
    } else if (strcmp(mode, "pause_flag") == 0) {
        status = run_pause_flag();
    } else if (strcmp(mode, "threads") == 0) {
        status = run_threads(argc > 3 ? atoi(argv[3]) : 100);
    } else if (strcmp(mode, "exit_after") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, ender_thread, (void *)(uintptr_t)seconds);
        for (;;)
            pause();
    } else if (strcmp(mode, "seccomp_strict") == 0) {
        // Only read, write, _exit and sigreturn from here on: exit_group (exit()) would kill it.
        fflush(stdout);
        char c;
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
            return 11;
        while (read(STDIN_FILENO, &c, 1) > 0) {}
        syscall(SYS_exit, 0);
    } else if (strcmp(mode, "vfork") == 0) {
        status = run_vfork(seconds);
    } else {
        nap(seconds);
    }
    if (status == 0)
        printf("inject_target ok\n");
    return status;
}
