// libemberline_agent.so: the in-process part of Emberline's memory profiling, preloaded into a launched program
// (LD_PRELOAD, inherited across fork and exec). It collects and never analyses: a sampled allocation copies the
// registers and the live part of the stack into the process's ring (agent_protocol.h), a free of a sampled
// address writes a small record, and the session unwinds, symbolizes and aggregates on its own threads.
//
// Sampling by bytes: each thread draws exponential intervals with the ring's mean (EMBERLINE_ALLOC_INTERVAL,
// default 512 KiB) and samples the allocation that crosses the next point, so an allocation of `size` bytes is
// sampled with probability 1 - exp(-size / mean). The agent only reports the size; the session applies the one
// weighting (engine/memory/allocation_weight.h).
//
// Safe anywhere: the hooks' fast path takes no lock and allocates nothing; per-thread state is static TLS;
// reentry (our own calls, a signal handler allocating inside the hooks) passes through; the calloc that dlsym
// makes while the hooks are being resolved is served from a static buffer; a forked child gets its own ring;
// a full ring never blocks (but in exact mode, where nothing may be lost, while the session is alive); if the
// session stops visiting for 100 ms, nothing new is sampled until it comes back; once it detaches, everything
// passes through.
//
// Thread: every thread of the program, concurrently.

#include "engine/agent/agent_protocol.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#define EMBERLINE_EXPORT extern "C" __attribute__((visibility("default")))

namespace emberline::agent {
namespace {

using MallocFn = void *(*)(size_t);
using FreeFn = void (*)(void *);
using CallocFn = void *(*)(size_t, size_t);
using ReallocFn = void *(*)(void *, size_t);
using MemalignFn = void *(*)(size_t, size_t);
using PosixMemalignFn = int (*)(void **, size_t, size_t);
using DlopenFn = void *(*)(const char *, int);

struct RealFunctions {
    MallocFn malloc = nullptr;
    FreeFn free = nullptr;
    CallocFn calloc = nullptr;
    ReallocFn realloc = nullptr;
    MemalignFn memalign = nullptr;
    MemalignFn alignedAlloc = nullptr;
    PosixMemalignFn posixMemalign = nullptr;
    MallocFn valloc = nullptr;
    MallocFn pvalloc = nullptr;
    DlopenFn dlopen = nullptr;
};
RealFunctions g_real;
std::atomic<int> g_resolved{0}; // 0: not yet, 1: resolving, 2: done

// dlsym may call calloc (for its error state) before the real one is known: served from here, never freed.
alignas(64) char g_bootstrap[64 * 1024];
std::atomic<size_t> g_bootstrapUsed{0};

bool isBootstrap(const void *p)
{
    return p >= static_cast<const void *>(g_bootstrap) &&
           p < static_cast<const void *>(g_bootstrap + sizeof g_bootstrap);
}

void *bootstrapAlloc(size_t size, size_t alignment = 16)
{
    size_t used = g_bootstrapUsed.load(std::memory_order_relaxed);
    for (;;) {
        const size_t start = (used + alignment - 1) & ~(alignment - 1);
        if (start + size > sizeof g_bootstrap)
            return nullptr;
        if (g_bootstrapUsed.compare_exchange_weak(used, start + size, std::memory_order_relaxed))
            return g_bootstrap + start;
    }
}

// Per-thread state, in static TLS (no allocation, usable from the first malloc of a thread however it was made).
struct ThreadState {
    int64_t bytesUntilSample; // <= 0: the next allocation takes the slow path
    uint64_t rng;             // xorshift state (0: not seeded)
    uint32_t tid;             // 0: not known yet (also after fork)
    uint32_t depth;           // > 0 while inside the agent: nested calls pass through
};
__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// Tracked (sampled and still live) allocations: buckets of eight slots, one cache line each, and beside them a
// count per bucket that is raised before a slot is taken and lowered after it is cleared, so that it is never
// below the bucket's occupants: a free reads one 16-bit count (a table that fits in the cache) and looks into
// the bucket only when it is not zero.
constexpr unsigned kBucketBits = 15;
constexpr size_t kBuckets = size_t(1) << kBucketBits;
constexpr int kSlotsPerBucket = 8;
struct alignas(64) Bucket {
    std::atomic<uint64_t> slots[kSlotsPerBucket];
};
Bucket *g_buckets = nullptr;                  // kBuckets, anonymous memory
std::atomic<uint16_t> *g_bucketUse = nullptr; // kBuckets

enum class Mode : int { Off = 0, Sampling = 1, Exact = 2 };
std::atomic<int> g_mode{int(Mode::Off)};
std::atomic<bool> g_initializing{false};
RingHeader *g_ring = nullptr;
uint8_t *g_data = nullptr;
uint64_t g_dataMask = 0;
uint64_t g_interval = 512 * 1024;
uint64_t g_ringBytes = kDefaultRingDataBytes;
char g_directory[512];

constexpr uint64_t kStaleNs = 100'000'000;    // the session is gone when it has not visited for this long
constexpr uint64_t kAttachNs = 5'000'000'000; // how long a new ring waits for the session's first visit

uint64_t nowNs()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

uint32_t currentTid()
{
    ThreadState &t = t_state;
    if (t.tid == 0)
        t.tid = uint32_t(syscall(SYS_gettid));
    return t.tid;
}

size_t bucketOf(uint64_t address)
{
    return size_t(((address >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - kBucketBits));
}

void resolveReal()
{
    int expected = 0;
    if (!g_resolved.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        while (g_resolved.load(std::memory_order_acquire) != 2)
            sched_yield();
        return;
    }
    g_real.malloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "malloc"));
    g_real.free = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free"));
    g_real.calloc = reinterpret_cast<CallocFn>(dlsym(RTLD_NEXT, "calloc"));
    g_real.realloc = reinterpret_cast<ReallocFn>(dlsym(RTLD_NEXT, "realloc"));
    g_real.memalign = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "memalign"));
    g_real.alignedAlloc = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "aligned_alloc"));
    g_real.posixMemalign = reinterpret_cast<PosixMemalignFn>(dlsym(RTLD_NEXT, "posix_memalign"));
    g_real.valloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "valloc"));
    g_real.pvalloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "pvalloc"));
    g_real.dlopen = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
    g_resolved.store(2, std::memory_order_release);
}

inline void ensureReal()
{
    if (__builtin_expect(g_resolved.load(std::memory_order_acquire) != 2, 0))
        resolveReal();
}

// --- The ring ------------------------------------------------------------------------------------------------

std::atomic<bool> g_sessionGone{false};

// Whether the session still reads the ring. A visit in the last 100 ms says yes; without one, the session
// process is asked for (a slow session keeps its samples, a dead one gets none: from then on everything passes
// through). A ring the session never visited is given kAttachNs to be found.
bool sessionAlive(uint64_t now)
{
    if (g_sessionGone.load(std::memory_order_relaxed))
        return false;
    const uint64_t beat = g_ring->heartbeatNs.load(std::memory_order_acquire);
    if (beat != 0 && now < beat + kStaleNs)
        return true;
    const uint32_t session = g_ring->sessionPid.load(std::memory_order_relaxed);
    const bool alive = beat == 0 ? now - g_ring->createdNs < kAttachNs
                                 : session != 0 && (kill(pid_t(session), 0) == 0 || errno != ESRCH);
    if (!alive)
        g_sessionGone.store(true, std::memory_order_relaxed);
    return alive;
}

// Reserves `bytes` (a multiple of 8) at the ring's head, keeping `keep` bytes free after it; pads to the end
// first when the record would cross it. Null when there is no room.
RecordHeader *reserve(uint32_t bytes, uint64_t keep)
{
    const uint64_t capacity = g_dataMask + 1;
    uint64_t head = g_ring->head.load(std::memory_order_relaxed);
    for (;;) {
        const uint64_t tail = g_ring->tail.load(std::memory_order_acquire);
        const uint64_t offset = head & g_dataMask;
        const uint64_t pad = offset + bytes > capacity ? capacity - offset : 0;
        if (head + pad + bytes + keep - tail > capacity)
            return nullptr;
        if (!g_ring->head.compare_exchange_weak(head, head + pad + bytes, std::memory_order_relaxed))
            continue;
        if (pad != 0) {
            auto *padding = reinterpret_cast<RecordHeader *>(g_data + offset);
            padding->bytes = uint32_t(pad);
            padding->type.store(uint32_t(RecordType::Padding), std::memory_order_release);
        }
        return reinterpret_cast<RecordHeader *>(g_data + ((head + pad) & g_dataMask));
    }
}

void publish(RecordHeader *record, RecordType type)
{
    record->type.store(uint32_t(type), std::memory_order_release);
}

// Exact mode waits for room while the session is alive: nothing may be lost there.
RecordHeader *reserveWaiting(uint32_t bytes, uint64_t keep, bool wait)
{
    RecordHeader *record = reserve(bytes, keep);
    if (record || !wait)
        return record;
    const uint64_t start = nowNs();
    uint64_t now = start;
    while (!record && sessionAlive(now) && !g_ring->detached.load(std::memory_order_relaxed)) {
        struct timespec pause = {0, 50'000};
        nanosleep(&pause, nullptr);
        record = reserve(bytes, keep);
        now = nowNs();
    }
    g_ring->waitNs.fetch_add(now - start, std::memory_order_relaxed);
    return record;
}

// The callee-saved registers, the stack pointer and an instruction pointer of this function's caller frame:
// where the session's unwinder starts (the agent's own frames are dropped by the session).
__attribute__((noinline)) void captureRegisters(uint64_t *regs)
{
    uint64_t bx, bp, r12, r13, r14, r15;
    asm volatile("mov %%rbx, %0\n\tmov %%rbp, %1\n\tmov %%r12, %2\n\tmov %%r13, %3\n\tmov %%r14, %4\n\tmov %%r15, %5"
                 : "=m"(bx), "=m"(bp), "=m"(r12), "=m"(r13), "=m"(r14), "=m"(r15));
    // This function's return address and the stack pointer at its call site: the caller's state.
    regs[RegIP] = reinterpret_cast<uint64_t>(__builtin_return_address(0));
    regs[RegSP] = reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16;
    regs[RegBX] = bx;
    regs[RegBP] = *static_cast<uint64_t *>(__builtin_frame_address(0)); // the caller's frame pointer, saved
    regs[RegR12] = r12;
    regs[RegR13] = r13;
    regs[RegR14] = r14;
    regs[RegR15] = r15;
    (void)bp;
}

// Copies up to `want` bytes of the stack from `sp`; process_vm_readv stops at the end of the mapping instead of
// faulting. Returns the bytes copied.
uint32_t copyStack(uint64_t sp, uint8_t *out, uint32_t want)
{
    struct iovec local = {out, want};
    struct iovec remote = {reinterpret_cast<void *>(sp), want};
    const ssize_t n = syscall(SYS_process_vm_readv, getpid(), &local, 1ul, &remote, 1ul, 0ul);
    if (n >= 0)
        return uint32_t(n);
    // A copy that crosses the end of the stack fails whole: retry up to the end of sp's page, then page by page.
    uint32_t copied = 0;
    const uint64_t pageEnd = (sp | 4095) + 1;
    uint64_t chunk = pageEnd - sp;
    while (copied < want) {
        const uint32_t len = uint32_t(chunk < want - copied ? chunk : want - copied);
        struct iovec l = {out + copied, len};
        struct iovec r = {reinterpret_cast<void *>(sp + copied), len};
        if (syscall(SYS_process_vm_readv, getpid(), &l, 1ul, &r, 1ul, 0ul) != ssize_t(len))
            break;
        copied += len;
        chunk = 4096;
    }
    if (copied == 0)
        g_ring->problems.fetch_or(ProblemStackCopy, std::memory_order_relaxed);
    return copied;
}

bool track(uint64_t address)
{
    const size_t b = bucketOf(address);
    g_bucketUse[b].fetch_add(1, std::memory_order_acq_rel);
    for (auto &slot : g_buckets[b].slots) {
        uint64_t empty = 0;
        if (slot.load(std::memory_order_relaxed) == 0 &&
            slot.compare_exchange_strong(empty, address, std::memory_order_acq_rel))
            return true;
    }
    g_bucketUse[b].fetch_sub(1, std::memory_order_acq_rel);
    return false;
}

// True when `address` was tracked; it is not any more.
inline bool untrack(uint64_t address)
{
    const size_t b = bucketOf(address);
    if (g_bucketUse[b].load(std::memory_order_acquire) == 0)
        return false;
    for (auto &slot : g_buckets[b].slots) {
        uint64_t expected = address;
        if (slot.load(std::memory_order_relaxed) == address &&
            slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
            g_bucketUse[b].fetch_sub(1, std::memory_order_acq_rel);
            return true;
        }
    }
    return false;
}

// The next sampling point, in bytes: an exponential draw with the mean interval.
int64_t drawInterval(ThreadState &t)
{
    if (t.rng == 0)
        t.rng = (nowNs() ^ (uint64_t(currentTid()) << 32)) | 1;
    uint64_t x = t.rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t.rng = x;
    // u in (0, 1]; -ln(u) computed without libm: ln(u) = log2(u) * ln 2, log2 from the exponent and a series.
    const double u = (double((x >> 11) + 1)) * (1.0 / 9007199254740992.0);
    // u = m * 2^exponent with m in [1, 2), from the bits (frexp would bring in libm).
    uint64_t bits;
    memcpy(&bits, &u, sizeof bits);
    const int exponent = int((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & ~(uint64_t(0x7ff) << 52)) | (uint64_t(1023) << 52);
    double m;
    memcpy(&m, &bits, sizeof m);
    const double y = (m - 1) / (m + 1); // ln m = 2 artanh(y)
    const double y2 = y * y;
    const double lnM = 2 * y * (1 + y2 * (1.0 / 3 + y2 * (1.0 / 5 + y2 * (1.0 / 7 + y2 * (1.0 / 9 + y2 / 11)))));
    const double lnU = lnM + exponent * 0.6931471805599453;
    const double next = -lnU * double(g_interval);
    return next < 1 ? 1 : next > 9.0e18 ? int64_t(9e18) : int64_t(next);
}

void writeAlloc(void *address, size_t size, bool exact)
{
    const uint64_t now = nowNs();
    if (g_ring->detached.load(std::memory_order_relaxed))
        return;
    if (!sessionAlive(now)) {
        g_ring->allocsDropped.fetch_add(1, std::memory_order_relaxed);
        g_ring->bytesDropped.fetch_add(size, std::memory_order_relaxed);
        return;
    }
    if (!exact && !track(uint64_t(address))) {
        g_ring->problems.fetch_or(ProblemTableFull, std::memory_order_relaxed);
        g_ring->allocsDropped.fetch_add(1, std::memory_order_relaxed);
        g_ring->bytesDropped.fetch_add(size, std::memory_order_relaxed);
        return;
    }
    uint32_t stackWant = g_ring->stackCopyBytes.load(std::memory_order_relaxed);
    if (stackWant > 65000)
        stackWant = 65000;
    const uint32_t bytes = uint32_t((sizeof(AllocRecord) + stackWant + 7) & ~size_t(7));
    // Keep room for the free of every tracked allocation, this one included.
    const uint64_t keep =
        exact ? 0 : g_ring->tracked.load(std::memory_order_relaxed) * kFreeRecordBytes + kFreeRecordBytes;
    auto *header = reserveWaiting(bytes, keep, exact);
    if (!header) {
        if (!exact)
            untrack(uint64_t(address));
        g_ring->allocsDropped.fetch_add(1, std::memory_order_relaxed);
        g_ring->bytesDropped.fetch_add(size, std::memory_order_relaxed);
        return;
    }
    if (!exact)
        g_ring->tracked.fetch_add(1, std::memory_order_relaxed);
    auto *record = reinterpret_cast<AllocRecord *>(header);
    header->bytes = bytes;
    record->tid = currentTid();
    record->timeNs = now;
    record->address = uint64_t(address);
    record->size = size;
    for (auto &reg : record->regs)
        reg = 0;
    captureRegisters(record->regs);
    record->stackBytes = copyStack(record->regs[RegSP], reinterpret_cast<uint8_t *>(record + 1), stackWant);
    publish(header, RecordType::Alloc);
}

void writeFree(void *address, bool exact)
{
    auto *header = reserveWaiting(sizeof(FreeRecord), 0, exact);
    if (!header) {
        // Not possible for a tracked allocation (its room is kept); an exact-mode free when the session is gone.
        g_ring->untrackedFrees.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (!exact)
        g_ring->tracked.fetch_sub(1, std::memory_order_relaxed);
    auto *record = reinterpret_cast<FreeRecord *>(header);
    header->bytes = sizeof(FreeRecord);
    record->tid = currentTid();
    record->reserved = 0;
    record->timeNs = nowNs();
    record->address = uint64_t(address);
    publish(header, RecordType::Free);
}

// --- Starting, forking, ending -------------------------------------------------------------------------------

void appendDecimal(char *&p, uint64_t v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = char('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        *p++ = digits[--n];
}

uint64_t parseUnsigned(const char *s, uint64_t fallback)
{
    if (!s || !*s)
        return fallback;
    uint64_t v = 0;
    for (; *s; ++s) {
        if (*s < '0' || *s > '9')
            return fallback;
        v = v * 10 + uint64_t(*s - '0');
    }
    return v;
}

// Maps the bucket tables (fresh zero pages: a forked child starts with none of its parent's tracked blocks).
bool mapTables()
{
    void *buckets = mmap(g_buckets, kBuckets * sizeof(Bucket), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (g_buckets ? MAP_FIXED : 0), -1, 0);
    void *use = mmap(g_bucketUse, kBuckets * sizeof(uint16_t), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (g_bucketUse ? MAP_FIXED : 0), -1, 0);
    if (buckets == MAP_FAILED || use == MAP_FAILED)
        return false;
    g_buckets = static_cast<Bucket *>(buckets);
    g_bucketUse = static_cast<std::atomic<uint16_t> *>(use);
    return true;
}

// Creates this process's ring: written under a temporary name, then renamed so that the session only ever
// sees complete headers.
bool createRing(uint32_t parentPid)
{
    const uint64_t created = nowNs();
    const uint32_t pid = uint32_t(getpid());
    char path[600];
    char temp[620];
    char *p = path;
    const size_t dirLength = strnlen(g_directory, sizeof g_directory);
    memcpy(p, g_directory, dirLength);
    p += dirLength;
    *p++ = '/';
    appendDecimal(p, pid);
    *p++ = '-';
    appendDecimal(p, created);
    memcpy(p, ".ring", 6);
    memcpy(temp, path, size_t(p - path));
    memcpy(temp + (p - path), ".tmp", 5);

    const int fd = open(temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    const uint64_t total = kRingHeaderBytes + g_ringBytes;
    if (ftruncate(fd, off_t(total)) != 0) {
        close(fd);
        unlink(temp);
        return false;
    }
    void *mem = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mem == MAP_FAILED) {
        unlink(temp);
        return false;
    }
    auto *ring = static_cast<RingHeader *>(mem);
    ring->magic = kRingMagic;
    ring->version = kRingVersion;
    ring->pid = pid;
    ring->parentPid = parentPid;
    ring->dataBytes = g_ringBytes;
    ring->allocInterval = g_interval;
    ring->createdNs = created;
    ring->stackCopyBytes.store(8192, std::memory_order_relaxed);
    if (rename(temp, path) != 0) {
        munmap(mem, total);
        unlink(temp);
        return false;
    }
    g_ring = ring;
    g_data = static_cast<uint8_t *>(mem) + kRingHeaderBytes;
    g_dataMask = g_ringBytes - 1;
    return true;
}

void atForkChild()
{
    ThreadState &t = t_state;
    t.tid = 0;
    t.rng = 0;
    t.bytesUntilSample = 0;
    if (g_mode.load(std::memory_order_relaxed) == int(Mode::Off) || !g_ring)
        return;
    const uint32_t parent = g_ring->pid;
    g_sessionGone.store(false, std::memory_order_relaxed);
    // The parent's ring stays the parent's: this process starts its own, or runs without one.
    munmap(g_ring, kRingHeaderBytes + g_ringBytes);
    g_ring = nullptr;
    if (!mapTables() || !createRing(parent))
        g_mode.store(int(Mode::Off), std::memory_order_release);
}

void initialize()
{
    ensureReal();
    const char *directory = getenv(kEnvDirectory);
    if (!directory || !*directory || strlen(directory) >= sizeof g_directory - 64)
        return;
    memcpy(g_directory, directory, strlen(directory) + 1);
    g_interval = parseUnsigned(getenv(kEnvAllocInterval), 512 * 1024);
    if (g_interval == 0)
        g_interval = 1;
    uint64_t ringBytes = parseUnsigned(getenv(kEnvRingBytes), kDefaultRingDataBytes);
    if (ringBytes < 65536)
        ringBytes = 65536;
    while (ringBytes & (ringBytes - 1))
        ringBytes &= ringBytes - 1; // down to a power of two
    g_ringBytes = ringBytes;
    if ((g_interval > 1 && !mapTables()) || !createRing(0))
        return;
    pthread_atfork(nullptr, nullptr, atForkChild);
    g_mode.store(int(g_interval == 1 ? Mode::Exact : Mode::Sampling), std::memory_order_release);
}

__attribute__((constructor(101))) void agentStart()
{
    ThreadState &t = t_state;
    ++t.depth;
    initialize();
    --t.depth;
}

__attribute__((destructor(101))) void agentEnd()
{
    if (g_ring)
        g_ring->finished.store(1, std::memory_order_release);
}

// --- The slow paths ----------------------------------------------------------------------------------------------

// Called when the thread's countdown ran out: decides whether `address` is sampled and draws the next point.
__attribute__((noinline)) void onCountdown(void *address, size_t size)
{
    ThreadState &t = t_state;
    const int mode = g_mode.load(std::memory_order_acquire);
    if (mode == int(Mode::Off) || t.depth != 0 || (g_ring && g_ring->detached.load(std::memory_order_relaxed))) {
        // Not sampling (yet, or any more): do not come back here for a long while.
        t.bytesUntilSample = INT64_MAX / 2;
        return;
    }
    ++t.depth;
    if (mode == int(Mode::Exact)) {
        t.bytesUntilSample = 0;
        writeAlloc(address, size, true);
    } else {
        const bool first = t.rng == 0;
        if (first) {
            // A fresh thread: its first point is drawn, not taken at once.
            t.bytesUntilSample += drawInterval(t);
            if (t.bytesUntilSample <= 0)
                writeAlloc(address, size, false);
        } else {
            writeAlloc(address, size, false);
        }
        while (t.bytesUntilSample <= 0)
            t.bytesUntilSample += drawInterval(t);
    }
    --t.depth;
}

inline void *afterAlloc(void *address, size_t size)
{
    if (__builtin_expect(address == nullptr, 0))
        return address;
    ThreadState &t = t_state;
    t.bytesUntilSample -= int64_t(size);
    if (__builtin_expect(t.bytesUntilSample <= 0, 0))
        onCountdown(address, size);
    return address;
}

inline void beforeFree(void *address)
{
    const int mode = g_mode.load(std::memory_order_relaxed);
    if (mode == int(Mode::Off) || address == nullptr)
        return;
    ThreadState &t = t_state;
    if (mode == int(Mode::Exact)) {
        if (t.depth != 0)
            return;
        ++t.depth;
        writeFree(address, true);
        --t.depth;
        return;
    }
    if (untrack(uint64_t(address))) {
        ++t.depth;
        writeFree(address, false);
        --t.depth;
    }
}

} // namespace
} // namespace emberline::agent

using namespace emberline::agent;

// --- The hooks ---------------------------------------------------------------------------------------------------

EMBERLINE_EXPORT void *malloc(size_t size)
{
    ensureReal();
    return afterAlloc(g_real.malloc(size), size);
}

EMBERLINE_EXPORT void free(void *address)
{
    if (__builtin_expect(isBootstrap(address), 0))
        return;
    ensureReal();
    beforeFree(address);
    g_real.free(address);
}

EMBERLINE_EXPORT void *calloc(size_t count, size_t size)
{
    if (__builtin_expect(g_resolved.load(std::memory_order_acquire) != 2, 0)) {
        // dlsym's own calloc while the real functions are being resolved (by this thread or another).
        if (g_resolved.load(std::memory_order_acquire) == 1) {
            size_t bytes = 0;
            if (__builtin_mul_overflow(count, size, &bytes))
                return nullptr;
            return bootstrapAlloc(bytes); // static storage: already zero
        }
        ensureReal();
    }
    size_t bytes = 0;
    if (__builtin_mul_overflow(count, size, &bytes))
        bytes = 0;
    return afterAlloc(g_real.calloc(count, size), bytes);
}

EMBERLINE_EXPORT void *realloc(void *address, size_t size)
{
    ensureReal();
    if (__builtin_expect(isBootstrap(address), 0)) {
        void *moved = g_real.malloc(size);
        const size_t left = size_t(g_bootstrap + sizeof g_bootstrap - static_cast<char *>(address));
        if (moved)
            memcpy(moved, address, size < left ? size : left);
        return afterAlloc(moved, size);
    }
    if (address == nullptr)
        return afterAlloc(g_real.realloc(nullptr, size), size);
    if (size == 0) {
        beforeFree(address);
        return g_real.realloc(address, 0);
    }
    // As heaptrack counts it: a free of the old block and an allocation of the new size. The old block's free
    // is reported before the real call, so that its address, reused at once by another thread, is told apart.
    beforeFree(address);
    return afterAlloc(g_real.realloc(address, size), size);
}

EMBERLINE_EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    ensureReal();
    const int rc = g_real.posixMemalign(out, alignment, size);
    if (rc == 0)
        afterAlloc(*out, size);
    return rc;
}

EMBERLINE_EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    ensureReal();
    return afterAlloc(g_real.alignedAlloc(alignment, size), size);
}

EMBERLINE_EXPORT void *memalign(size_t alignment, size_t size)
{
    ensureReal();
    return afterAlloc(g_real.memalign(alignment, size), size);
}

EMBERLINE_EXPORT void *valloc(size_t size)
{
    ensureReal();
    return afterAlloc(g_real.valloc(size), size);
}

EMBERLINE_EXPORT void *pvalloc(size_t size)
{
    ensureReal();
    return afterAlloc(g_real.pvalloc(size), size);
}

// A library opened with RTLD_DEEPBIND resolves malloc and free to its own dependencies first, around the hooks:
// the session says so.
EMBERLINE_EXPORT void *dlopen(const char *file, int flags)
{
    ensureReal();
#ifdef RTLD_DEEPBIND
    if ((flags & RTLD_DEEPBIND) != 0 && g_ring)
        g_ring->problems.fetch_or(ProblemDeepBind, std::memory_order_relaxed);
#endif
    return g_real.dlopen(file, flags);
}
