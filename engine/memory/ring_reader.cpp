#include "engine/memory/ring_reader.h"
#include "engine/memory/directory_watch.h"
#include "engine/memory/ring_header_reads.h"
#include "engine/memory/ring_mapping.h"
#include "engine/memory/walked_stacks.h"
#include "engine/unwind/unwind_table_server.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emberline::engine {

namespace {

uint64_t monotonicNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

bool endsWith(const char *name, const char *suffix)
{
    const size_t n = std::strlen(name);
    const size_t s = std::strlen(suffix);
    return n >= s && std::memcmp(name + n - s, suffix, s) == 0;
}

} // namespace

RingReader::RingReader(std::string directory)
    : m_directory(std::move(directory)), m_made(std::make_unique<DirectoryWatch>(m_directory))
{
}

RingReader::~RingReader()
{
    m_tables.reset(); // before the rings it writes indexes into are unmapped
    for (auto &ring : m_rings)
        ring->header->detached.store(1, std::memory_order_release);
}

// "PID-CREATED-ERRNO.noring": a process image that could not make its ring, and why.
void RingReader::noteRingFailure(const char *name)
{
    unlink((m_directory + '/' + name).c_str());
    unsigned long pid = 0, error = 0;
    unsigned long long created = 0;
    ++m_counters.ringFailures;
    if (!m_counters.ringFailure.empty())
        return;
    if (std::sscanf(name, "%lu-%llu-%lu", &pid, &created, &error) == 3)
        m_counters.ringFailure = "process " + std::to_string(pid) + ": " + std::strerror(int(error));
    else
        m_counters.ringFailure = std::string("a process: ") + name;
}

void RingReader::scan()
{
    // A ring is renamed into the directory, a failure's note made there: listed only after either.
    if (!m_made->madeSinceLastLook())
        return;
    DIR *dir = opendir(m_directory.c_str());
    if (!dir)
        return;
    std::vector<std::unique_ptr<Ring>> found;
    while (dirent *entry = readdir(dir)) {
        if (endsWith(entry->d_name, agent::kNoRingSuffix)) {
            noteRingFailure(entry->d_name);
            continue;
        }
        if (!endsWith(entry->d_name, ".ring"))
            continue;
        const std::string path = m_directory + '/' + entry->d_name;
        const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
        // The file goes as soon as it is opened: the mapping keeps the ring, and nothing is left behind.
        unlink(path.c_str());
        if (fd < 0)
            continue;
        struct stat st {};
        auto ring = std::make_unique<Ring>();
        if (fstat(fd, &st) == 0 && uint64_t(st.st_size) > agent::kRingHeaderBytes) {
            void *mem = mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (mem != MAP_FAILED) {
                ring->header = static_cast<agent::RingHeader *>(mem);
                ring->mapped = uint64_t(st.st_size);
            }
        }
        ring->fd = fd;
        agent::RingHeader *h = ring->header;
        const bool valid = h && h->magic == agent::kRingMagic && h->version == agent::kRingVersion &&
                           h->dataBytes != 0 && (h->dataBytes & (h->dataBytes - 1)) == 0 &&
                           agent::kRingHeaderBytes + h->dataBytes <= ring->mapped;
        if (!valid) {
            ++m_counters.badRings;
            continue;
        }
        ring->data = reinterpret_cast<uint8_t *>(h) + agent::kRingHeaderBytes;
        ring->pid = h->pid;
        found.push_back(std::move(ring));
    }
    closedir(dir);
    // In the order the images made them, whatever order the directory lists them in: the rings of one process are its
    // images in turn (a shell that execs its command, its command), each read to its end before the next one starts.
    std::stable_sort(found.begin(), found.end(),
                     [](const auto &a, const auto &b) { return a->header->createdNs < b->header->createdNs; });
    for (auto &ring : found) {
        agent::RingHeader *h = ring->header;
        ring->image = ++m_images;
        h->stackCopyBytes.store(m_stackCopyBytes, std::memory_order_relaxed);
        h->checkEvery.store(m_checkEvery, std::memory_order_relaxed);
        // A walk only where the index's pages are had (a full file system: a copy of every stack).
        ring->indexed = m_tables && m_tables->addImage(ring->image, ring->pid, h, ring->fd);
        h->unwindMode.store(uint32_t(ring->indexed ? m_unwindMode : agent::UnwindMode::Copy),
                            std::memory_order_release);
        h->cpuStackCopyBytes.store(m_cpuStackCopyBytes, std::memory_order_relaxed);
        m_counters.cpuSignal = h->cpuSignal;
        h->sessionPid.store(uint32_t(getpid()), std::memory_order_relaxed);
        h->heartbeatNs.store(monotonicNs(), std::memory_order_release);
        ++m_counters.rings;
        reserveMore(*ring);
        m_rings.push_back(std::move(ring));
    }
}

// The agent reserved the first pages of its ring (agent::kAgentReservedBytes, and more if its records got there
// first); the session reserves more on its own time rather than the program's, as the ring fills: four times as
// much once its writer is past half of what it has (a short-lived process, a shell's child, never needs more). A file
// system that cannot give them (full) leaves the ring at what it has: its writer stops at the end of the reserved
// part until it or a later visit (once a second) reserves more, and the samples that find no room are counted as
// lost, as in a full ring.
void RingReader::reserveMore(Ring &ring)
{
    agent::RingHeader &h = *ring.header;
    const uint64_t reserved = h.reservedBytes.load(std::memory_order_acquire);
    if (reserved >= h.dataBytes) {
        close(std::exchange(ring.fd, -1));
        return;
    }
    // The writers go round their window (RingHeader::windowBytes): pages for it and as much again, for its growth, in
    // exact mode as at an interval (a process image that never needs its whole ring never holds its pages).
    const uint64_t window = std::clamp<uint64_t>(h.windowBytes.load(std::memory_order_relaxed), 1, h.dataBytes);
    if (std::min(h.head.load(std::memory_order_acquire), window) < reserved / 2)
        return;
    const uint64_t target = std::min({h.dataBytes, std::max<uint64_t>(reserved, 1) * 4, 2 * window});
    if (target <= reserved)
        return;
    if (fallocate(ring.fd, 0, off_t(agent::kRingHeaderBytes + reserved), off_t(target - reserved)) != 0 &&
        errno != EOPNOTSUPP) {
        ring.reserveAgainNs = monotonicNs() + 1'000'000'000;
        if (!ring.reserveFailed) {
            ring.reserveFailed = true;
            ++m_counters.ringsNotReserved;
            if (m_counters.ringNotReserved.empty())
                m_counters.ringNotReserved = "process " + std::to_string(ring.pid) + ": " + std::strerror(errno);
        }
        return;
    }
    // Only up: the agent may have reserved past it meanwhile.
    uint64_t seen = reserved;
    while (seen < target && !h.reservedBytes.compare_exchange_weak(seen, target, std::memory_order_acq_rel)) {}
}

namespace {

// The fields an allocation record carries copied or walked.
template <typename Ring, typename Record> void fillAllocation(AgentAllocation &a, const Ring &ring, const Record &r)
{
    a.image = ring.image;
    a.pid = ring.pid;
    a.tid = r.tid;
    a.timeNs = r.timeNs;
    a.address = r.address;
    a.size = r.size;
    a.heapBytes = r.heapBytes;
    a.threadAllocations = r.threadAllocations;
    a.threadBytes = r.threadBytes;
}

} // namespace

void RingReader::countCopy(uint32_t copiedBecause, bool checked)
{
    if (checked)
        ++m_counters.checked;
    else if (copiedBecause >= 1 && copiedBecause <= uint32_t(agent::kWalkFallbackCount))
        ++m_counters.walkFallbacks[copiedBecause - 1];
}

bool RingReader::walkedStack(Ring &ring, uint64_t hash, uint8_t flags, std::span<const uint64_t> pcs, AgentStack &stack,
                             PythonFramesView &python)
{
    ++m_counters.walked;
    m_counters.stackRefs += pcs.empty() ? 1 : 0;
    m_counters.leafWalks += (flags & agent::WalkFromLeaf) != 0 ? 1 : 0;
    if (ring.stacks.resolve(hash, flags, pcs, stack, python))
        return true;
    ++m_counters.unknownStackRefs;
    return false;
}

size_t RingReader::drain(Ring &ring, const RingSinks &sinks, uint64_t upToNs)
{
    agent::RingHeader &h = *ring.header;
    if (h.cpuClock != uint32_t(agent::CpuClock::NotChosen))
        m_cpuClock = agent::CpuClock(h.cpuClock);
    if (!ring.started) {
        ring.started = true;
        if (sinks.cpu)
            sinks.cpu->onImageStart(ring.image, ring.pid, h.parentPid);
        if (sinks.memory)
            sinks.memory->onImageStart(ring.image, ring.pid, h.parentPid);
        if (sinks.python)
            sinks.python->onPythonImage(ring.image, ring.pid);
    }
    const uint64_t mask = h.dataBytes - 1;
    m_counters.widestWindow =
        std::max<uint64_t>(m_counters.widestWindow, h.windowBytes.load(std::memory_order_relaxed));
    uint64_t tail = h.tail.load(std::memory_order_relaxed);
    size_t records = 0;
    ring.heldByTime = false;
    // A few records ahead of the one read, the blocks they allocate or free are named to the sink, whose look-ups
    // for them (a table of every live block, in exact mode far larger than the caches) then miss while it works on
    // the records before.
    uint64_t ahead = tail;
    const auto lookAhead = [&] {
        constexpr uint64_t kAheadBytes = 2048;
        while (sinks.memory && ahead - tail < kAheadBytes) {
            const auto *next = reinterpret_cast<const agent::RecordHeader *>(ring.data + (ahead & mask));
            const auto type = agent::RecordType(next->type.load(std::memory_order_acquire));
            const uint32_t bytes = next->bytes;
            if (type == agent::RecordType::Empty || bytes < sizeof(agent::RecordHeader) || bytes % 8 != 0 ||
                (ahead & mask) + bytes > h.dataBytes)
                return; // read (and judged) in order below
            if (type == agent::RecordType::Free && bytes >= sizeof(agent::FreeRecord))
                sinks.memory->willTouch(ring.image, reinterpret_cast<const agent::FreeRecord *>(next)->address);
            else if (type == agent::RecordType::AllocWalked && bytes >= sizeof(agent::WalkedAllocRecord))
                sinks.memory->willTouch(ring.image, reinterpret_cast<const agent::WalkedAllocRecord *>(next)->address);
            else if (type == agent::RecordType::Alloc && bytes >= sizeof(agent::AllocRecord))
                sinks.memory->willTouch(ring.image, reinterpret_cast<const agent::AllocRecord *>(next)->address);
            ahead += bytes;
        }
    };
    for (;;) {
        if (ahead < tail)
            ahead = tail;
        lookAhead();
        auto *record = reinterpret_cast<agent::RecordHeader *>(ring.data + (tail & mask));
        const auto type = agent::RecordType(record->type.load(std::memory_order_acquire));
        if (type == agent::RecordType::Empty)
            break;
        const uint32_t bytes = record->bytes;
        // A record the agent could not have written (a damaged ring): stop reading this ring.
        if (bytes < sizeof(agent::RecordHeader) || bytes % 8 != 0 || (tail & mask) + bytes > h.dataBytes) {
            ++m_counters.badRings;
            h.detached.store(1, std::memory_order_release);
            break;
        }
        // Every record but a padding carries its time after the header, the thread id and a 32-bit field. A padding's
        // body was never written: what lies there is a stale byte of an older lap, and read as a time it could hold
        // the ring at this record for good (in exact mode, the program waiting for room that never comes).
        if (type != agent::RecordType::Padding && bytes >= sizeof(agent::FreeRecord) &&
            reinterpret_cast<const agent::FreeRecord *>(record)->timeNs > upToNs) {
            ring.heldByTime = true;
            break;
        }
        if (type == agent::RecordType::Alloc && bytes >= sizeof(agent::AllocRecord)) {
            const auto *alloc = reinterpret_cast<const agent::AllocRecord *>(record);
            AgentAllocation a;
            a.python = pythonFrames(*record, alloc->python, bytes - uint32_t(sizeof(agent::AllocRecord)), ring.image);
            const uint32_t body = bytes - uint32_t(sizeof(agent::AllocRecord)) - uint32_t(a.python.frames.size_bytes());
            const uint32_t stackBytes = std::min<uint32_t>(alloc->stackBytes, body);
            fillAllocation(a, ring, *alloc);
            a.regs = std::span<const uint64_t>(alloc->regs, agent::kRegisterCount);
            a.stack = std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(alloc + 1), stackBytes);
            a.stackLimit = body;
            a.walk = checkedPcs(*record, alloc->walkedFrames, body, uint32_t(a.python.frames.size_bytes()));
            countCopy(alloc->copiedBecause, !a.walk.pcs.empty());
            if (!a.walk.pcs.empty())
                a.stackLimit -= uint32_t(a.walk.pcs.size_bytes());
            ++m_counters.allocations;
            if (sinks.memory)
                sinks.memory->onAllocation(a);
        } else if (type == agent::RecordType::Free && bytes >= sizeof(agent::FreeRecord)) {
            const auto *free = reinterpret_cast<const agent::FreeRecord *>(record);
            ++m_counters.frees;
            if (sinks.memory)
                sinks.memory->onFree(ring.image, ring.pid, free->tid, free->timeNs, free->address);
        } else if (type == agent::RecordType::Cpu && bytes >= sizeof(agent::CpuRecord)) {
            const auto *cpu = reinterpret_cast<const agent::CpuRecord *>(record);
            AgentCpuSample c;
            c.image = ring.image;
            c.pid = ring.pid;
            c.tid = cpu->tid;
            c.timeNs = cpu->timeNs;
            c.periodNs = cpu->periodNs;
            c.regs = std::span<const uint64_t>(cpu->regs, agent::kRegisterCount);
            c.python = pythonFrames(*record, cpu->python, bytes - uint32_t(sizeof(agent::CpuRecord)), ring.image);
            c.stackLimit = bytes - uint32_t(sizeof(agent::CpuRecord)) - uint32_t(c.python.frames.size_bytes());
            c.walk = checkedPcs(*record, cpu->walkedFrames, c.stackLimit, uint32_t(c.python.frames.size_bytes()));
            countCopy(cpu->copiedBecause, !c.walk.pcs.empty());
            c.stackLimit -= uint32_t(c.walk.pcs.size_bytes());
            c.stack = std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(cpu + 1),
                                               std::min<uint32_t>(cpu->stackBytes, c.stackLimit));
            ++m_counters.cpuSamples;
            if (sinks.cpu)
                sinks.cpu->onCpuSample(c);
        } else if (type == agent::RecordType::AllocWalked && bytes >= sizeof(agent::WalkedAllocRecord)) {
            const auto *alloc = reinterpret_cast<const agent::WalkedAllocRecord *>(record);
            AgentAllocation a;
            ++m_counters.allocations;
            a.python = pythonFrames(*record, alloc->python, bytes - uint32_t(sizeof(*alloc)), ring.image);
            const uint32_t walked = bytes - uint32_t(a.python.frames.size_bytes());
            if (walkedStack(ring, alloc->stackHash, alloc->flags, walkedPcs(*alloc, walked), a.walk, a.python)) {
                fillAllocation(a, ring, *alloc);
                if (sinks.memory)
                    sinks.memory->onAllocation(a);
            }
        } else if (type == agent::RecordType::CpuWalked && bytes >= sizeof(agent::WalkedCpuRecord)) {
            const auto *cpu = reinterpret_cast<const agent::WalkedCpuRecord *>(record);
            AgentCpuSample c;
            ++m_counters.cpuSamples;
            c.python = pythonFrames(*record, cpu->python, bytes - uint32_t(sizeof(*cpu)), ring.image);
            const uint32_t walked = bytes - uint32_t(c.python.frames.size_bytes());
            if (walkedStack(ring, cpu->stackHash, cpu->flags, walkedPcs(*cpu, walked), c.walk, c.python)) {
                c.image = ring.image;
                c.pid = ring.pid;
                c.tid = cpu->tid;
                c.timeNs = cpu->timeNs;
                c.periodNs = cpu->periodNs;
                if (sinks.cpu)
                    sinks.cpu->onCpuSample(c);
            }
        } else if (type == agent::RecordType::PythonCode && bytes >= sizeof(agent::PythonCodeRecord)) {
            const auto *code = reinterpret_cast<const agent::PythonCodeRecord *>(record);
            const auto *tail = reinterpret_cast<const uint8_t *>(code + 1);
            const size_t room = bytes - sizeof(agent::PythonCodeRecord);
            const agent::PythonCodeFacts &f = code->facts;
            if (sinks.python && uint64_t(f.nameBytes) + f.fileBytes + f.lineTableBytes <= room)
                sinks.python->onPythonCode(
                    ring.image, ring.pid, f,
                    std::span<const uint8_t>(tail, size_t(f.nameBytes) + f.fileBytes + f.lineTableBytes));
        } else if (type == agent::RecordType::Module && bytes >= sizeof(agent::ModuleRecord)) {
            const auto *module = reinterpret_cast<const agent::ModuleRecord *>(record);
            const size_t room = bytes - sizeof(agent::ModuleRecord);
            if (sinks.modules && module->pathBytes != 0 && module->pathBytes <= room && module->length != 0 &&
                module->start + module->length > module->start)
                sinks.modules->onImageModule(
                    ring.image, ring.pid, module->start, module->length, module->pgoff,
                    std::string_view(reinterpret_cast<const char *>(module + 1), module->pathBytes));
        } else if (type == agent::RecordType::Totals && bytes >= sizeof(agent::TotalsRecord)) {
            const auto *totals = reinterpret_cast<const agent::TotalsRecord *>(record);
            if (sinks.memory)
                sinks.memory->onTotals(ring.image, ring.pid, totals->tid, totals->threadAllocations,
                                       totals->threadBytes);
        } else if (type == agent::RecordType::Thread && bytes >= sizeof(agent::ThreadRecord)) {
            const auto *thread = reinterpret_cast<const agent::ThreadRecord *>(record);
            if (sinks.cpu)
                sinks.cpu->onThreadTimer(ring.image, ring.pid, thread->tid, thread->started != 0);
        } else if (type == agent::RecordType::Padding) {
            // To the ring's end: the writers went back to its start. Short of it: past where the lap before ended.
            ++((tail & mask) + bytes == h.dataBytes ? m_counters.laps : m_counters.detours);
        }
        // The whole record is cleared before the tail moves past it: a record of the next lap may start anywhere
        // in it, and its type must read Empty until its writer publishes it (not a byte of this one's stack). A
        // padding record's body was never written (it is the ring past the writers' window): its header only.
        std::memset(static_cast<void *>(record), 0,
                    type == agent::RecordType::Padding ? sizeof(agent::RecordHeader) : bytes);
        tail += bytes;
        h.tail.store(tail, std::memory_order_release);
        ++records;
    }
    return records;
}

size_t RingReader::poll(const RingSinks &sinks, uint64_t upToNs)
{
    scan();
    return visit(sinks, 0, upToNs);
}

size_t RingReader::pollProcess(const RingSinks &sinks, uint32_t pid, uint64_t createdBeforeNs)
{
    // Called back from inside a poll (a sink that handles an exec): that poll reads the rings in order already.
    if (m_visiting)
        return 0;
    if (createdBeforeNs == 0)
        return visit(sinks, pid, UINT64_MAX);
    scan();
    return visit(sinks, pid, UINT64_MAX, createdBeforeNs);
}

size_t RingReader::visit(const RingSinks &sinks, uint32_t onlyPid, uint64_t upToNs, uint64_t createdBeforeNs)
{
    if (m_visiting)
        return 0;
    m_visiting = true;
    struct Done {
        bool &flag;
        ~Done() { flag = false; }
    } done{m_visiting};
    double fill = 0;
    const uint64_t now = monotonicNs();
    if (m_tables)
        m_tables->poll();
    size_t records = 0;
    // Processes whose older image has records left that `upToNs` held back: their newer image waits for a later visit,
    // as its start would drop the map the older one's records need (a record never published, of a thread the exec
    // ended mid-write, holds nothing back).
    std::vector<uint32_t> held;
    for (size_t i = 0; i < m_rings.size();) {
        Ring &ring = *m_rings[i];
        if ((onlyPid != 0 && ring.pid != onlyPid) || ring.header->createdNs >= createdBeforeNs ||
            std::find(held.begin(), held.end(), ring.pid) != held.end()) {
            ++i;
            continue;
        }
        ring.header->heartbeatNs.store(now, std::memory_order_release);
        if (ring.fd >= 0 && now >= ring.reserveAgainNs)
            reserveMore(ring);
        // `finished` is read before draining: a ring that had finished is empty once drained.
        // An image ends when its agent says so (exit), when a newer ring of the same process appears (exec: the
        // old image's destructors never ran), or when the process is gone (killed, crashed, _exit).
        bool finished = ring.header->finished.load(std::memory_order_acquire) != 0;
        bool newer = false;
        for (size_t j = i + 1; j < m_rings.size() && !newer; ++j)
            newer = m_rings[j]->pid == ring.pid && m_rings[j]->header->createdNs > ring.header->createdNs;
        finished = finished || newer;
        if (!finished && kill(pid_t(ring.pid), 0) != 0 && errno == ESRCH)
            finished = true;
        fill = std::max(fill,
                        static_cast<double>(unreadBytes(*ring.header)) / static_cast<double>(ring.header->dataBytes));
        records += drain(ring, sinks, upToNs);
        const bool empty =
            ring.header->head.load(std::memory_order_acquire) == ring.header->tail.load(std::memory_order_relaxed);
        if (finished && empty) {
            if (sinks.memory)
                sinks.memory->onImageEnd(ring.image, ring.pid);
            addHeaderCounts(m_closed, ring.pid, *ring.header);
            if (m_tables)
                m_tables->removeImage(ring.image);
            m_rings.erase(m_rings.begin() + std::ptrdiff_t(i));
            continue;
        }
        if (newer && ring.heldByTime)
            held.push_back(ring.pid);
        ++i;
    }
    if (onlyPid == 0)
        m_lastFill = fill;
    return records;
}

} // namespace emberline::engine
