// Two named threads, "alpha-worker" and "beta-worker", each spinning in its own function for SECONDS, while
// the main thread waits for them.
#define _GNU_SOURCE
#include "target_common.h"

#include <pthread.h>
#include <stdio.h>

static double g_seconds;

TARGET_FN uint64_t alpha_work(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}

TARGET_FN uint64_t beta_work(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}

static void *run(void *arg)
{
    const int alpha = arg != NULL;
    pthread_setname_np(pthread_self(), alpha ? "alpha-worker" : "beta-worker");
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < g_seconds)
        sink += alpha ? alpha_work() : beta_work();
    return (void *)(uintptr_t)(sink & 1);
}

int main(int argc, char **argv)
{
    g_seconds = target_seconds(argc, argv, 2.0);
    pthread_t a, b;
    pthread_create(&a, NULL, run, (void *)1);
    pthread_create(&b, NULL, run, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    puts("done");
    return 0;
}
