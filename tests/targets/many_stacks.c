// Eight busy threads that reach their work through 100,000 distinct call paths: five levels, each a call to one
// of ten functions (step0 … step9) picked by the next decimal digit of a random number, then burn(). It stresses
// the live views: many distinct stacks (times eight threads), steady sampling on every thread.
// Usage: many_stacks [SECONDS] (default 30)
#define _GNU_SOURCE
#include "target_common.h"

#include <pthread.h>
#include <stdio.h>

typedef uint64_t (*step_fn)(uint32_t code, int level);
static step_fn g_steps[10];
static double g_seconds;

static uint64_t dispatch(uint32_t code, int level)
{
    if (level == 0)
        return burn(400);
    return g_steps[code % 10](code / 10, level - 1);
}

#define STEP(n)                                                                                                        \
    TARGET_FN uint64_t step##n(uint32_t code, int level)                                                               \
    {                                                                                                                  \
        uint64_t r = dispatch(code, level);                                                                            \
        KEEP();                                                                                                        \
        return r + n;                                                                                                  \
    }                                                                                                                  \
    extern int step_defined_##n /* a declaration, so that each use ends with a semicolon as code does */
STEP(0);
STEP(1);
STEP(2);
STEP(3);
STEP(4);
STEP(5);
STEP(6);
STEP(7);
STEP(8);
STEP(9);

static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "stacks-%d", (int)(uintptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    uint64_t rng = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1), sink = 0;
    const double start = target_now();
    while (target_now() - start < g_seconds) {
        for (int i = 0; i < 256; ++i) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            sink += dispatch((uint32_t)(rng % 100000), 5);
        }
    }
    return (void *)(uintptr_t)(sink & 1);
}

int main(int argc, char **argv)
{
    g_seconds = target_seconds(argc, argv, 30.0);
    step_fn steps[10] = {step0, step1, step2, step3, step4, step5, step6, step7, step8, step9};
    for (int i = 0; i < 10; ++i)
        g_steps[i] = steps[i];
    pthread_t threads[8];
    for (int i = 0; i < 8; ++i)
        pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)i);
    for (int i = 0; i < 8; ++i)
        pthread_join(threads[i], NULL);
    puts("many_stacks done");
    return 0;
}
