// A program whose blocks a plugin opened with RTLD_DEEPBIND measures, grows and frees (tests/targets/
// deep_frees_plugin.c): the plugin's calls bind to the C library around a preloaded library, unless the agent takes
// its tables over.
//   deep_frees LIBRARY  allocates 2,000 blocks of 200 bytes, opens LIBRARY (a path, or a name to search for) with
//                       RTLD_DEEPBIND, allocates and frees 1 MiB more in blocks of 256 bytes, then hands the 2,000
//                       to the plugin, which keeps 1,000 blocks of 4 KiB of its own. Prints "ok 2000" when the plugin
//                       read every block right, "bad N" else.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBlocks = 2000, kSize = 200 };

static void *volatile sink;

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    static void *blocks[kBlocks];
    for (int i = 0; i < kBlocks; ++i) {
        blocks[i] = malloc(kSize);
        if (!blocks[i])
            return 3;
        memset(blocks[i], i & 0xff, kSize);
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 4;
    }
    int (*take)(void **, int, size_t) = (int (*)(void **, int, size_t))dlsym(lib, "deep_take");
    if (!take)
        return 5;
    // The program's own allocations before the plugin's first call (kept from the compiler's sight).
    for (int i = 0; i < 4096; ++i) {
        sink = malloc(256);
        free(sink);
    }
    const int bad = take(blocks, kBlocks, kSize);
    printf(bad == 0 ? "ok %d\n" : "bad %d\n", bad == 0 ? kBlocks : bad);
    return bad == 0 ? 0 : 1;
}
