// A program whose blocks are measured, grown and freed around the global scope, where a preloaded library's
// functions come first:
//   deep_frees LIBRARY  by a plugin opened with RTLD_DEEPBIND (tests/targets/deep_frees_plugin.c, LIBRARY: a path, or
//                       a name to search for), whose calls bind to the C library's;
//   deep_frees --libc   through the C library's own functions, looked up in its handle (dlsym(dlopen("libc.so.6"),
//                       "free"), as Python's ctypes.CDLL("libc.so.6") does).
// First 2,000 blocks of 200 bytes; then the plugin is opened; 1 MiB more allocated and freed in blocks of 256 bytes;
// then the 2,000 are measured, grown (every other one) and freed, and 1,000 blocks of 4 KiB allocated the same way
// and kept. Prints "ok 2000" when every block read right, "bad N" else.
#include "deep_frees_take.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBlocks = 2000, kSize = 200 };

static void *volatile sink;

// One symbol from the C library's handle; a look-up that found it leaves no error behind (none the program asked for,
// from whoever answered it: the first look-up in a handle is where a preloaded dlsym may look up more of its own).
static void *fromLibc(void *libc, const char *name)
{
    dlerror();
    void *found = dlsym(libc, name);
    const char *error = dlerror();
    if (found && error) {
        printf("dlerror after %s was found: %s\n", name, error);
        return NULL;
    }
    return found;
}

// The --libc way: deepTake with the C library's functions from its handle.
static int takeThroughLibc(void **blocks, int count, size_t size)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (!libc)
        return -1;
    const struct DeepCalls calls = {
        (void *(*)(size_t))fromLibc(libc, "malloc"),
        (void (*)(void *))fromLibc(libc, "free"),
        (void *(*)(void *, size_t))fromLibc(libc, "realloc"),
        (size_t(*)(void *))fromLibc(libc, "malloc_usable_size"),
    };
    if (!calls.malloc || !calls.free || !calls.realloc || !calls.usableSize)
        return -1;
    static void *kept[1000];
    return deepTake(&calls, blocks, count, size, kept);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const int viaLibc = strcmp(argv[1], "--libc") == 0;
    static void *blocks[kBlocks];
    for (int i = 0; i < kBlocks; ++i) {
        blocks[i] = malloc(kSize);
        if (!blocks[i])
            return 3;
        memset(blocks[i], i & 0xff, kSize);
    }
    // The program has called no function of the dynamic linker's: whatever a preloaded library looked up as it started
    // leaves no error for it to read.
    const char *error = dlerror();
    if (error) {
        printf("dlerror before any look-up of the program's: %s\n", error);
        return 6;
    }
    int (*take)(void **, int, size_t) = takeThroughLibc;
    if (!viaLibc) {
        void *lib = dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND);
        if (!lib) {
            printf("dlopen: %s\n", dlerror());
            return 4;
        }
        take = (int (*)(void **, int, size_t))dlsym(lib, "deep_take");
        if (!take)
            return 5;
    }
    // The program's own allocations before the plugin's first call (kept from the compiler's sight).
    for (int i = 0; i < 4096; ++i) {
        sink = malloc(256);
        free(sink);
    }
    const int bad = take(blocks, kBlocks, kSize);
    printf(bad == 0 ? "ok %d\n" : "bad %d\n", bad == 0 ? kBlocks : bad);
    return bad == 0 ? 0 : 1;
}
