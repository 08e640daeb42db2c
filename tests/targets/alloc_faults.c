// Programs that end or allocate in the ways that strain memory profiling. Usage: alloc_faults MODE [N]
//   threads N  creates and ends N threads one after another, each allocating 3 blocks of 1111 bytes and freeing 2
//              (N leaked blocks of 1111 bytes in all, from the threads' own function)
//   signal     allocates from a SIGALRM handler (500 blocks of 1333 bytes, freed) while main allocates and frees
//              blocks of 1555 bytes in a loop, for about a second
//   _exit      leaks 50 blocks of 2777 bytes, then ends with _exit(0) (no destructors, no atexit)
//   abort      leaks 50 blocks of 2777 bytes, then aborts
//   linger N   leaks 50 blocks of 2777 bytes, then sleeps N seconds (to be stopped mid-run)
//   deepbind   opens libz with RTLD_DEEPBIND (its calls into the C library bind around any preloaded library)
//   spawn PATH runs PATH (with "leak" as its argument) through posix_spawn and waits for it, after leaking 50
//              blocks of 2777 bytes itself
//   zero N     a thread whose first allocation is malloc(0) (kept), then N more malloc(0) on the main thread (freed),
//              all from zeroSized
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;
static volatile sig_atomic_t handled;

static void *threadBody(void *arg)
{
    (void)arg;
    void *a = malloc(1111);
    sink = a;
    void *b = malloc(1111);
    sink = b;
    sink = malloc(1111); // leaked
    free(a);
    free(b);
    return NULL;
}

static void onAlarm(int sig)
{
    (void)sig;
    // malloc is not async-signal-safe; programs call it from handlers anyway, and the hooks must cope.
    if (handled < 500) {
        void *p = malloc(1333);
        sink = p;
        free(p);
        ++handled;
    }
}

__attribute__((noinline)) static void zeroSized(long n)
{
    for (long i = 0; i < n; ++i) {
        void *p = malloc(0);
        sink = p;
        free(p);
    }
}

static void *zeroThread(void *arg)
{
    (void)arg;
    sink = malloc(0); // the thread's first allocation
    return NULL;
}

__attribute__((noinline)) static void leak(void)
{
    for (int i = 0; i < 50; ++i)
        sink = malloc(2777);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const long n = argc > 2 ? atol(argv[2]) : 0;
    if (strcmp(mode, "threads") == 0) {
        for (long i = 0; i < n; ++i) {
            pthread_t t;
            if (pthread_create(&t, NULL, threadBody, NULL) != 0)
                return 2;
            pthread_join(t, NULL);
        }
        return 0;
    }
    if (strcmp(mode, "zero") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, zeroThread, NULL) != 0)
            return 2;
        pthread_join(t, NULL);
        zeroSized(n);
        return 0;
    }
    if (strcmp(mode, "signal") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = onAlarm;
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval every = {{0, 1000}, {0, 1000}};
        setitimer(ITIMER_REAL, &every, NULL);
        while (handled < 500) {
            void *p = malloc(1555);
            sink = p;
            free(p);
        }
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        printf("handled %d\n", (int)handled);
        return 0;
    }
    if (strcmp(mode, "deepbind") == 0) {
        void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_DEEPBIND);
        printf("deepbind %s\n", lib ? "opened" : dlerror());
        return lib ? 0 : 1;
    }
    leak();
    if (strcmp(mode, "spawn") == 0 && argc > 2) {
        // posix_spawn: the C library's vfork-like clone, then exec; the child is a new image with its own agent.
        extern char **environ;
        char *args[] = {argv[2], "linger", "0", NULL};
        pid_t child = 0;
        if (posix_spawn(&child, argv[2], NULL, NULL, args, environ) != 0)
            return 3;
        int status = 0;
        waitpid(child, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
    }
    if (strcmp(mode, "_exit") == 0)
        _exit(0);
    if (strcmp(mode, "abort") == 0)
        abort();
    if (strcmp(mode, "linger") == 0) {
        sleep((unsigned)n);
        return 0;
    }
    return 2;
}
