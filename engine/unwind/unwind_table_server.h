#pragma once

#include "engine/agent/agent_protocol.h"
#include "engine/common/worker.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/unwind_table_builder.h"
#include "engine/unwind/unwind_table_store.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

struct MappedModule;

// One module the server met, for the health view: its table and what it cost, or why it has none.
struct UnwindModuleStats {
    static constexpr uint64_t kNotInArena = UINT64_MAX;

    std::string path;
    std::string buildId;
    std::string error;                  // why the module has no table (empty: it has one)
    uint64_t arenaOffset = kNotInArena; // where its table lies in the arena (kNotInArena: not written)
    uint64_t tableBytes = 0;            // the table as the agent reads it (header and rows)
    uint64_t buildNs = 0;
    UnwindTableStats table; // rows and bytes by kind, coveredShare()
};

struct UnwindServerStats {
    uint64_t tablesBuilt = 0;   // modules whose table was built (each once, whatever the processes sharing it)
    uint64_t tablesStored = 0;  // of those, read from the tables earlier sessions kept (unwind_table_store.h)
    uint64_t tablesFailed = 0;  // modules whose table could not be built (modules[].error says why)
    uint64_t tablesLeftOut = 0; // tables built but not written: past agent::kUnwindArenaReserve
    uint64_t arenaBytes = 0;
    uint64_t buildNs = 0; // the time spent building tables, in total
    uint64_t indexWrites = 0;
    // Over the open images: those with an index, the modules their indexes hold, and the executable mappings of
    // files their indexes leave out (no table, an address past 4 GiB in the module, no slot left).
    uint64_t imagesIndexed = 0;
    uint64_t modulesIndexed = 0;
    uint64_t modulesLeftOut = 0;
    // The arena could not be made or written (a full file system): no table is added from then on, and the indexes
    // name only the tables written before.
    bool arenaStopped = false;
    // The first problem of the server itself (the arena, a ring's index pages), not of a module.
    std::string firstError;
    std::vector<UnwindModuleStats> modules; // in the order they were met
};

// Keeps the module index of every process image's ring (agent_tables.h) filled, so that the agent can walk its
// stacks with the session's unwind tables: reads the process's executable mappings from /proc/PID/maps, builds each
// module's table once for the session (UnwindTableCache, keyed by build id: the C library is built once for every
// process), appends each table once to the arena file in the agent folder, and then writes the image's index. An
// image is indexed again when the agent counts a dlopen or dlclose (RingHeader::mapsChanges) that its index does not
// follow.
//
// Order of writes, which the agent relies on: a table's bytes are in the arena before any index names them; an index
// is written under its sequence lock and says which mapsChanges it follows, read before the maps were (a change
// during the read leaves the index behind, and poll() queues another round).
//
// Thread: addImage, removeImage, poll and stats on the session thread (the one that owns the rings); the building,
// the arena's writes and the indexes' writes on the server's own worker thread. The worker writes into a ring only
// under the server's lock and after checking that the image is still there, so a ring may be unmapped as soon as
// removeImage returned.
class UnwindTableServer {
public:
    // Makes the arena file (agent::kUnwindArenaName in `agentDirectory`) now; a failure is in stats().firstError and
    // leaves every index unwritten (the agent copies its stacks).
    explicit UnwindTableServer(std::string agentDirectory);
    ~UnwindTableServer(); // stops the worker after the table it is building, and joins it
    UnwindTableServer(const UnwindTableServer &) = delete;
    UnwindTableServer &operator=(const UnwindTableServer &) = delete;

    // A ring of process `pid` was found: `ring` is the session's read-write shared mapping of it (kRingHeaderBytes
    // at least), `ringFd` its file (-1: not known), used here only, to reserve the index's pages before anything is
    // written there (a full tmpfs gives an error, not a SIGBUS). The image is queued for indexing; never blocks.
    // False when the index's pages could not be had: the image must not walk (its agent's first look at the index
    // would end the program with SIGBUS).
    bool addImage(uint64_t image, uint32_t pid, agent::RingHeader *ring, int ringFd);
    // The ring is about to be unmapped: once this returns the worker never touches it again (it waits for an index
    // write under way, never for a build).
    void removeImage(uint64_t image);
    // Queues every image whose process's modules changed since its index (RingHeader::mapsChanges moved). Cheap:
    // a load per open ring; call it on each visit of the rings.
    void poll();
    UnwindServerStats stats() const;
    // Whether the worker had nothing queued and nothing under way within `timeout` (tests; an orderly end).
    bool waitIdle(std::chrono::milliseconds timeout) { return m_worker.waitIdle(timeout); }
    const std::string &arenaPath() const { return m_arenaPath; }

private:
    struct Image {
        uint32_t pid = 0;
        agent::RingHeader *ring = nullptr;
        uint64_t roundChanges = UINT64_MAX; // the mapsChanges the latest round started from
        uint64_t roundMissed = 0;           // the RingHeader::moduleMissedNs the latest round was queued for
        bool queued = false;                // posted to the worker, its round not started yet
        bool indexed = false;
        uint32_t modules = 0; // in its index
        uint32_t leftOut = 0; // executable file mappings its index leaves out
    };
    void indexImages(std::vector<uint64_t> &images);
    void indexImage(uint64_t image);
    uint64_t tableOffset(const MappedModule &module);
    uint64_t appendToArena(const ModuleUnwindTable &table);
    void noteBuilt(const ModuleUnwindTable &table, uint64_t offset, uint64_t buildNs);
    bool imageOpen(uint64_t image) const;
    void writeIndex(uint64_t image, uint64_t mapsChanges, const std::vector<agent::ModuleEntry> &entries,
                    uint32_t leftOut);
    void noteError(const std::string &message); // under m_mutex

    const std::string m_directory;
    const std::string m_arenaPath;

    // The worker's own (the arena's fd is made before the worker starts and closed after it ended).
    int m_arenaFd = -1;
    uint64_t m_arenaEnd = 0; // bytes written; the next table's offset (a multiple of 8)
    bool m_arenaStopped = false;
    ElfCache m_elfs;
    ModuleIds m_ids;
    UnwindTableCache m_tables{m_elfs, unwindTableStoreDirectory()};
    // Where each table went (kNotInArena: built, not written), and each file's table: a module is looked at once.
    struct KnownImage {
        std::shared_ptr<const ElfImage> image; // held, so that its address names no other image
        uint64_t offset = UnwindModuleStats::kNotInArena;
    };
    std::unordered_map<const ModuleUnwindTable *, uint64_t> m_offsets;
    std::unordered_map<const ElfImage *, KnownImage> m_byImage;

    mutable std::mutex m_mutex; // guards m_images, m_stats, and every write into a ring
    std::unordered_map<uint64_t, Image> m_images;
    UnwindServerStats m_stats;

    Worker<uint64_t> m_worker{{"unwind tables"}}; // last: it stops before what it uses goes
};

} // namespace emberline::engine
