// The agent's side of its ring (agent_writer.h): creating it, reserving records (the window, the laps, the way past
// the last lap's end, the frees' room), AgentScope's reserve and publish. The writers of each record are
// records/agent_records.cpp's; the table of tracked allocations is agent_track.cpp's.
//
// Thread: every thread of the program, concurrently; lock-free.

#include "engine/agent/agent_writer.h"
#include "engine/agent/agent_heap.h"
#include "engine/agent/agent_pystack.h"
#include "engine/agent/agent_stack.h"
#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_track.h"
#include "engine/agent/agent_walk.h"
#include "engine/agent/python/agent_pymem.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

namespace emberline::agent {

RingHeader *g_ring = nullptr;
uint8_t *g_data = nullptr;
uint64_t g_dataMask = 0;
uint64_t g_interval = uint64_t(512) * 1024;
uint64_t g_ringBytes = kDefaultRingDataBytes;
char g_directory[512];
uint64_t g_attachedNs = 0;
uint32_t g_pythonAllocators = 0;
void (*g_afterReserve)(RecordHeader *record) = nullptr;

namespace {

// The ring's pages past `mapped` (first lap) up to `need`, mapped into this process a chunk at a time with one system
// call, ahead of the records that will fill them. A page the program wrote first would cost it a page fault (several
// microseconds each in a virtual machine: a CPython run at the default interval lost about 4% of its time to them).
// The session reserves pages ahead of the head on its own time (fallocate); where the program gets there first (a
// burst as it starts), populating through the mapping makes them, and fails where a write would raise SIGBUS (a full
// file system). False when they could not be had; the file system is asked again 100 ms later, not at every record.
std::atomic<uint64_t> g_noPagesUntilNs{0};
std::atomic<uint64_t> g_mapped{0}; // data bytes from the start mapped into this process: its first lap needs no fault
std::atomic<bool> g_noPopulate{false}; // a kernel before 5.14: no MADV_POPULATE_WRITE

bool mapMore(uint64_t mapped, uint64_t need)
{
    constexpr uint64_t kChunk = uint64_t(1) << 20; // a hundred samples or so: one in a hundred pays for it
    const uint64_t now = nowNs();
    if (now < g_noPagesUntilNs.load(std::memory_order_relaxed))
        return false;
    const uint64_t capacity = g_dataMask + 1;
    uint64_t target = (need + kChunk - 1) & ~(kChunk - 1);
    if (target > capacity)
        target = capacity;
    if (target <= mapped)
        return true;
    if (g_noPopulate.load(std::memory_order_relaxed) ||
        madvise(g_data + mapped, target - mapped, MADV_POPULATE_WRITE) != 0) {
        if (g_noPopulate.load(std::memory_order_relaxed) || errno == EINVAL) {
            // A kernel before 5.14 cannot populate: the pages the session reserved fault as they are written, and a
            // record waits for the session to reserve the ones it needs.
            g_noPopulate.store(true, std::memory_order_relaxed);
            const uint64_t reserved = g_ring->reservedBytes.load(std::memory_order_acquire);
            target = target < reserved ? target : reserved;
            if (target < need && target < capacity)
                return false;
        } else {
            g_noPagesUntilNs.store(now + 100'000'000, std::memory_order_relaxed);
            return false;
        }
    }
    // Both only grow: another thread may have gone further meanwhile.
    uint64_t seen = g_ring->reservedBytes.load(std::memory_order_relaxed);
    while (seen < target && !g_ring->reservedBytes.compare_exchange_weak(seen, target, std::memory_order_acq_rel))
        ;
    seen = mapped;
    while (seen < target && !g_mapped.compare_exchange_weak(seen, target, std::memory_order_relaxed))
        ;
    return true;
}

} // namespace

// The part of the ring the writers go round while the session keeps up: a record that would pass its end starts the
// next lap instead, after a padding record to the ring's end whose body nobody writes. A small window stays in the
// caches and mapped, where a lap of the whole ring would touch a page the program has not used lately at every few
// records (a 16 MiB ring cost a CPython run at the default interval about 4% of its time in a virtual machine, a 2
// MiB window under 1%). It doubles, up to the whole ring, when the session has left more than half of it unread (a
// burst, a slow session) or a record's kept bytes need more; it never shrinks, so that a writer that read it a moment
// ago never wraps early past another's kept bytes.
constexpr uint64_t kFirstWindow = uint64_t(2) << 20;
std::atomic<uint64_t> g_window{kFirstWindow};
// The ring's tail as a writer last read it. The session moves the tail as it reads: its line is nearly always another
// CPU's, a cache miss at every record (a tenth of a CPython program's time in exact mode). The tail only grows, so a
// writer goes by this copy, and reads the tail where the copy says there is no room or that the window should widen.
std::atomic<uint64_t> g_tailSeen{0};

bool g_soleWriter = false;

namespace {

// Moves the head from `head` to `next` where it still is `head`: false where another writer (or a signal handler that
// interrupted this one) moved it first. While the process has one thread (the C library's own flag, as its malloc
// reads it to skip its locks) and no other process may write this ring (g_soleWriter), the one instruction needs no
// lock prefix: a signal handler runs between instructions, and the session only reads the head. The locked one would
// wait for this thread's stores to the ring to drain, at every record.
bool moveHead(uint64_t &head, uint64_t next)
{
    if (!__libc_single_threaded || !g_soleWriter)
        return g_ring->head.compare_exchange_weak(head, next, std::memory_order_acq_rel);
    uint64_t seen = head;
    // NOLINTNEXTLINE(hicpp-no-assembler): cmpxchg without the lock prefix, atomic on its own CPU
    asm volatile("cmpxchgq %2, %1"
                 : "+a"(seen), "+m"(*reinterpret_cast<uint64_t *>(&g_ring->head))
                 : "r"(next)
                 : "memory", "cc");
    if (seen == head)
        return true;
    head = seen;
    return false;
}

} // namespace

// Widens the window to hold `need` bytes from the ring's start (doubling; at most the ring).
void widen(uint64_t window, uint64_t need, uint64_t capacity)
{
    uint64_t wider = window;
    while (wider < need && wider < capacity)
        wider *= 2;
    if (wider <= window)
        wider = window * 2;
    if (wider > capacity)
        wider = capacity;
    // Another writer may have widened it meanwhile (then the session's copy is theirs to set).
    if (g_window.compare_exchange_strong(window, wider, std::memory_order_acq_rel))
        g_ring->windowBytes.store(uint32_t(wider), std::memory_order_relaxed);
}

// Reserves `bytes` (a multiple of 8) at the ring's head, keeping `keep` bytes free after it, and `room` more that
// needs no pages yet; starts the next lap first when the record and `keep` would pass the window's end. Null when there
// is no room: the session has not read far enough, or (in the first lap) the file system has no pages for it
// (ThreadState::noPages). The pages of `keep` (the frees of the tracked allocations: never lost, even on a full file
// system) are made before the record is written; those of `room` (for a record a signal handler nests in this one) when
// such a record is written.
RecordHeader *reserve(uint32_t bytes, uint64_t keep, uint64_t room = 0)
{
    t_state.noPages = false;
    const uint64_t capacity = g_dataMask + 1;
    uint64_t head = g_ring->head.load(std::memory_order_acquire);
    uint64_t tail = g_tailSeen.load(std::memory_order_acquire);
    bool tailFresh = false;
    // The ring's own tail, where the copy says no: true when it moved (the room is then judged again).
    const auto moreRoom = [&] {
        const uint64_t seen = tail;
        tail = tailFresh ? tail : g_ring->tail.load(std::memory_order_acquire);
        tailFresh = true;
        for (uint64_t kept = seen; kept < tail;)
            if (g_tailSeen.compare_exchange_weak(kept, tail, std::memory_order_acq_rel))
                break;
        return tail != seen;
    };
    for (;;) {
        // Read after the head: a writer that widened the window did so before its record past the old end moved it.
        uint64_t window = g_window.load(std::memory_order_acquire);
        const uint64_t offset = head & g_dataMask;
        uint64_t pad = 0;
        if (window >= capacity) {
            if (offset + bytes > capacity)
                pad = capacity - offset; // the whole ring: `keep` may go on at its start
        } else if (offset + bytes + keep > window) {
            if (head - tail + bytes + keep + room > window / 2) {
                if (!moreRoom())
                    widen(window, 0, capacity);
                continue;
            }
            pad = capacity - offset;
        }
        const uint64_t end = head + pad + bytes + keep;
        if (end + room > tail + capacity && moreRoom())
            continue;
        if (end + room > tail + capacity) {
            // No room by the heads' count, which takes a padding's jump for bytes used. While the session still reads
            // the lap before this one (a stall, a burst), the ring past where that lap's data ended is free in this
            // lap: the record goes there (after a padding record from the head, when the head is short of it, whose
            // header must end before the unread data), with the window widened to hold it.
            const uint64_t lap = head / capacity;
            const int64_t lastEnd = lap == 0 ? -1 : lapDataEnd(g_ring->lapEnd.load(std::memory_order_acquire), lap - 1);
            if (pad != 0 || lastEnd < 0 || tail / capacity + 1 != lap)
                return nullptr;
            const uint64_t dataEnd = uint64_t(lastEnd);
            const uint64_t at = offset > dataEnd ? offset : dataEnd;
            if (at != offset && offset + sizeof(RecordHeader) > (tail & g_dataMask))
                return nullptr;
            if (at + bytes + keep + room > capacity)
                return nullptr;
            if (at + bytes + keep > window) {
                widen(window, at + bytes + keep, capacity);
                continue;
            }
            pad = at - offset;
        }
        // Until the window is mapped into this process the head is still in its first lap there: from the record's
        // start to the end of what it keeps.
        const uint64_t start = (head + pad) & g_dataMask;
        const uint64_t need = start + bytes + keep < capacity ? start + bytes + keep : capacity;
        const uint64_t mapped = g_mapped.load(std::memory_order_relaxed);
        if (need > mapped) {
            if (!mapMore(mapped, need)) {
                t_state.noPages = true;
                return nullptr;
            }
            continue;
        }
        if (!moveHead(head, head + pad + bytes)) {
            tailFresh = false; // another writer went first: the room is judged again from the new head
            continue;
        }
        if (offset + pad == capacity) // a lap ended here
            g_ring->lapEnd.store(((head / capacity) << 32) | (offset + sizeof(RecordHeader)),
                                 std::memory_order_release);
        if (pad != 0) {
            auto *padding = reinterpret_cast<RecordHeader *>(g_data + offset);
            padding->bytes = uint32_t(pad);
            padding->type.store(uint32_t(RecordType::Padding), std::memory_order_release);
        }
        return reinterpret_cast<RecordHeader *>(g_data + ((head + pad) & g_dataMask));
    }
}

namespace {

// reserve's common case, the window's: the record fits before the window's end (or the ring's, once the window is the
// whole ring), in room by the tail this process saw last, in pages mapped already. Null where
// any of that fails: reserve judges it all again.
RecordHeader *quickReserve(uint32_t bytes, uint64_t keep, uint64_t room)
{
    uint64_t head = g_ring->head.load(std::memory_order_acquire);
    const uint64_t window = g_window.load(std::memory_order_acquire);
    const uint64_t tail = g_tailSeen.load(std::memory_order_acquire);
    const uint64_t capacity = g_dataMask + 1;
    const uint64_t offset = head & g_dataMask;
    uint64_t need = offset + bytes + keep;
    if (window >= capacity) {
        if (offset + bytes > capacity)
            return nullptr;
        need = need < capacity ? need : capacity;
    } else if (need > window) {
        return nullptr;
    }
    if (head + bytes + keep + room > tail + capacity || need > g_mapped.load(std::memory_order_relaxed) ||
        !moveHead(head, head + bytes))
        return nullptr;
    return reinterpret_cast<RecordHeader *>(g_data + offset);
}

} // namespace

// What a record not nested in another leaves free after it: room for one that a signal handler makes while this
// thread holds its record (the handler's cannot wait for room, and would be lost): the largest allocation record
// and a free's, a quarter of a small ring at most.
constexpr uint64_t kNestedRoom = sizeof(AllocRecord) + kMaxStackCopyBytes + kFreeRecordBytes;

namespace {

// reserve, and in exact mode its wait for room while the session is alive (nothing may be lost there), but never while
// this thread holds another record (`nested`): the reader waits for that one in order, so a signal handler's record
// nested in it would wait for itself. Held (ThreadState::holding) from before the head moves: a signal handler that
// lands anywhere in the reserve nests in this record; not while this thread sleeps for room: a handler's record may
// wait for room itself then.
__attribute__((noinline)) RecordHeader *reserveOrWait(uint32_t bytes, uint64_t keep, uint64_t room, bool wait,
                                                      bool nested)
{
    ThreadState &t = t_state;
    const auto attempt = [&] {
        t.holding = true;
        RecordHeader *reserved = reserve(bytes, keep, room);
        if (!reserved)
            t.holding = nested;
        return reserved;
    };
    RecordHeader *record = attempt();
    if (!record && wait && !nested && !t.noPages) {
        const uint64_t start = nowNs();
        uint64_t now = start;
        while (!record && sessionAlive(now) && !g_ring->detached.load(std::memory_order_relaxed)) {
            struct timespec pause = {0, 50'000};
            nanosleep(&pause, nullptr);
            record = attempt();
            now = nowNs();
            if (t.noPages)
                break; // a full file system: the session's reading makes no room for this
        }
        g_ring->waitNs.fetch_add(now - start, std::memory_order_relaxed);
    }
    return record;
}

} // namespace

RecordHeader *AgentScope::reserve(uint32_t bytes, uint64_t keep, bool wait)
{
    ThreadState &t = t_state;
    if (m_record)
        publish(RecordType::Padding); // one record at a time per scope; a forgotten one never stalls the reader
    const bool nested = t.holding;
    uint64_t room = 0;
    if (!nested) {
        const uint64_t quarter = (g_dataMask + 1) / 4;
        room = kNestedRoom < quarter ? kNestedRoom : quarter;
    }
    t.holding = true; // before the head moves (reserveOrWait)
    RecordHeader *record = quickReserve(bytes, keep, room);
    if (__builtin_expect(record == nullptr, 0)) {
        record = reserveOrWait(bytes, keep, room, wait, nested);
        if (!record)
            return nullptr;
    }
    record->bytes = bytes;
    m_record = record;
    if (__builtin_expect(g_afterReserve != nullptr, 0))
        g_afterReserve(record);
    return record;
}

void AgentScope::publish(RecordType type)
{
    m_record->type.store(uint32_t(type), std::memory_order_release);
    m_record = nullptr;
    t_state.holding = m_wasHolding;
}

namespace {

// A ring that could not be made leaves an empty file "PID-CREATED-ERRNO.noring" (kNoRingSuffix) in its place, so
// that the session can say why this process image was not profiled from inside. Best effort: a folder that takes
// no file at all says nothing.
void markNoRing(const char *path, size_t stemLength, int error)
{
    char marker[640];
    memcpy(marker, path, stemLength);
    char *p = marker + stemLength;
    *p++ = '-';
    appendDecimal(p, uint64_t(error > 0 ? error : 0));
    memcpy(p, kNoRingSuffix, strlen(kNoRingSuffix) + 1);
    const int fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
}

} // namespace

// Written under a temporary name, then renamed: the session only ever sees complete headers.
bool createRing(uint32_t parentPid)
{
    resetLiveness();
    pythonForget();
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
    const size_t stemLength = size_t(p - path);
    memcpy(p, ".ring", 6);
    memcpy(temp, path, stemLength);
    memcpy(temp + stemLength, ".tmp", 5);

    const int fd = open(temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        markNoRing(path, stemLength, errno);
        return false;
    }
    const uint64_t total = kRingHeaderBytes + g_ringBytes;
    // The first pages of the ring are reserved before it is mapped (the session reserves more as the ring fills): a
    // page the file system could not give later (a full disk or tmpfs) would end the program with SIGBUS at its first
    // write. A file system without fallocate gives its pages as they are written. Exact mode too: the writers map
    // the pages ahead of their records a chunk at a time (mapMore), and go round a window while the session keeps up.
    // Its whole ring (64 MiB) reserved and mapped here cost every process image some 45 ms at its start and 7 ms at
    // its exit, and the tmpfs 64 MiB for each one alive: a shell loop of 200 /bin/true took 16 s instead of 0.16 s.
    uint64_t reserved = g_ringBytes < kAgentReservedBytes ? g_ringBytes : kAgentReservedBytes;
    if (ftruncate(fd, off_t(total)) != 0) {
        const int error = errno;
        close(fd);
        unlink(temp);
        markNoRing(path, stemLength, error);
        return false;
    }
    // The module index's pages (written by the session, read by walks) are left to the session: a process image that
    // never walks pays nothing for them. The session asks for walks only where it had them (a page of a full tmpfs
    // never given raises SIGBUS at its first read too).
    if (fallocate(fd, 0, 0, off_t(kModuleIndexOffset)) != 0 ||
        fallocate(fd, 0, off_t(kRingHeaderBytes), off_t(reserved)) != 0) {
        const int error = errno;
        if (error != EOPNOTSUPP) {
            close(fd);
            unlink(temp);
            markNoRing(path, stemLength, error);
            return false;
        }
        reserved = g_ringBytes;
    }
    void *mem = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int mapError = errno;
    close(fd);
    if (mem == MAP_FAILED) {
        unlink(temp);
        markNoRing(path, stemLength, mapError);
        return false;
    }
    // The reserved part is mapped at once: a first lap that faulted its pages in one by one would cost every early
    // sample a few page faults in the program. (A kernel before 5.14 has no MADV_POPULATE_WRITE: they fault then.)
    madvise(mem, kModuleIndexOffset, MADV_POPULATE_WRITE);
    madvise(static_cast<uint8_t *>(mem) + kRingHeaderBytes, reserved, MADV_POPULATE_WRITE);
    auto *ring = static_cast<RingHeader *>(mem);
    ring->magic = kRingMagic;
    ring->version = kRingVersion;
    ring->pid = pid;
    ring->parentPid = parentPid;
    ring->dataBytes = g_ringBytes;
    ring->allocInterval = g_interval;
    ring->createdNs = created;
    ring->stackCopyBytes.store(kInitialAllocStackBytes, std::memory_order_relaxed);
    ring->cpuStackCopyBytes.store(kInitialCpuStackBytes, std::memory_order_relaxed);
    ring->reservedBytes.store(reserved, std::memory_order_release);
    ring->windowBytes.store(uint32_t(g_ringBytes < kFirstWindow ? g_ringBytes : kFirstWindow),
                            std::memory_order_relaxed);
    ring->lapEnd.store(~uint64_t(0), std::memory_order_relaxed);
    // A forked child frees blocks its parent allocated, which its counts never saw: they are not whole there. A
    // program the agent was loaded into frees blocks allocated before: whole there by the marks of the blocks since.
    ring->attachedNs = g_attachedNs;
    ring->pythonAllocators.store(g_pythonAllocators, std::memory_order_relaxed);
    const bool countsWhole = parentPid == 0 && (g_attachedNs == 0 || (g_interval > 1 && startAttachedMarks()));
    const bool counted = countsWhole && g_interval > 0 && heapSizesKnown() &&
                         g_pythonAllocators != uint32_t(PythonAllocators::Installed);
    ring->heapCounted.store(counted ? 1 : 0, std::memory_order_release);
    if (rename(temp, path) != 0) {
        munmap(mem, total);
        unlink(temp);
        return false;
    }
    walkNewRing();
    newRingTag();                                   // the marked blocks an earlier ring recorded are not this one's
    g_tailSeen.store(0, std::memory_order_release); // before a writer can find the new ring
    g_ring = ring;
    g_data = static_cast<uint8_t *>(mem) + kRingHeaderBytes;
    g_dataMask = g_ringBytes - 1;
    g_mapped.store(reserved, std::memory_order_relaxed);
    g_window.store(g_ringBytes < kFirstWindow ? g_ringBytes : kFirstWindow, std::memory_order_relaxed);
    return true;
}

void retireRing()
{
    // Should it fail, the file stays mapped until the next session's start unmaps it: late writes land there.
    if (g_ring)
        (void)mmap(g_ring, kRingHeaderBytes + g_ringBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

void unmapRing()
{
    if (g_ring)
        munmap(g_ring, kRingHeaderBytes + g_ringBytes);
    g_ring = nullptr;
    g_data = nullptr;
}

} // namespace emberline::agent
