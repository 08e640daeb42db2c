// Threads that wait in known ways, for wall-time tests. For SECONDS:
//  "sleeper"  only sleeps, in sleep_forever (wall time ~ the whole run, CPU ~ 0);
//  "lock-holder" holds a mutex 40 ms of every 50 ms, in hold_lock;
//  "lock-waiter" takes the mutex in wait_for_lock and releases it at once, every half millisecond: it waits
//             for the lock about 80% of the time (40 of every 50 ms).
#define _GNU_SOURCE
#include "target_common.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static double g_seconds;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
}

TARGET_FN void sleep_forever(double until)
{
    while (target_now() < until)
        usleep(20000);
    KEEP();
}

// Holds the lock during the first 40 ms of every 50 ms slot of the monotonic clock, sleeping meanwhile, so
// the share does not depend on how much CPU the machine has to spare.
TARGET_FN void hold_lock(double until)
{
    const double slot = 0.050;
    const double first = target_now();
    for (long k = 0;; ++k) {
        const double start = first + (double)k * slot;
        if (start >= until)
            break;
        sleep_until(start);
        pthread_mutex_lock(&g_lock);
        sleep_until(start + 0.040);
        pthread_mutex_unlock(&g_lock);
    }
    KEEP();
}

// Takes and releases the lock every half millisecond: it waits in wait_for_lock whenever the holder has it.
TARGET_FN void wait_for_lock(double until)
{
    while (target_now() < until) {
        pthread_mutex_lock(&g_lock);
        pthread_mutex_unlock(&g_lock);
        usleep(500);
    }
    KEEP();
}

static void *run(void *arg)
{
    const int role = (int)(intptr_t)arg;
    static const char *names[] = {"sleeper", "lock-holder", "lock-waiter"};
    pthread_setname_np(pthread_self(), names[role]);
    const double until = target_now() + g_seconds;
    if (role == 0)
        sleep_forever(until);
    else if (role == 1)
        hold_lock(until);
    else
        wait_for_lock(until);
    return NULL;
}

int main(int argc, char **argv)
{
    g_seconds = target_seconds(argc, argv, 3.0);
    pthread_t threads[3];
    for (intptr_t i = 0; i < 3; ++i)
        pthread_create(&threads[i], NULL, run, (void *)i);
    for (int i = 0; i < 3; ++i)
        pthread_join(threads[i], NULL);
    puts("done");
    return 0;
}
