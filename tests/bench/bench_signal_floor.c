// The floor under any sampler that runs code on the sampled thread: preloaded into a program, its constructor opens
// a cpu-clock perf event on the main thread that signals that thread (F_SETSIG, F_SETOWN_EX with its thread id: the
// in-process sampler's clock) at EMBERLINE_SIGNAL_HZ (999 by default), and the handler only counts. What the program
// loses then is what the signals themselves cost it, with nothing of Emberline's handler in it. bench_python.sh runs it
// beside `perf record -e cpu-clock` (the kernel's samples, no signal) and `emberline record`. At exit the count of
// signals handled goes to stderr ("signals N").
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t g_signals;

static void onSignal(int signo, siginfo_t *info, void *context)
{
    (void)signo;
    (void)info;
    (void)context;
    g_signals = g_signals + 1;
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "signals %ld\n", (long)g_signals);
}

__attribute__((constructor)) static void start(void)
{
    const char *hz = getenv("EMBERLINE_SIGNAL_HZ");
    const long rate = hz ? strtol(hz, NULL, 10) : 999;
    if (rate <= 0)
        return;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = onSignal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGPROF, &action, NULL) != 0)
        return;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = (unsigned long long)(1000000000L / rate);
    attr.wakeup_events = 1;
    attr.exclude_hv = 1;
    // Kernel time counts where the system allows it, as the in-process sampler's clock counts it.
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        attr.exclude_kernel = 1;
        fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0) {
        perror("bench_signal_floor: perf_event_open");
        return;
    }
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    if (fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) != 0)
        perror("bench_signal_floor: fcntl");
}
