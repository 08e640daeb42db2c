// Known C++ allocations, for the memory agent's operator new and delete: every form of new and delete (plain,
// array, nothrow, aligned, sized), in one function, cxx_work, with sizes no other allocation has. Prints its truth
// as alloc_truths does:
//   truth PID cxx COUNT BYTES LEAKED_COUNT LEAKED_BYTES
// Under an allocator that brings its own operators (LD_PRELOAD=libtcmalloc.so.4) they go around malloc.
#include <cstdio>
#include <cstring>
#include <new>
#include <poll.h>
#include <unistd.h>

namespace {

struct Plain {
    char bytes[1111];
};
struct alignas(256) Aligned {
    char bytes[4447];
};

} // namespace

// Named in C, so that its frame reads "cxx_work"; it allocates nothing but what it counts, and keeps the leaked
// blocks in `keep` (room for 20). Its truth, {count, bytes, leaked count, leaked bytes}, goes to `truth`: main prints
// it (printf allocates stdout's buffer).
extern "C" __attribute__((noinline)) void cxx_work(void **keep, long *truth)
{
    long count = 0, bytes = 0, leakedCount = 0, leakedBytes = 0;
    const auto made = [&](long n, long size, bool leaked) {
        count += n;
        bytes += n * size;
        if (leaked) {
            leakedCount += n;
            leakedBytes += n * size;
        }
    };
    for (int i = 0; i < 300; ++i)
        delete new Plain; // _Znwm, then the sized delete
    made(300, sizeof(Plain), false);
    for (int i = 0; i < 200; ++i)
        delete[] new char[2223]; // _Znam, _ZdaPv
    made(200, 2223, false);
    for (int i = 0; i < 50; ++i)
        delete new Aligned; // _ZnwmSt11align_val_t and its delete
    made(50, sizeof(Aligned), false);
    for (int i = 0; i < 20; ++i)
        keep[i] = new (std::nothrow) char[3331]; // never freed
    made(20, 3331, true);
    for (int i = 0; i < 40; ++i) {
        void *p = ::operator new(5557, std::nothrow);
        ::operator delete(p, std::nothrow);
    }
    made(40, 5557, false);
    truth[0] = count;
    truth[1] = bytes;
    truth[2] = leakedCount;
    truth[3] = leakedBytes;
}

// With "repeat": says "ready", then does cxx_work every 5 ms (its kept blocks freed at the next turn, before it)
// until its standard input closes, for a session to attach to.
int main(int argc, char **argv)
{
    static void *keep[20];
    long t[4];
    if (argc > 1 && std::strcmp(argv[1], "repeat") == 0) {
        std::printf("ready\n");
        std::fflush(stdout);
        pollfd in{0, POLLIN, 0};
        while (poll(&in, 1, 5) == 0) {
            cxx_work(keep, t);
            for (void *&block : keep)
                delete[] static_cast<char *>(block);
        }
        return 0;
    }
    cxx_work(keep, t);
    std::printf("truth %d cxx %ld %ld %ld %ld\n", int(getpid()), t[0], t[1], t[2], t[3]);
    return 0;
}
