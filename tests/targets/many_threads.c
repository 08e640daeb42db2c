// Starts COUNT threads for SECONDS. Mode "busy": each spins in busy_worker. Mode "churn": each repeatedly
// creates a short-lived thread (churn_child) and joins it, so threads keep appearing and vanishing.
// Usage: many_threads COUNT SECONDS [busy|churn]; prints the busy threads' total chunks per second.
#define _GNU_SOURCE
#include "target_common.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static double g_until;
static int g_churn;

TARGET_FN uint64_t busy_worker(void)
{
    uint64_t chunks = 0;
    while (target_now() < g_until) {
        burn(20000);
        ++chunks;
    }
    KEEP();
    return chunks;
}

static void *churn_child(void *arg)
{
    (void)arg;
    burn(5000);
    return NULL;
}

TARGET_FN uint64_t churn_worker(void)
{
    uint64_t n = 0;
    while (target_now() < g_until) {
        pthread_t t;
        if (pthread_create(&t, NULL, churn_child, NULL) == 0) {
            pthread_join(t, NULL);
            ++n;
        }
    }
    KEEP();
    return n;
}

static void *run(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), g_churn ? "churner" : "busy");
    return (void *)(uintptr_t)(g_churn ? churn_worker() : busy_worker());
}

int main(int argc, char **argv)
{
    const int count = argc > 1 ? atoi(argv[1]) : 8;
    const double seconds = argc > 2 ? atof(argv[2]) : 2.0;
    g_churn = argc > 3 && strcmp(argv[3], "churn") == 0;
    // The main thread works 30 ms alone first: otherwise it only starts and joins the others, and at 999 Hz it may
    // not run long enough for a single sample, while the tests count it among the threads sampled.
    const double mainUntil = target_now() + 0.03;
    while (target_now() < mainUntil)
        burn(20000);
    const double start = target_now();
    g_until = start + seconds;
    pthread_t *threads = calloc((size_t)count, sizeof *threads);
    for (int i = 0; i < count; ++i)
        pthread_create(&threads[i], NULL, run, NULL);
    uint64_t total = 0;
    for (int i = 0; i < count; ++i) {
        void *r;
        pthread_join(threads[i], &r);
        total += (uint64_t)(uintptr_t)r;
    }
    printf("chunks_per_second %.1f\n", (double)total / (target_now() - start));
    free(threads);
    return 0;
}
