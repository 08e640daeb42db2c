// One thread whose CPU time splits 60/30/10 between hot_sixty, warm_thirty and cool_ten by construction:
// every chunk of identical work is given to one of them at random with those probabilities, so the split
// cannot alias with any sampling period. warm_thirty reaches its work through 48 levels of recursion.
// Usage: cpu_split [SECONDS] [thread]; prints the chunks per second it achieved (the benchmark's throughput).
// With `thread` the work runs on a second thread, whose stack is a pthread stack (a mapping much larger than
// the stack in use) instead of the main thread's, as in most servers' worker threads.
#include "target_common.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CHUNK 20000

static uint64_t g_rng = 88172645463325252ull;

static uint64_t next_random(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

TARGET_FN uint64_t hot_sixty(void)
{
    uint64_t r = burn(CHUNK);
    KEEP();
    return r ^ 1;
}

TARGET_FN uint64_t recurse_deep(int depth)
{
    if (depth == 0)
        return burn(CHUNK);
    uint64_t r = recurse_deep(depth - 1);
    KEEP();
    return r + (uint64_t)depth;
}

TARGET_FN uint64_t warm_thirty(void)
{
    uint64_t r = recurse_deep(48);
    KEEP();
    return r ^ 2;
}

TARGET_FN uint64_t cool_ten(void)
{
    uint64_t r = burn(CHUNK);
    KEEP();
    return r ^ 3;
}

struct work {
    double seconds;
    uint64_t chunks;
    uint64_t sink;
    double elapsed;
};

static void *run(void *arg)
{
    struct work *w = arg;
    const double start = target_now();
    double now = start;
    while (now - start < w->seconds) {
        for (int i = 0; i < 64; ++i) {
            const uint64_t r = next_random() % 10;
            if (r < 6)
                w->sink += hot_sixty();
            else if (r < 9)
                w->sink += warm_thirty();
            else
                w->sink += cool_ten();
        }
        w->chunks += 64;
        now = target_now();
    }
    w->elapsed = now - start;
    return NULL;
}

int main(int argc, char **argv)
{
    struct work w = {target_seconds(argc, argv, 3.0), 0, 0, 0};
    if (argc > 2 && strcmp(argv[2], "thread") == 0) {
        pthread_t worker;
        if (pthread_create(&worker, NULL, run, &w) != 0 || pthread_join(worker, NULL) != 0) {
            fprintf(stderr, "cpu_split: cannot run the worker thread\n");
            return 1;
        }
    } else {
        run(&w);
    }
    printf("chunks_per_second %.1f (%llu)\n", (double)w.chunks / w.elapsed, (unsigned long long)(w.sink & 1));
    return 0;
}
