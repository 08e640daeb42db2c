#pragma once

// How the session hands the agent its unwind tables (agent_unwind.h's rows), and what the agent tells back: part of
// the agent's protocol, versioned with the ring (agent_protocol.h's kRingVersion).
//
// - The arena. One file per session, kUnwindArenaName in the agent folder: the tables of every module the session
//   tabled for any process image, each written once (a module shared by many processes, keyed by its build id, is
//   built and written once), one after another, each an UnwindTableHeader and its rows at an offset that is a
//   multiple of 8. The session only appends; a table's bytes are written before any index names them. The agent maps
//   the file read-only once per process image, kUnwindArenaReserve bytes of address space, and reads only below the
//   index's arenaBytes (the file always holds that much).
// - The index. In each ring (at kModuleIndexOffset), the tabled modules of that process image: for each, its
//   executable range, its load bias and where its table starts in the arena, sorted by start. The session is its
//   only writer and writes it as a sequence lock: `sequence` odd while it writes, even after; a walk that read it
//   across a change (sequence moved, or odd) is not trusted and the sample takes the copy.
// - Changes. The agent counts the program's dlopen and dlclose calls in RingHeader::mapsChanges, as each begins (the
//   hooks pass the call on as a tail call: glibc's dlopen reads its caller's return address for the caller's
//   search path); the session reads the process's maps again when it moved and says which count its index follows
//   (ModuleIndex::mapsChanges). While they differ, the agent walks nothing and copies: an unloaded module's
//   addresses may be another's now. A module the session's read of the maps came too early for (the dlopen was
//   still under way) shows up as a pc in no tabled module: the agent stamps RingHeader::moduleMissedNs, and the
//   session reads the maps again.
//
// Plain C++ with the compiler's own headers only, as agent_protocol.h.

#include <atomic>
#include <cstdint>

namespace emberline::agent {

inline constexpr const char *kUnwindArenaName = "unwind.tables";
inline constexpr uint64_t kUnwindArenaReserve = uint64_t(1) << 30; // address space each process image maps for it

// The tabled modules a process image's index holds at most (a process with more walks what it can: a pc in a module
// left out falls back to the copy).
inline constexpr uint32_t kModuleSlots = 1024;

struct ModuleEntry {
    uint64_t start;       // the module's executable mapping, [start, end), in the process
    uint64_t end;         //
    uint64_t bias;        // runtime address minus the ELF virtual address (the table's rows are the latter)
    uint64_t tableOffset; // the table's UnwindTableHeader in the arena
};
static_assert(sizeof(ModuleEntry) == 32);

struct alignas(64) ModuleIndex {
    std::atomic<uint32_t> sequence; // odd while the session writes the index
    uint32_t count;                 // entries in use, sorted by start, not overlapping
    uint64_t arenaBytes;            // the arena's bytes the entries' tables lie in (it only grows)
    uint64_t mapsChanges;           // the RingHeader::mapsChanges the entries follow
    uint64_t reserved[5];
    ModuleEntry entries[kModuleSlots];
};
static_assert(sizeof(ModuleIndex) == 64 + 32 * kModuleSlots);

// Why a sample's stack was copied instead of walked (AllocRecord::copiedBecause, CpuRecord's), for the health view. The
// row kinds a walk stopped at come first, in agent_unwind.h's UnwindKind order from Expression on.
enum class WalkFallback : uint8_t {
    Expression = 0,  // a DWARF expression rule
    Signal = 1,      // a signal frame
    Plt = 2,         // a PLT entry
    NoFde = 3,       // code no FDE covers
    Register = 4,    // a rule on another register
    Other = 5,       // a rule the row cannot hold
    NoModule = 6,    // a pc in no tabled module: JIT code, the vDSO, a module mapped without dlopen, not tabled yet
    OutOfBounds = 7, // a frame outside the thread's stack (a signal's alternate stack, a switched stack, a corrupt
                     // frame pointer)
    BadFrame = 8,    // a caller's frame not above its callee's (a loop)
    NotReady = 9,    // no index or arena yet, the program's modules changed since the index, the thread's stack
                     // bounds not known yet
    Disabled = 10,   // the session asked for copies only (RingHeader::unwindMode)
};
inline constexpr int kWalkFallbackCount = 11;

// RingHeader::unwindMode, set by the session: how the agent takes its samples' stacks.
enum class UnwindMode : uint32_t {
    Copy = 0, // copy every stack (the session unwinds them)
    Walk = 1, // walk with the tables, copy where the walk cannot go
};

} // namespace emberline::agent
