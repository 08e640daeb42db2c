// The floor under any allocation profiler that interposes the allocator: preloaded into a program, it defines malloc,
// free, calloc and realloc, each of which only calls the C library's (looked up with dlsym(RTLD_NEXT) at load, and
// called through a pointer, as any interposer must). What the program loses then is what the extra calls themselves
// cost it, with nothing of Emberline's hooks in them. bench_memory.sh's `floor` configuration runs it beside the agent
// preloaded with no session (`agent`) and `record --memory`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef void *(*MallocFn)(size_t);
typedef void (*FreeFn)(void *);
typedef void *(*CallocFn)(size_t, size_t);
typedef void *(*ReallocFn)(void *, size_t);

static MallocFn g_malloc;
static FreeFn g_free;
static CallocFn g_calloc;
static ReallocFn g_realloc;
static int g_resolving;
// dlsym's own calloc while the C library's functions are being looked up: static storage, never freed.
static char g_bootstrap[4096] __attribute__((aligned(16)));
static size_t g_bootstrapUsed;

static void resolve(void)
{
    g_resolving = 1;
    g_calloc = (CallocFn)dlsym(RTLD_NEXT, "calloc");
    g_malloc = (MallocFn)dlsym(RTLD_NEXT, "malloc");
    g_free = (FreeFn)dlsym(RTLD_NEXT, "free");
    g_realloc = (ReallocFn)dlsym(RTLD_NEXT, "realloc");
    g_resolving = 0;
}

__attribute__((constructor)) static void start(void)
{
    if (!g_malloc)
        resolve();
}

static int bootstrapBlock(const void *p)
{
    return (const char *)p >= g_bootstrap && (const char *)p < g_bootstrap + sizeof g_bootstrap;
}

void *malloc(size_t size)
{
    if (__builtin_expect(!g_malloc, 0))
        resolve();
    return g_malloc(size);
}

void free(void *p)
{
    if (__builtin_expect(bootstrapBlock(p), 0))
        return;
    g_free(p);
}

void *calloc(size_t count, size_t size)
{
    if (__builtin_expect(!g_calloc, 0)) {
        if (g_resolving) {
            const size_t bytes = (count * size + 15) & ~(size_t)15;
            if (g_bootstrapUsed + bytes > sizeof g_bootstrap)
                return NULL;
            void *p = g_bootstrap + g_bootstrapUsed;
            g_bootstrapUsed += bytes;
            return p;
        }
        resolve();
    }
    return g_calloc(count, size);
}

void *realloc(void *p, size_t size)
{
    if (__builtin_expect(!g_realloc, 0))
        resolve();
    if (__builtin_expect(bootstrapBlock(p), 0)) {
        void *moved = g_malloc(size);
        const size_t left = (size_t)(g_bootstrap + sizeof g_bootstrap - (char *)p);
        if (moved)
            memcpy(moved, p, size < left ? size : left);
        return moved;
    }
    return g_realloc(p, size);
}
