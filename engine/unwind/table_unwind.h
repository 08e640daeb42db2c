#pragma once

#include "engine/agent/agent_unwind.h"
#include "engine/common/worker.h"
#include "engine/unwind/elf_image.h"
#include "engine/unwind/unwind_table_builder.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

struct MappedModule;
class ProcessMap;
struct UnwindInput;
struct UnwindOutput;

// The unwinder's fast path: walks a sample's copied stack with the modules' compact unwind tables (agent_unwind.h's
// rows, built once per module by unwind_table_builder and kept on disk by unwind_table_store), a binary search and
// at most two stack reads per frame, where libunwind interprets each frame's DWARF.
//
// It gives exactly what libunwind's walk of the same copy gives, or nothing: a walk that meets a frame the tables
// leave to libunwind (no table for the module, a fallback row: a DWARF expression, a signal frame, no FDE), a read
// outside the copy, or a frame that does not move up the stack, is abandoned and the whole sample goes to libunwind.
// So are the modules where the two could disagree: those libunwind has no .eh_frame_hdr for (it walks their frame
// pointers) and those whose table took rows from .debug_frame (libunwind reads .eh_frame only).
//
// A module's table is read from the store, or built, the first time a walk meets it (tens of milliseconds for a
// large library, once per module and session; the store makes it a read for the next sessions). Built aside, it is
// made on the unwinder's own builder thread, and walks that meet the module go to libunwind until the table is ready:
// the session thread never waits for a build.
//
// Thread: the owner's (the session thread); the builder thread touches only the queue of finished tables.
class TableUnwinder {
public:
    // `storeDirectory`: where tables are kept between sessions (unwind_table_store.h); "" keeps none. `buildAside`:
    // tables are made on a thread of their own (else on the caller's, at first use).
    explicit TableUnwinder(std::string storeDirectory, bool buildAside = true);
    ~TableUnwinder();
    TableUnwinder(const TableUnwinder &) = delete;
    TableUnwinder &operator=(const TableUnwinder &) = delete;

    // True when the tables walked the stack whole (to the outermost frame, or to maxFrames): `out` then holds what
    // Unwinder's libunwind walk gives. False when the sample is left to libunwind (`out` is then to be overwritten).
    bool unwind(const UnwindInput &input, UnwindOutput &out, size_t maxFrames);

    // Why walks were left to libunwind, as counted so far.
    enum class Fallback : uint8_t {
        NoTable,   // a pc outside every module, or in one without a table (or left to libunwind)
        Row,       // a fallback row: an expression, a signal frame, no FDE, register rules
        OutOfCopy, // the CFA or a saved register outside the copied stack (a copy too small, a damaged stack)
        BadFrame,  // a caller's frame not above its callee's
    };
    static constexpr size_t kFallbackKinds = 4;
    uint64_t fallbacks(Fallback why) const { return m_fallbacks[static_cast<size_t>(why)]; }

    size_t modulesTabled() const { return m_tabled; }
    size_t modulesUntabled() const { return m_tables.size() - m_tabled - m_pending; }
    uint64_t buildNs() const { return m_buildNs; }

    // Waits until every table asked for so far is ready, or `timeout` passed; whether they all are.
    bool waitForTables(std::chrono::milliseconds timeout);

private:
    struct Entry {
        std::shared_ptr<const ElfImage> image; // held, so that its address names no other image
        std::shared_ptr<const ModuleUnwindTable> table;
        agent::UnwindTable view; // empty: the module is left to libunwind
        bool pending = false;    // being built aside
    };
    // A module's table to make: what the builder thread needs, and what it found.
    struct Build {
        const ElfImage *key = nullptr;
        std::string path;
        std::string buildId;
        std::shared_ptr<const ModuleUnwindTable> table; // null: none
        uint64_t ns = 0;
    };
    const agent::UnwindTable *tableFor(const MappedModule &module);
    Entry makeEntry(const MappedModule &module);
    void make(Build &build) const; // any thread
    void adopt(Entry &entry, Build &build);
    void adoptBuilt(); // the tables the builder finished, into their entries
    // The row for a module-relative lookup address, found through the map and the module's table (null: none).
    bool findRow(const ProcessMap &map, uint64_t address, agent::UnwindRow &row);

    // The rows of the addresses met lately, by the address looked up and the map as it was (ProcessMap's generation
    // names its modules), so that the pcs a program samples again and again skip both binary searches.
    struct Slot {
        uint64_t address = 0;
        const ProcessMap *map = nullptr;
        uint64_t generation = 0;
        agent::UnwindRow row{};
    };
    static constexpr size_t kSlots = 4096;
    std::vector<Slot> m_slots = std::vector<Slot>(kSlots);

    // How much of the next copy to ask the cache for before walking: what the last whole walk read, and a little.
    static constexpr uint64_t kMinPrefetchBytes = 1024;
    static constexpr uint64_t kMaxPrefetchBytes = 16384;
    uint64_t m_prefetchBytes = 4096;

    std::string m_storeDirectory;
    std::unordered_map<const ElfImage *, Entry> m_tables;
    const ElfImage *m_lastImage = nullptr; // the module of the previous frame, looked up again most often
    const Entry *m_lastEntry = nullptr;
    std::array<uint64_t, kFallbackKinds> m_fallbacks{};
    size_t m_tabled = 0;
    size_t m_pending = 0;
    uint64_t m_buildNs = 0;

    const bool m_buildAside;
    std::mutex m_builtMutex;
    std::vector<Build> m_built;        // finished by the builder, not adopted yet (under m_builtMutex)
    std::atomic<uint64_t> m_builds{0}; // builds finished, ever
    uint64_t m_adopted = 0;            // of those, adopted
    Worker<Build> m_builder;           // last: stopped and joined before what its handler uses goes
};

} // namespace emberline::engine
