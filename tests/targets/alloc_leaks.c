// Seeded leaks, for the memory tests against valgrind's memcheck: three sites leak at least 5 MiB each (their
// blocks become unreachable: "definitely lost"), one leaks a little, and two churn through far more memory that
// they free. Every site is a function of its own. Usage: alloc_leaks [SCALE] (SCALE multiplies every volume; 1
// by default).
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

__attribute__((noinline)) static void leak_pages(long scale) // 6 MiB in 4 KiB blocks
{
    for (long i = 0; i < 1536 * scale; ++i) {
        char *p = malloc(4096);
        p[0] = 1;
        sink = p;
    }
}

__attribute__((noinline)) static void leak_chunks(long scale) // 12 MiB in 64 KiB blocks
{
    for (long i = 0; i < 192 * scale; ++i) {
        char *p = malloc(65536);
        p[0] = 1;
        sink = p;
    }
}

__attribute__((noinline)) static void leak_records(long scale) // 5 MiB (and a little more) in 1000-byte blocks
{
    for (long i = 0; i < 5300 * scale; ++i) {
        char *p = calloc(1, 1000);
        sink = p;
    }
}

__attribute__((noinline)) static void leak_little(long scale) // 64 KiB in 64-byte blocks
{
    for (long i = 0; i < 1024 * scale; ++i) {
        char *p = malloc(64);
        p[0] = 1;
        sink = p;
    }
}

__attribute__((noinline)) static void churn_small(long scale) // 40 MiB in 200-byte blocks, all freed
{
    for (long i = 0; i < 200000 * scale; ++i) {
        char *p = malloc(200);
        p[0] = 1;
        sink = p;
        free(p);
    }
}

__attribute__((noinline)) static void churn_large(long scale) // 64 MiB in 256 KiB blocks, all freed
{
    for (long i = 0; i < 256 * scale; ++i) {
        char *p = malloc(262144);
        memset(p, 1, 4096);
        sink = p;
        free(p);
    }
}

int main(int argc, char **argv)
{
    const long scale = argc > 1 ? atol(argv[1]) : 1;
    churn_small(scale);
    leak_pages(scale);
    churn_large(scale);
    leak_chunks(scale);
    leak_records(scale);
    leak_little(scale);
    churn_small(scale);
    sink = NULL; // no pointer to a leaked block is left anywhere
    return 0;
}
