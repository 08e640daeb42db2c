// The image's module records (agent_protocol.h's ModuleRecord): the dynamic linker's list of loaded modules, one
// record for each executable segment, written as the image's ring is made (agent_core.cpp: writeModules), and for
// the modules loaded since, before a sample that may have run in one (agent_records.cpp: writeNewModules).
//
// Thread: writeModules on the thread that made the ring (the program's first, or a forked child's only), before it
// writes a sample; writeNewModules on any thread's allocation, one at a time (another thread's listing is not
// waited for). The dynamic linker's lock is taken by dl_iterate_phdr: never from the CPU sampler's signal handler.
// Nothing here allocates, and none of it is InternalWork: an allocation a signal handler makes meanwhile is recorded
// as any other (InternalWork leaves those out).

#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_writer.h"

#include <atomic>

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

namespace emberline::agent {
namespace {

// The program's own path: the dynamic linker names it "" (and the kernel's vDSO by its soname).
struct ModuleWalk {
    char program[512];
    size_t programBytes;
    uint64_t pageMask;
    uint32_t written;
    bool unwritten; // a segment found no room: the next listing looks again, whatever the loads count says
};

// The segments listed in this ring, by start address (open addressing; a full table lists again). A segment is listed
// once its record is written: one that found no room (a full ring) is written at the next listing.
constexpr uint32_t kListedSlots = 2048;
uint64_t g_listed[kListedSlots];
uint32_t g_listedCount = 0;
uint64_t g_loadsListed = 0; // the dynamic linker's loads and unloads (dlpi_adds + dlpi_subs) at the last listing
std::atomic<bool> g_listing{false};
ModuleWalk g_walk;

// Where the listed segment starting at `start` sits in g_listed, or its empty slot (a full table finds none: -1).
int32_t listedSlot(uint64_t start)
{
    const uint64_t key = start | 1; // page-aligned
    for (uint32_t at = uint32_t((key * 0x9E3779B97F4A7C15ull) >> 53) & (kListedSlots - 1), probes = 0;
         probes < kListedSlots; at = (at + 1) & (kListedSlots - 1), ++probes)
        if (g_listed[at] == key || g_listed[at] == 0)
            return int32_t(at);
    return -1;
}

// Where a segment not listed yet goes once its record is written; -1 when it was listed already.
int32_t slotToList(uint64_t start)
{
    if (g_listedCount >= kListedSlots / 2) { // full: list again from empty
        memset(g_listed, 0, sizeof g_listed);
        g_listedCount = 0;
    }
    const int32_t at = listedSlot(start);
    return at >= 0 && g_listed[at] != 0 ? -1 : at;
}

uint32_t g_pendingSequence = 0; // the sequence first seen unlisted, and when
uint64_t g_pendingSinceNs = 0;
constexpr uint64_t kGiveUpNs = 50'000'000;

bool writeSegment(uint64_t start, uint64_t length, uint64_t pgoff, const char *path, size_t pathBytes)
{
    const uint32_t bytes = uint32_t((sizeof(ModuleRecord) + pathBytes + 7) & ~size_t(7));
    AgentScope scope;
    auto *record = scope.reserve<ModuleRecord>(bytes, keptForFrees(), false);
    if (!record)
        return false;
    record->tid = currentThreadId();
    record->pathBytes = uint32_t(pathBytes);
    record->timeNs = nowNs();
    record->start = start;
    record->length = length;
    record->pgoff = pgoff;
    auto *tail = reinterpret_cast<char *>(record + 1);
    memcpy(tail, path, pathBytes);
    memset(tail + pathBytes, 0, bytes - sizeof(ModuleRecord) - pathBytes);
    scope.publish(RecordType::Module);
    return true;
}

int writeModule(dl_phdr_info *info, size_t, void *data)
{
    auto &walk = *static_cast<ModuleWalk *>(data);
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *path = name;
    size_t pathBytes = strnlen(name, 4096);
    if (pathBytes == 0) {
        path = walk.program;
        pathBytes = walk.programBytes;
    } else if (name[0] != '/') {
        // The vDSO (its soname), or a module opened by a relative name the session could not resolve: the vDSO is
        // named as the kernel's map names it, the other left to the session's read of the maps.
        if (strncmp(name, "linux-vdso.so", 13) != 0 && strncmp(name, "linux-gate.so", 13) != 0)
            return 0;
        path = "[vdso]";
        pathBytes = 6;
    }
    if (pathBytes == 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) &segment = info->dlpi_phdr[i];
        if (segment.p_type != PT_LOAD || (segment.p_flags & PF_X) == 0 || segment.p_memsz == 0)
            continue;
        const uint64_t address = uint64_t(info->dlpi_addr) + segment.p_vaddr;
        const uint64_t start = address & walk.pageMask;
        const uint64_t end = (address + segment.p_memsz + ~walk.pageMask) & walk.pageMask;
        const int32_t at = slotToList(start);
        if (at < 0)
            continue;
        if (!writeSegment(start, end - start, segment.p_offset & walk.pageMask, path, pathBytes)) {
            walk.unwritten = true;
            continue;
        }
        g_listed[at] = start | 1;
        ++g_listedCount;
        ++walk.written;
    }
    return 0;
}

// The modules loaded since the last listing (g_listing held).
void listLoadedSince()
{
    const uint64_t loads = linkerLoads();
    if (loads != g_loadsListed || g_walk.unwritten) {
        g_loadsListed = loads;
        g_walk.unwritten = false;
        dl_iterate_phdr(writeModule, &g_walk);
    }
}

int countLoads(dl_phdr_info *info, size_t, void *data)
{
    *static_cast<uint64_t *>(data) = info->dlpi_adds + info->dlpi_subs;
    return 1; // the first module says it for all
}

} // namespace

uint64_t linkerLoads()
{
    uint64_t loads = 0;
    dl_iterate_phdr(countLoads, &loads);
    return loads;
}

uint32_t writeModules()
{
    if (!g_ring)
        return 0;
    // The image's first thread, or a forked child's only one (whose parent may have been listing as it forked).
    g_listing.store(true, std::memory_order_relaxed);
    memset(g_listed, 0, sizeof g_listed);
    g_listedCount = 0;
    g_modulesListedSequence.store(0, std::memory_order_relaxed);
    g_pendingSequence = 0;
    const ssize_t n = readlink("/proc/self/exe", g_walk.program, sizeof g_walk.program - 1);
    g_walk.programBytes = n > 0 ? size_t(n) : 0;
    const long page = sysconf(_SC_PAGESIZE);
    g_walk.pageMask = ~(uint64_t(page > 0 ? page : 4096) - 1);
    g_walk.written = 0;
    g_walk.unwritten = false;
    g_loadsListed = linkerLoads();
    dl_iterate_phdr(writeModule, &g_walk);
    const uint32_t written = g_walk.written;
    g_listing.store(false, std::memory_order_release);
    return written;
}

void writeNewModules()
{
    if (!g_ring || g_walk.pageMask == 0 || g_listing.exchange(true, std::memory_order_acquire))
        return;
    listLoadedSince();
    g_listing.store(false, std::memory_order_release);
}

std::atomic<uint32_t> g_modulesListedSequence{0};

bool listModulesForIndex(uint64_t now)
{
    const ModuleIndex *index = moduleIndex(g_ring);
    const uint32_t sequence = index->sequence.load(std::memory_order_acquire);
    if (sequence == g_modulesListedSequence.load(std::memory_order_relaxed) || (sequence & 1) != 0 || sequence == 0)
        return true; // listed, or no index to walk with (the walk says so)
    if (g_walk.pageMask == 0 || g_listing.exchange(true, std::memory_order_acquire))
        return false;
    if (sequence != g_pendingSequence) {
        g_pendingSequence = sequence;
        g_pendingSinceNs = now;
    }
    listLoadedSince();
    // Every module the index tables, listed: a module the dynamic linker has mapped and not yet added to its list
    // waits (its code runs once it is added), as does one it never lists (a file mapped by hand) until kGiveUpNs.
    bool listed = true;
    const uint32_t count = index->count < kModuleSlots ? index->count : kModuleSlots;
    for (uint32_t i = 0; i < count && listed; ++i) {
        const int32_t at = listedSlot(index->entries[i].start);
        listed = at >= 0 && g_listed[at] != 0;
    }
    listed = listed && index->sequence.load(std::memory_order_acquire) == sequence;
    if (listed || now - g_pendingSinceNs > kGiveUpNs)
        g_modulesListedSequence.store(sequence, std::memory_order_relaxed);
    g_listing.store(false, std::memory_order_release);
    return listed;
}

} // namespace emberline::agent
