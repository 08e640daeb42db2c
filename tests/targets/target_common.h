// Helpers shared by the programs that exist only to be profiled. Every function that a test looks for is
// `noipa` (never inlined, cloned or analysed across calls) and does something after each call, so that the
// compiler can neither inline it away nor turn the call into a tail call.
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define TARGET_FN __attribute__((noipa)) __attribute__((used))
#define KEEP() __asm__ volatile("" ::: "memory")

static inline double target_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double target_seconds(int argc, char **argv, double fallback)
{
    return argc > 1 ? atof(argv[1]) : fallback;
}

// A fixed amount of integer work (a linear congruential chain the compiler cannot fold).
TARGET_FN uint64_t burn(uint64_t n);
