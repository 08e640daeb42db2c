// Calls every allocation function the agent hooks with errno set to a value of its own, and checks that errno is
// the same after each call that succeeded: glibc's free keeps errno (since 2.33), POSIX.1-2024 requires it, and a
// successful allocation has no reason to change it. Run with the agent preloaded (tst_agent_hooks).
//
//   agent_errno madvise|copy    which system calls fail from the start of main (a seccomp filter, as containers
//                               use): madvise (the ring's and the tracking table's pages), or process_vm_readv,
//                               open/openat, kill and the sleeps (a stack copy off the known stack, the session's
//                               liveness check, exact mode's wait)
//
// Each call runs on the main thread's stack and again on a coroutine's stack in the heap (makecontext), whose copy
// the agent cannot bound. Prints "kept CALLS" when every call kept errno, else one line per call that did not, and
// exits 1.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <new>

namespace {

constexpr int kSentinel = 4242;
int g_calls = 0;
int g_changed = 0;
const char *g_where = "main";

void check(const char *what)
{
    ++g_calls;
    if (errno != kSentinel) {
        if (g_changed < 20)
            printf("changed %s on %s: errno %d (%s)\n", what, g_where, errno, strerror(errno));
        ++g_changed;
    }
    errno = kSentinel;
}

struct Block {
    char bytes[6000];
};

// Keeps the compiler from pairing a new with its delete away.
void *volatile g_sink;

void everyHook()
{
    for (int i = 0; i < 64; ++i) {
        errno = kSentinel;
        void *p = malloc(4096 + i);
        g_sink = p;
        check("malloc");
        free(p);
        check("free");
        free(nullptr);
        check("free(NULL)");
        p = calloc(64, 64);
        check("calloc");
        p = realloc(p, 9000);
        check("realloc (grow)");
        p = realloc(p, 100);
        check("realloc (shrink)");
        free(p);
        check("free");
        p = realloc(nullptr, 5000);
        check("realloc (NULL)");
        free(p);
        check("free");
        if (posix_memalign(&p, 64, 4096) == 0) {
            check("posix_memalign");
            free(p);
            check("free");
        }
        p = aligned_alloc(64, 4096);
        check("aligned_alloc");
        free(p);
        check("free");
        p = memalign(128, 4096);
        check("memalign");
        free(p);
        check("free");
        p = valloc(4096);
        check("valloc");
        free(p);
        check("free");
        p = pvalloc(4096);
        check("pvalloc");
        free(p);
        check("free");
        char *c = new char[4096];
        g_sink = c;
        check("operator new[]");
        delete[] c;
        check("operator delete[]");
        auto *big = new (std::align_val_t(64)) char[5000];
        g_sink = big;
        check("aligned operator new[]");
        operator delete[](big, std::align_val_t(64));
        check("aligned operator delete[]");
        void *n = operator new(6000, std::nothrow);
        g_sink = n;
        check("operator new (nothrow)");
        operator delete(n, std::nothrow);
        check("operator delete (nothrow)");
        auto *object = new Block;
        g_sink = object;
        check("operator new");
        delete object; // the sized operator delete
        check("sized operator delete");
    }
}

// A seccomp filter that makes the given system calls fail with EPERM (the program's own calls after it do not
// need them).
bool failSystemCalls(const int *calls, int n)
{
    struct sock_filter filter[32];
    int k = 0;
    filter[k++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    filter[k++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    filter[k++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    filter[k++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int i = 0; i < n; ++i) {
        filter[k++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, unsigned(calls[i]), 0, 1);
        filter[k++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    }
    filter[k++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog program = {static_cast<unsigned short>(k), filter};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

ucontext_t g_mainContext;
ucontext_t g_coroutine;

void onCoroutine()
{
    g_where = "a coroutine's heap stack";
    everyHook();
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "madvise") != 0 && strcmp(argv[1], "copy") != 0)) {
        fprintf(stderr, "usage: agent_errno madvise|copy\n");
        return 2;
    }
    // The coroutine's stack is made before the filter (its allocation is the program's, not under test).
    const size_t stackBytes = size_t(256) * 1024;
    void *stack = malloc(stackBytes);
    if (strcmp(argv[1], "madvise") == 0) {
        const int calls[] = {SYS_madvise};
        if (!failSystemCalls(calls, 1))
            return perror("seccomp"), 2;
    } else {
        const int calls[] = {SYS_process_vm_readv, SYS_open, SYS_openat, SYS_kill, SYS_nanosleep, SYS_clock_nanosleep};
        if (!failSystemCalls(calls, int(sizeof calls / sizeof calls[0])))
            return perror("seccomp"), 2;
    }
    everyHook();
    getcontext(&g_coroutine);
    g_coroutine.uc_stack.ss_sp = stack;
    g_coroutine.uc_stack.ss_size = stackBytes;
    g_coroutine.uc_link = &g_mainContext;
    makecontext(&g_coroutine, onCoroutine, 0);
    swapcontext(&g_mainContext, &g_coroutine);
    printf(g_changed == 0 ? "kept %d\n" : "changed in %d calls\n", g_changed == 0 ? g_calls : g_changed);
    return g_changed == 0 ? 0 : 1;
}
