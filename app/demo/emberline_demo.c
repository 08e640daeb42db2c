// emberline-demo: a small program that exists to be profiled from Emberline's start page ("Try it on a demo
// program"). Three named worker threads do recognisable, unequal work, so that a new user sees a flame graph
// with a clear shape and a timeline with distinct threads within seconds:
//   decoder    ~ decode_frame → parse_header (10%) and inflate_block (90%)
//   renderer   ~ render_scene → sort_triangles (a recursive quicksort) and shade_pixels; it idles a little
//   compressor ~ compress_chunk → hash_window and emit_literals, in bursts every other second
// Usage: emberline-demo [SECONDS] (default 60); it exits by itself.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORK __attribute__((noinline, noipa))
#define KEEP() __asm__ volatile("" ::: "memory")

static double g_seconds = 60;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// The work itself, written out in each function (a macro, not a function), so that it shows under the function
// that asked for it rather than as one shared leaf.
#define MIX(x, rounds)                                                                                                 \
    do {                                                                                                               \
        for (int i_ = 0; i_ < (rounds); ++i_) {                                                                        \
            (x) = (x)*6364136223846793005ull + 1442695040888963407ull;                                                 \
            KEEP();                                                                                                    \
        }                                                                                                              \
    } while (0)

static WORK uint64_t parse_header(uint64_t seed)
{
    MIX(seed, 2000);
    return seed;
}
static WORK uint64_t inflate_block(uint64_t seed)
{
    MIX(seed, 18000);
    return seed;
}

static WORK uint64_t decode_frame(uint64_t seed)
{
    uint64_t r = parse_header(seed);
    r ^= inflate_block(r);
    KEEP();
    return r;
}

static WORK void sort_triangles(uint32_t *v, int lo, int hi)
{
    while (lo < hi) {
        const uint32_t pivot = v[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                ++i;
            while (v[j] > pivot)
                --j;
            if (i <= j) {
                uint32_t t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        sort_triangles(v, lo, j);
        lo = i;
    }
    KEEP();
}

static WORK uint64_t shade_pixels(uint64_t seed)
{
    MIX(seed, 12000);
    return seed;
}

static WORK uint64_t render_scene(uint32_t *triangles, int count, uint64_t seed)
{
    for (int i = 0; i < count; ++i)
        triangles[i] = (uint32_t)((seed + (uint64_t)i) * 6364136223846793005ull >> 17);
    sort_triangles(triangles, 0, count - 1);
    uint64_t r = shade_pixels(seed ^ triangles[count / 2]);
    KEEP();
    return r;
}

static WORK uint64_t hash_window(uint64_t seed)
{
    MIX(seed, 6000);
    return seed;
}
static WORK uint64_t emit_literals(uint64_t seed)
{
    MIX(seed, 4000);
    return seed;
}
static WORK uint64_t compress_chunk(uint64_t seed)
{
    uint64_t r = hash_window(seed);
    r += emit_literals(r);
    KEEP();
    return r;
}

static void *decoder(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "decoder");
    uint64_t sink = 1;
    const double start = now();
    while (now() - start < g_seconds)
        sink = decode_frame(sink);
    return (void *)(uintptr_t)(sink & 1);
}

static void *renderer(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "renderer");
    uint32_t *triangles = malloc(4096 * sizeof *triangles);
    uint64_t sink = 2;
    const double start = now();
    const struct timespec frame_gap = {0, 2000000}; // waits for "vsync": the thread is not always on CPU
    while (now() - start < g_seconds) {
        sink = render_scene(triangles, 4096, sink);
        nanosleep(&frame_gap, NULL);
    }
    free(triangles);
    return (void *)(uintptr_t)(sink & 1);
}

static void *compressor(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "compressor");
    uint64_t sink = 3;
    const double start = now();
    const struct timespec pause = {0, 50000000};
    while (now() - start < g_seconds) {
        if (((int)(now() - start)) % 2 == 0)
            sink = compress_chunk(sink);
        else
            nanosleep(&pause, NULL); // bursts: busy one second, idle the next
    }
    return (void *)(uintptr_t)(sink & 1);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_seconds = atof(argv[1]);
    printf("emberline-demo: working for %.0f s in threads decoder, renderer and compressor\n", g_seconds);
    fflush(stdout);
    pthread_t threads[3];
    pthread_create(&threads[0], NULL, decoder, NULL);
    pthread_create(&threads[1], NULL, renderer, NULL);
    pthread_create(&threads[2], NULL, compressor, NULL);
    for (int i = 0; i < 3; ++i)
        pthread_join(threads[i], NULL);
    return 0;
}
