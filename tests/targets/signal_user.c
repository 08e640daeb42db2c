// A program that uses real-time signals itself. Mode "later": burns CPU in before_handlers, then installs a handler
// for every real-time signal, sends each to itself once, burns CPU in after_handlers, and checks that each handler
// ran exactly once (a profiler's timer still sending its signal would show as extra deliveries). Mode "first":
// installs the handlers before doing anything else, then burns CPU in after_handlers. Both end with a nap.
// Usage: signal_user [later|first] [SECONDS]; exits 0 when every handler counted exactly one signal, else 2.
#include "target_common.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t g_count[128];

static void on_signal(int signal)
{
    g_count[signal] += 1;
}

static void install(void)
{
    for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_signal;
        sigemptyset(&action.sa_mask);
        if (sigaction(s, &action, NULL) != 0)
            perror("sigaction");
    }
}

TARGET_FN static void before_handlers(double seconds)
{
    const double end = target_now() + seconds;
    while (target_now() < end)
        burn(20000);
}

TARGET_FN static void after_handlers(double seconds)
{
    const double end = target_now() + seconds;
    while (target_now() < end)
        burn(20000);
}

// A wait the wall time sees whether or not CPU time is sampled.
TARGET_FN static void nap(void)
{
    struct timespec ts = {0, 300000000};
    while (nanosleep(&ts, &ts) != 0) {}
}

int main(int argc, char **argv)
{
    const int first = argc > 1 && strcmp(argv[1], "first") == 0;
    const double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    if (first)
        install();
    else
        before_handlers(seconds / 2);
    if (!first)
        install();
    for (int s = SIGRTMIN; s <= SIGRTMAX; ++s)
        raise(s);
    after_handlers(seconds / 2);
    nap();
    int bad = 0;
    for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) {
        if (g_count[s] != 1) {
            fprintf(stderr, "signal_user: signal %d arrived %d times\n", s, (int)g_count[s]);
            bad = 1;
        }
    }
    return bad ? 2 : 0;
}
