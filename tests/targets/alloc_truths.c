// Allocations known by construction, for the memory agent's tests: every site uses a size no C library call of
// this program makes, so that a test can pick its allocations out by size. It prints its own truths:
//   truth PID SITE COUNT BYTES LEAKED_COUNT LEAKED_BYTES
// per site and process. Sites: freed (malloc then free), leaked (calloc, never freed), grown (a realloc chain:
// each step a free of the old block and an allocation of the new size), aligned (posix_memalign, freed),
// threaded (malloc/free on a second thread), forked (a child's allocations, half leaked), big (large blocks for
// the sampling tests: BIG_MIB MiB in 64 KiB blocks, freed), exec (with "exec" as argv[1]: the program runs
// itself again through execv with "after-exec", whose own site is "execd"; "big-only" makes the big blocks alone).
//   alloc_truths [exec|after-exec|big-only] [BIG_MIB] [LINGER_MS] [PACE_US]
// LINGER_MS keeps the program alive that long before it ends (or execs), so that its memory map can be read. PACE_US
// spaces the big blocks that far apart (a program allocating at a steady pace rather than in one burst).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void truth(const char *site, long count, long bytes, long leakedCount, long leakedBytes)
{
    printf("truth %d %s %ld %ld %ld %ld\n", (int)getpid(), site, count, bytes, leakedCount, leakedBytes);
    fflush(stdout);
}

static void *volatile sink; // keeps the compiler from dropping allocations

static void *threadWork(void *arg)
{
    (void)arg;
    for (int i = 0; i < 500; ++i) {
        char *p = malloc(4099);
        p[0] = (char)i;
        sink = p;
        free(p);
    }
    return NULL;
}

static void bigBlocks(long mib, long paceUs)
{
    long big = 0;
    for (long i = 0; i < mib * 16; ++i) {
        char *p = malloc(65521);
        p[0] = 1;
        sink = p;
        free(p);
        ++big;
        if (paceUs > 0)
            usleep((useconds_t)paceUs);
    }
    truth("big", big, big * 65521, 0, 0);
}

int main(int argc, char **argv)
{
    const int afterExec = argc > 1 && strcmp(argv[1], "after-exec") == 0;
    if (afterExec) {
        for (int i = 0; i < 40; ++i)
            sink = malloc(6007); // leaked
        truth("execd", 40, 40 * 6007, 40, 40 * 6007);
        return 0;
    }
    const long bigMib = argc > 2 ? atol(argv[2]) : 0;
    const long paceUs = argc > 4 ? atol(argv[4]) : 0;
    if (argc > 1 && strcmp(argv[1], "big-only") == 0) {
        bigBlocks(bigMib, paceUs);
        return 0;
    }

    for (int i = 0; i < 1000; ++i) {
        char *p = malloc(777);
        p[0] = (char)i;
        sink = p;
        free(p);
    }
    truth("freed", 1000, 1000 * 777, 0, 0);

    for (int i = 0; i < 100; ++i)
        sink = calloc(11, 303); // 3333 bytes, leaked
    truth("leaked", 100, 100 * 3333, 100, 100 * 3333);

    // realloc 1001 -> 2002 -> 3003 -> 4004, then freed: four allocations, four frees.
    char *r = malloc(1001);
    r = realloc(r, 2002);
    r = realloc(r, 3003);
    r = realloc(r, 4004);
    sink = r;
    free(r);
    truth("grown", 4, 1001 + 2002 + 3003 + 4004, 0, 0);

    for (int i = 0; i < 10; ++i) {
        void *a = NULL;
        if (posix_memalign(&a, 256, 5005) == 0) {
            sink = a;
            free(a);
        }
    }
    truth("aligned", 10, 10 * 5005, 0, 0);

    pthread_t thread;
    pthread_create(&thread, NULL, threadWork, NULL);
    pthread_join(thread, NULL);
    truth("threaded", 500, 500 * 4099, 0, 0);

    const pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 60; ++i) {
            char *p = malloc(2221);
            sink = p;
            if (i % 2 == 0)
                free(p);
        }
        truth("forked", 60, 60 * 2221, 30, 30 * 2221);
        exit(0);
    }
    waitpid(child, NULL, 0);

    bigBlocks(bigMib, paceUs);

    if (argc > 3)
        usleep((useconds_t)atol(argv[3]) * 1000);
    if (argc > 1 && strcmp(argv[1], "exec") == 0) {
        char *args[] = {argv[0], "after-exec", NULL};
        execv(argv[0], args);
        perror("execv");
        return 1;
    }
    return 0;
}
