// Threads not made through the pthread_create a preloaded library can wrap. Mode "libc": the program looks
// pthread_create up in libc.so.6 itself (dlopen and dlsym) and runs libc_work on the thread it makes. Mode "timer":
// the C library's own helper for a SIGEV_THREAD timer runs notify_work on a thread it creates internally, with
// every signal blocked. The main thread burns CPU in main_work meanwhile. Each takes about half of the CPU time.
// Usage: hidden_threads libc|timer [SECONDS]
#include "target_common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double g_seconds;
static volatile int g_done;

TARGET_FN static void notify_work(union sigval value)
{
    (void)value;
    const double end = target_now() + g_seconds;
    while (target_now() < end)
        burn(20000);
    g_done = 1;
}

TARGET_FN static void *libc_work(void *arg)
{
    (void)arg;
    const double end = target_now() + g_seconds;
    while (target_now() < end)
        burn(20000);
    g_done = 1;
    return NULL;
}

TARGET_FN static void main_work(double seconds)
{
    const double end = target_now() + seconds;
    while (target_now() < end)
        burn(20000);
}

int main(int argc, char **argv)
{
    const int timer = argc > 1 && strcmp(argv[1], "timer") == 0;
    g_seconds = argc > 2 ? atof(argv[2]) : 2;
    if (timer) {
        struct sigevent event;
        memset(&event, 0, sizeof event);
        event.sigev_notify = SIGEV_THREAD;
        event.sigev_notify_function = notify_work;
        timer_t id;
        if (timer_create(CLOCK_MONOTONIC, &event, &id) != 0) {
            perror("timer_create");
            return 1;
        }
        struct itimerspec once = {{0, 0}, {0, 1000000}};
        timer_settime(id, 0, &once, NULL);
    } else {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
        create_fn create = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
        pthread_t thread;
        if (!create || create(&thread, NULL, libc_work, NULL) != 0) {
            fprintf(stderr, "hidden_threads: no pthread_create in libc.so.6\n");
            return 1;
        }
        pthread_detach(thread);
    }
    main_work(g_seconds);
    while (!g_done)
        main_work(0.01);
    return 0;
}
