// The memory agent's micro-benchmark target (run by bench_agent, with and without the agent preloaded):
//   bench_agent_target pairs MILLIONS     malloc(64)+free pairs in batches of 1M; prints the median ns a pair
//   bench_agent_target calls COUNT SIZE   COUNT timed malloc(SIZE) calls (each freed); prints p50, p99, max ns
//   bench_agent_target paced COUNT SIZE GAP_US   the same at a steady pace (GAP_US of work after each call), after
//                                         COUNT / 4 untimed calls (a ring's first lap, whose pages are new): what a
//                                         sampled event costs once the ring is warm and the session keeps up
//   bench_agent_target deep COUNT DEPTH_KIB WORK_KIB   COUNT malloc(4096) calls (each freed) made DEPTH_KIB deep in
//                                         the stack, each followed by a timed walk over a WORK_KIB working set (and
//                                         untimed ones to one call every 200 us); prints the calls' p50 and p99 and
//                                         the timed walks' median ns: what a sampled event's stack copy costs the
//                                         call and, through the caches, the program's own work after it
//   bench_agent_target burst MILLIONS     two threads of malloc+free pairs (sizes 16 B to 64 KiB) at full speed;
//                                         prints the pairs a second
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t nowNs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compareU64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void *volatile g_sink;

// malloc(size) from `kib` KiB further down the stack (one KiB a frame), freed at once; returns the call's ns.
static __attribute__((noinline)) uint64_t deepCall(int kib, size_t size)
{
    volatile char frame[1000];
    frame[0] = (char)kib;
    if (kib > 1) {
        const uint64_t ns = deepCall(kib - 1, size);
        frame[1] = frame[0]; // after the call: no tail call, the frame stays
        return ns;
    }
    const uint64_t start = nowNs();
    void *p = malloc(size);
    const uint64_t took = nowNs() - start;
    g_sink = p;
    free(p);
    return took;
}

static void *burstThread(void *arg)
{
    const long pairs = (long)(intptr_t)arg;
    uint32_t r = 12345u + (uint32_t)(uintptr_t)&arg;
    for (long i = 0; i < pairs; ++i) {
        r = r * 1664525u + 1013904223u;
        const size_t size = 16u << ((r >> 24) % 13); // 16 B .. 64 KiB
        void *p = malloc(size);
        g_sink = p;
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "pairs") == 0) {
        const int batches = atoi(argv[2]);
        uint64_t *ns = calloc((size_t)batches, sizeof *ns);
        for (int b = 0; b < batches; ++b) {
            const uint64_t start = nowNs();
            for (int i = 0; i < 1000000; ++i) {
                void *p = malloc(64);
                g_sink = p;
                free(p);
            }
            ns[b] = nowNs() - start;
        }
        qsort(ns, (size_t)batches, sizeof *ns, compareU64);
        printf("pair_ns %.2f\n", (double)ns[batches / 2] / 1e6);
        return 0;
    }
    const int paced = argc >= 5 && strcmp(argv[1], "paced") == 0;
    if ((argc >= 4 && strcmp(argv[1], "calls") == 0) || paced) {
        const long count = atol(argv[2]);
        const size_t size = (size_t)atol(argv[3]);
        const uint64_t gapNs = paced ? (uint64_t)atol(argv[4]) * 1000u : 0;
        uint64_t *ns = calloc((size_t)count, sizeof *ns);
        for (long i = -(paced ? count / 4 : 0); i < count; ++i) {
            const uint64_t start = nowNs();
            void *p = malloc(size);
            const uint64_t took = nowNs() - start;
            if (i >= 0)
                ns[i] = took;
            g_sink = p;
            free(p);
            while (gapNs && nowNs() - start < gapNs) {}
        }
        qsort(ns, (size_t)count, sizeof *ns, compareU64);
        printf("call_ns p50 %llu p99 %llu max %llu\n", (unsigned long long)ns[count / 2],
               (unsigned long long)ns[count * 99 / 100], (unsigned long long)ns[count - 1]);
        return 0;
    }
    if (argc >= 5 && strcmp(argv[1], "deep") == 0) {
        const long count = atol(argv[2]);
        const int depth = atoi(argv[3]);
        const size_t work = (size_t)atol(argv[4]) * 1024;
        uint64_t *calls = calloc((size_t)count, sizeof *calls);
        uint64_t *walks = calloc((size_t)count, sizeof *walks);
        volatile uint64_t *set = calloc(work / 8, 8);
        uint64_t sum = 0;
        for (long i = -count / 4; i < count; ++i) {
            const uint64_t begin = nowNs();
            const uint64_t took = deepCall(depth, 4096);
            const uint64_t start = nowNs();
            for (size_t w = 0; w < work / 8; w += 8)
                sum += set[w]++;
            if (i >= 0) {
                calls[i] = took;
                walks[i] = nowNs() - start;
            }
            // More walks, untimed, to a steady pace of one call every 200 us (the session keeps up).
            while (nowNs() - begin < 200000)
                for (size_t w = 0; w < work / 8; w += 8)
                    sum += set[w]++;
        }
        qsort(calls, (size_t)count, sizeof *calls, compareU64);
        qsort(walks, (size_t)count, sizeof *walks, compareU64);
        printf("call_ns p50 %llu p99 %llu walk_ns %llu sum %llu\n", (unsigned long long)calls[count / 2],
               (unsigned long long)calls[count * 99 / 100], (unsigned long long)walks[count / 2],
               (unsigned long long)(sum & 1));
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "burst") == 0) {
        const long pairs = (long)(atof(argv[2]) * 1e6);
        pthread_t a, b;
        const uint64_t start = nowNs();
        pthread_create(&a, NULL, burstThread, (void *)(intptr_t)(pairs / 2));
        pthread_create(&b, NULL, burstThread, (void *)(intptr_t)(pairs / 2));
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        printf("burst_pairs_per_second %.0f\n", (double)pairs / ((double)(nowNs() - start) / 1e9));
        return 0;
    }
    fprintf(
        stderr,
        "usage: bench_agent_target pairs BATCHES | calls COUNT SIZE | paced COUNT SIZE GAP_US | deep COUNT DEPTH_KIB "
        "WORK_KIB | burst MILLIONS\n");
    return 2;
}
