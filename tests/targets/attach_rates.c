// A running program whose allocations keep known rates, for attaching to: three threads allocate in a loop until
// stdin closes (or SECONDS pass). churn_large allocates 1536-byte blocks and churn_small 512-byte ones, as many of
// each, freed at once (their bytes are 3 to 1); keeper allocates 1024-byte blocks and keeps one in four (its blocks
// in use are a quarter of those it allocated), freeing the others. A fourth thread waits in a futex-backed
// condition, a fifth in nanosleep: both must sleep through an attach untouched. It prints "ready" once every thread
// runs, and at its end "kept N" (blocks kept by keeper over its whole run), exiting 0, or 3 when a wait came back
// early (EINTR, a sleep cut short). With LIBRARY, a sixth thread opens it DELAY seconds after the start and calls
// its late_alloc (2048-byte blocks, freed at once) in a loop: a module that comes after an attach (with
// ATTACH_RATES_DEEPBIND=1 it is opened with RTLD_DEEPBIND; with ATTACH_RATES_DEEPBIND=lazy, lazily so, and once
// Emberline's agent has been in the process for 300 ms, its late_grow is called too: a function the library first
// calls after an attach). With ATTACH_RATES_LEVEL=1 in its environment, keeper's heap stays level: it keeps the
// last 4,096 of its kept blocks, freeing the older ones (its "kept N" still counts every block it kept).
// Built as attach_rates_nopie (ATTACH_RATES_THROUGH_LIBC, a program without position independence), churn_large
// calls malloc through a pointer the program took of it (so the program owns malloc's canonical address: a stub in its
// PLT, which the C library's own table holds too), and churn_small's blocks come from the C library's strdup, which
// calls malloc through that library's table.
//   attach_rates [SECONDS [LIBRARY DELAY]]
#include "target_common.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_stop;
static atomic_int g_started;
static atomic_int g_badWait;
static void *volatile g_sink;

#ifdef ATTACH_RATES_THROUGH_LIBC
static void *(*volatile g_allocate)(size_t);
static char g_text[512];
#endif

TARGET_FN static void churn_large(void)
{
#ifdef ATTACH_RATES_THROUGH_LIBC
    void *p = g_allocate(1536);
#else
    void *p = malloc(1536);
#endif
    g_sink = p;
    free(p);
}

TARGET_FN static void churn_small(void)
{
#ifdef ATTACH_RATES_THROUGH_LIBC
    void *p = strdup(g_text); // 511 characters and the terminator
#else
    void *p = malloc(512);
#endif
    g_sink = p;
    free(p);
}

static void *churner(void *arg)
{
    (void)arg;
    atomic_fetch_add(&g_started, 1);
    while (!atomic_load(&g_stop)) {
        churn_large();
        churn_small();
    }
    return NULL;
}

static long g_kept;

TARGET_FN static void *keep_one(long i)
{
    void *p = malloc(1024);
    memset(p, 1, 16);
    if (i % 4 == 0)
        return p;
    free(p);
    return NULL;
}

static void *keeper(void *arg)
{
    (void)arg;
    atomic_fetch_add(&g_started, 1);
    const char *level = getenv("ATTACH_RATES_LEVEL");
    const size_t levelBlocks = level && strcmp(level, "1") == 0 ? 4096 : 0;
    size_t room = 1 << 16;
    void **kept = malloc(room * sizeof *kept);
    for (long i = 0; !atomic_load(&g_stop); ++i) {
        void *p = keep_one(i);
        if (p && levelBlocks) {
            const size_t at = (size_t)g_kept++ % levelBlocks;
            if ((size_t)g_kept > levelBlocks)
                free(kept[at]);
            kept[at] = p;
        } else if (p) {
            if ((size_t)g_kept == room) {
                room *= 2;
                kept = realloc(kept, room * sizeof *kept);
            }
            kept[g_kept++] = p;
        }
        if (i % 64 == 0)
            usleep(50); // a steady pace: the kept blocks grow slowly
    }
    return kept; // never freed: the kept blocks stay in use to the end
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;

static void *condWaiter(void *arg)
{
    (void)arg;
    atomic_fetch_add(&g_started, 1);
    pthread_mutex_lock(&g_lock);
    while (!atomic_load(&g_stop))
        pthread_cond_wait(&g_cond, &g_lock); // a futex wait: a spurious return is allowed, and rechecked
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    atomic_fetch_add(&g_started, 1);
    while (!atomic_load(&g_stop)) {
        struct timespec before;
        struct timespec after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        const struct timespec nap = {0, 200 * 1000 * 1000};
        if (nanosleep(&nap, NULL) != 0) {
            fprintf(stderr, "attach_rates: nanosleep: %s\n", strerror(errno));
            atomic_store(&g_badWait, 1);
        }
        clock_gettime(CLOCK_MONOTONIC, &after);
        const double slept = (double)(after.tv_sec - before.tv_sec) + (after.tv_nsec - before.tv_nsec) * 1e-9;
        if (slept < 0.199) {
            fprintf(stderr, "attach_rates: a 200 ms sleep took %.3f s\n", slept);
            atomic_store(&g_badWait, 1);
        }
    }
    return NULL;
}

static const char *g_library;
static double g_delay;

static void *lateLoader(void *arg)
{
    (void)arg;
    const double start = target_now();
    while (!atomic_load(&g_stop) && target_now() < start + g_delay)
        usleep(10000);
    // ATTACH_RATES_DEEPBIND=1: the library comes with RTLD_DEEPBIND (its dependencies' definitions before the
    // program's).
    const char *deep = getenv("ATTACH_RATES_DEEPBIND");
    const int lazy = deep && strcmp(deep, "lazy") == 0;
    const int flags = lazy ? RTLD_LAZY | RTLD_DEEPBIND : RTLD_NOW | (deep && *deep == '1' ? RTLD_DEEPBIND : 0);
    void *library = dlopen(g_library, flags);
    void (*late)(void) = library ? (void (*)(void))dlsym(library, "late_alloc") : NULL;
    void (*grow)(void) = library && lazy ? (void (*)(void))dlsym(library, "late_grow") : NULL;
    if (!late || (lazy && !grow)) {
        fprintf(stderr, "attach_rates: %s\n", dlerror());
        return NULL;
    }
    double nextLook = 0;
    double growFrom = 0; // once the agent is seen: 300 ms later
    while (!atomic_load(&g_stop)) {
        late();
        const double now = grow ? target_now() : 0;
        if (grow && growFrom == 0 && now >= nextLook) {
            nextLook = now + 0.01;
            if (target_agent_loaded())
                growFrom = now + 0.3;
        } else if (grow && growFrom != 0 && now >= growFrom) {
            grow();
        }
        usleep(20);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 600);
#ifdef ATTACH_RATES_THROUGH_LIBC
    memset(g_text, 'x', sizeof g_text - 1);
    g_allocate = malloc; // taken in code, not in data: the address is the program's own stub, its canonical one
#endif
    pthread_t threads[4];
    pthread_create(&threads[0], NULL, churner, NULL);
    pthread_create(&threads[1], NULL, keeper, NULL);
    pthread_create(&threads[2], NULL, condWaiter, NULL);
    pthread_create(&threads[3], NULL, sleeper, NULL);
    pthread_t loader;
    g_library = argc > 3 ? argv[2] : NULL;
    g_delay = argc > 3 ? atof(argv[3]) : 0;
    if (g_library)
        pthread_create(&loader, NULL, lateLoader, NULL);
    while (atomic_load(&g_started) < 4)
        usleep(1000);
    printf("ready\n");
    fflush(stdout);
    // Until stdin closes or the time is up.
    const double end = target_now() + seconds;
    char c;
    while (target_now() < end) {
        fd_set in;
        FD_ZERO(&in);
        FD_SET(0, &in);
        struct timeval tick = {0, 100 * 1000};
        const int ready = select(1, &in, NULL, NULL, &tick);
        if (ready > 0 && read(0, &c, 1) <= 0)
            break;
    }
    atomic_store(&g_stop, 1);
    pthread_mutex_lock(&g_lock);
    pthread_cond_broadcast(&g_cond);
    pthread_mutex_unlock(&g_lock);
    for (int i = 0; i < 4; ++i)
        pthread_join(threads[i], NULL);
    if (g_library)
        pthread_join(loader, NULL);
    printf("kept %ld\n", g_kept);
    fflush(stdout);
    return atomic_load(&g_badWait) ? 3 : 0;
}
