#include "engine/unwind/unwind_table_server.h"

#include "engine/common/clock.h"

#include "engine/unwind/process_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace emberline::engine {

namespace {

// Whether the agent can walk through the module with its table: a file's executable mapping whose addresses, less
// the load bias, are the module's own ELF addresses under 4 GiB (a row's start is 32 bits).
bool tableable(const MappedModule &m)
{
    if (!m.image || m.path.empty() || m.path[0] != '/' || m.end <= m.start)
        return false;
    const uint64_t bias = uint64_t(m.bias);
    if (m.start < bias || m.end - bias > (uint64_t(1) << 32))
        return false;
    // The bias came from the segment that holds the mapping's file offset; one that none holds left it at 0.
    const uint64_t first = m.start - bias;
    return std::any_of(m.image->segments().begin(), m.image->segments().end(), [&](const ElfImage::Segment &s) {
        return s.executable && first >= (s.vaddr & ~uint64_t(0xfff)) && first < s.vaddr + s.memsz;
    });
}

} // namespace

UnwindTableServer::UnwindTableServer(std::string agentDirectory)
    : m_directory(std::move(agentDirectory)), m_arenaPath(m_directory + '/' + agent::kUnwindArenaName), m_ids(1)
{
    // Made now rather than at the first table, so that a folder the session cannot write to is said at once. The
    // folder is the session's own: a file left there by nothing else is replaced.
    m_arenaFd = ::open(m_arenaPath.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (m_arenaFd < 0) {
        m_arenaStopped = true;
        m_stats.arenaStopped = true;
        m_stats.firstError = "cannot create the unwind tables' arena " + m_arenaPath + ": " + std::strerror(errno);
    }
    m_worker.start({.batch = [this](std::vector<uint64_t> &images) { indexImages(images); }});
}

UnwindTableServer::~UnwindTableServer()
{
    m_worker.stop(WorkerStop::Discard);
    if (m_arenaFd >= 0)
        ::close(m_arenaFd);
}

bool UnwindTableServer::addImage(uint64_t image, uint32_t pid, agent::RingHeader *ring, int ringFd)
{
    // The agent leaves the index's pages to the session: on a full file system (a tmpfs at its size) a page never
    // given ends whoever touches it first with SIGBUS, reading it too. Reserved through the file where the session
    // still holds it, else made through the session's mapping, which fails without a fault.
    bool reserved = true;
    if (ringFd >= 0) {
        reserved = ::fallocate(ringFd, 0, off_t(agent::kModuleIndexOffset), off_t(sizeof(agent::ModuleIndex))) == 0 ||
                   errno == EOPNOTSUPP;
    } else {
        reserved = ::madvise(reinterpret_cast<char *>(ring) + agent::kModuleIndexOffset, sizeof(agent::ModuleIndex),
                             MADV_POPULATE_WRITE) == 0;
    }
    const int error = errno;
    {
        std::lock_guard lock(m_mutex);
        if (!reserved) {
            noteError("process " + std::to_string(pid) +
                      ": cannot reserve its ring's module index: " + std::strerror(error) + "; its stacks are copied");
            return false;
        }
        Image &entry = m_images[image];
        entry = Image{};
        entry.pid = pid;
        entry.ring = ring;
        entry.queued = true;
    }
    m_worker.post(image);
    return true;
}

void UnwindTableServer::removeImage(uint64_t image)
{
    // The worker writes into a ring only while it holds the lock and finds the image here.
    std::lock_guard lock(m_mutex);
    m_images.erase(image);
}

void UnwindTableServer::poll()
{
    std::vector<uint64_t> changed;
    {
        std::lock_guard lock(m_mutex);
        for (auto &[id, image] : m_images) {
            const uint64_t missed = image.ring->moduleMissedNs.load(std::memory_order_relaxed);
            if (image.queued || (image.ring->mapsChanges.load(std::memory_order_acquire) == image.roundChanges &&
                                 missed == image.roundMissed))
                continue;
            image.roundMissed = missed;
            image.queued = true;
            changed.push_back(id);
        }
    }
    for (uint64_t id : changed)
        m_worker.post(id);
}

UnwindServerStats UnwindTableServer::stats() const
{
    std::lock_guard lock(m_mutex);
    UnwindServerStats stats = m_stats;
    for (const auto &[id, image] : m_images) {
        stats.imagesIndexed += image.indexed ? 1 : 0;
        stats.modulesIndexed += image.modules;
        stats.modulesLeftOut += image.leftOut;
    }
    return stats;
}

bool UnwindTableServer::imageOpen(uint64_t image) const
{
    std::lock_guard lock(m_mutex);
    return m_images.contains(image);
}

void UnwindTableServer::noteError(const std::string &message)
{
    if (m_stats.firstError.empty())
        m_stats.firstError = message;
}

void UnwindTableServer::indexImages(std::vector<uint64_t> &images)
{
    std::vector<uint64_t> done;
    for (uint64_t image : images) {
        if (m_worker.stopRequested())
            return;
        if (std::find(done.begin(), done.end(), image) != done.end())
            continue;
        done.push_back(image);
        indexImage(image);
    }
}

// One round for one image: its maps, its modules' tables (built or found), its index.
void UnwindTableServer::indexImage(uint64_t image)
{
    uint32_t pid = 0;
    uint64_t mapsChanges = 0;
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_images.find(image);
        if (it == m_images.end())
            return;
        // Read before the maps: a dlopen or dlclose while they are read moves it past what the index says it
        // follows, and the next poll() queues another round.
        mapsChanges = it->second.ring->mapsChanges.load(std::memory_order_acquire);
        it->second.roundChanges = mapsChanges;
        it->second.queued = false;
        pid = it->second.pid;
    }
    ProcessMap map(&m_elfs, &m_ids);
    // A process that has ended has no maps (or, as a zombie, empty ones): there is nothing to index, nor to say.
    if (!map.loadFromProc(int(pid)).ok() || map.modules().empty())
        return;
    std::vector<agent::ModuleEntry> entries;
    uint32_t leftOut = 0;
    // By start, as the index keeps them; the process map's mappings never overlap.
    for (const auto &[start, module] : map.modules()) {
        if (m_worker.stopRequested() || !imageOpen(image))
            return; // the server ends, or the ring went (its process ended): the tables built so far are kept
        if (module.path.empty() || module.path[0] != '/')
            continue; // the vDSO, anonymous code (JIT): no file to table
        const uint64_t offset = tableable(module) ? tableOffset(module) : UnwindModuleStats::kNotInArena;
        if (offset == UnwindModuleStats::kNotInArena || entries.size() == agent::kModuleSlots) {
            ++leftOut;
            continue;
        }
        entries.push_back(agent::ModuleEntry{module.start, module.end, uint64_t(module.bias), offset});
    }
    // With no table written (the arena refused them all) an index would say no more than its absence does. A
    // dlopen under way while the maps were read may have left its module out: the agent's walks that meet it stamp
    // RingHeader::moduleMissedNs, and poll() queues another round.
    if (!entries.empty())
        writeIndex(image, mapsChanges, entries, leftOut);
}

// The module's table's offset in the arena: built and written the first time the session meets the module, found
// after (by its file's image, or by build id when another file holds the same module). kNotInArena when it has none.
uint64_t UnwindTableServer::tableOffset(const MappedModule &module)
{
    if (const auto known = m_byImage.find(module.image.get()); known != m_byImage.end())
        return known->second.offset;
    // Once the arena refused a table nothing more is written: building another would only cost.
    if (m_arenaStopped)
        return UnwindModuleStats::kNotInArena;
    const uint64_t startNs = uint64_t(clockNs(CLOCK_MONOTONIC));
    auto built = m_tables.get(module.path);
    const uint64_t buildNs = uint64_t(clockNs(CLOCK_MONOTONIC)) - startNs;
    uint64_t offset = UnwindModuleStats::kNotInArena;
    if (!built.ok()) {
        UnwindModuleStats failed;
        failed.path = module.path;
        failed.buildId = module.image->buildId();
        failed.error = built.error().message;
        std::lock_guard lock(m_mutex);
        ++m_stats.tablesFailed;
        m_stats.modules.push_back(std::move(failed));
    } else if (built.value()->buildId == module.image->buildId()) {
        // (The cache keys the table by the build id of the file now at the path: a file replaced since the process
        // mapped it is another module, whose rows would mislead the walk.)
        const ModuleUnwindTable &table = *built.value();
        if (const auto it = m_offsets.find(&table); it != m_offsets.end()) {
            offset = it->second;
        } else {
            // A table this server has not met was built just now (the cache is the server's own).
            offset = appendToArena(table);
            m_offsets.emplace(&table, offset);
            noteBuilt(table, offset, buildNs);
        }
    }
    m_byImage.emplace(module.image.get(), KnownImage{module.image, offset});
    return offset;
}

void UnwindTableServer::noteBuilt(const ModuleUnwindTable &table, uint64_t offset, uint64_t buildNs)
{
    UnwindModuleStats stats;
    stats.path = table.path;
    stats.buildId = table.buildId;
    stats.arenaOffset = offset;
    stats.tableBytes = sizeof(agent::UnwindTableHeader) + table.rows.size() * sizeof(agent::UnwindRow);
    stats.buildNs = buildNs;
    stats.table = table.stats;
    std::lock_guard lock(m_mutex);
    ++m_stats.tablesBuilt;
    m_stats.tablesStored += table.stored ? 1 : 0;
    m_stats.buildNs += buildNs;
    m_stats.modules.push_back(std::move(stats));
}

// Appends a table to the arena; its offset, or kNotInArena when it does not fit in the agents' reserve or the file
// refused it.
uint64_t UnwindTableServer::appendToArena(const ModuleUnwindTable &table)
{
    if (m_arenaStopped)
        return UnwindModuleStats::kNotInArena;
    const std::vector<uint8_t> bytes = table.sharedBytes();
    static_assert(sizeof(agent::UnwindTableHeader) % 8 == 0 && sizeof(agent::UnwindRow) % 8 == 0,
                  "every table keeps the next one's offset a multiple of 8");
    if (m_arenaEnd + bytes.size() > agent::kUnwindArenaReserve) {
        std::lock_guard lock(m_mutex);
        ++m_stats.tablesLeftOut;
        return UnwindModuleStats::kNotInArena;
    }
    // Written, not mapped: a file system that is full says so here (ENOSPC) instead of with a SIGBUS.
    size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n =
            ::pwrite(m_arenaFd, bytes.data() + written, bytes.size() - written, off_t(m_arenaEnd + written));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : ENOSPC;
            // What the failed write took goes back to the file system, which the rings share.
            (void)!::ftruncate(m_arenaFd, off_t(m_arenaEnd));
            m_arenaStopped = true;
            std::lock_guard lock(m_mutex);
            m_stats.arenaStopped = true;
            noteError("cannot write the unwind tables' arena " + m_arenaPath + ": " + std::strerror(error) +
                      "; stacks are copied where a table is missing");
            return UnwindModuleStats::kNotInArena;
        }
        written += size_t(n);
    }
    const uint64_t offset = m_arenaEnd;
    m_arenaEnd += bytes.size();
    std::lock_guard lock(m_mutex);
    m_stats.arenaBytes = m_arenaEnd;
    return offset;
}

// The index under its sequence lock: odd while the entries change, even after; an agent that read across the
// write sees the sequence move and copies that sample's stack instead.
void UnwindTableServer::writeIndex(uint64_t image, uint64_t mapsChanges, const std::vector<agent::ModuleEntry> &entries,
                                   uint32_t leftOut)
{
    std::lock_guard lock(m_mutex);
    const auto it = m_images.find(image);
    if (it == m_images.end())
        return; // removed while its tables were built: its ring may be unmapped already
    agent::ModuleIndex &index = *agent::moduleIndex(it->second.ring);
    const uint32_t before = index.sequence.load(std::memory_order_relaxed);
    const uint32_t writing = before | 1u; // odd already only if a writer died mid-write: it stays odd until the end
    index.sequence.store(writing, std::memory_order_seq_cst);
    // Keeps the entries' stores after the odd sequence for an agent that reads them (with an acquire fence before
    // it reads the sequence again).
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(index.entries, entries.data(), entries.size() * sizeof(agent::ModuleEntry));
    index.count = uint32_t(entries.size());
    index.arenaBytes = m_arenaEnd;
    index.mapsChanges = mapsChanges;
    index.sequence.store(writing + 1, std::memory_order_release);
    Image &state = it->second;
    state.indexed = true;
    state.modules = uint32_t(entries.size());
    state.leftOut = leftOut;
    ++m_stats.indexWrites;
}

} // namespace emberline::engine
