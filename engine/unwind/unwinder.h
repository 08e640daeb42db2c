#pragma once

#include "engine/unwind/process_map.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

// The user registers a perf sample carries, in the order of kPerfRegsMask's bits.
enum PerfReg : int {
    RegAX,
    RegBX,
    RegCX,
    RegDX,
    RegSI,
    RegDI,
    RegBP,
    RegSP,
    RegIP,
    RegR8,
    RegR9,
    RegR10,
    RegR11,
    RegR12,
    RegR13,
    RegR14,
    RegR15,
    RegCount
};
// PERF_REG_X86_{AX..IP} (bits 0-8) and R8..R15 (bits 16-23): what DWARF unwinding can need on x86-64.
inline constexpr uint64_t kPerfRegsMask = 0x1ffull | (0xffull << 16);

struct UnwindInput {
    std::span<const uint64_t> regs; // RegCount values
    std::span<const uint8_t> stack; // copy of the user stack, starting at regs[RegSP]
    const ProcessMap *map = nullptr;
    int pid = 0;
};

// Where a walk ended.
enum class UnwindStop : uint8_t {
    Outermost,      // complete: the unwind info says the stack ends here
    StackCopyEnded, // the next frame lies above the copied stack (its CFA, or a read, past the copy's end)
    NoUnwindInfo,   // no unwind table covers the last pc
    MaxFrames,
    Other,
};

struct UnwindOutput {
    std::vector<uint64_t> ips; // leaf first; return addresses of callers are moved back by one byte, so they
                               // fall inside the call instruction (the right line and inline chain)
    bool complete = false;     // reached the outermost frame (CFI says the stack ends here)
    bool usedFramePointers = false;
    UnwindStop stop = UnwindStop::Other;
    // StackCopyEnded: bytes above the sampled stack pointer the walk tried to reach (a lower bound of the copy
    // the whole stack needs); 0 otherwise.
    uint64_t stackNeeded = 0;
    // Bytes above the sampled stack pointer that the walk read from the copied stack: what this stack used of
    // the copy (for a complete walk, the copy it needed).
    uint64_t stackUsed = 0;
    bool byTables = false; // the module tables walked it (TableUnwinder), not libunwind
};

struct UnwinderOptions {
    // Walk with the modules' compact unwind tables first, libunwind only where they cannot finish (TableUnwinder).
    // Off: libunwind alone. The default is on unless EMBERLINE_UNWIND_TABLES=off (or 0).
    bool tables = true;
    // Where the tables are kept between sessions (unwind_table_store.h); "" keeps none.
    std::string storeDirectory;
    // A module's table is read or built on a thread of its own, and the stacks that meet the module go to libunwind
    // until it is ready, so that a large library's build (tens of milliseconds) never holds up the session thread
    // while the kernel's rings fill. Off: built at first use, on the caller's thread (for comparisons that need the
    // tables from the first sample on).
    bool buildAside = true;

    static UnwinderOptions fromEnvironment();
};

// What the unwinder did, since it was made.
struct UnwinderStats {
    uint64_t tableWalks = 0;        // stacks the tables walked whole
    uint64_t tableFallbacks = 0;    // stacks the table walk left to libunwind; why:
    uint64_t fallbackNoTable = 0;   // a frame in no module, or in one without a table
    uint64_t fallbackRow = 0;       // a fallback row (expression, signal frame, no FDE, register rules)
    uint64_t fallbackOutOfCopy = 0; // the next frame outside the copied stack
    uint64_t fallbackBadFrame = 0;  // a caller's frame not above its callee's
    uint64_t libunwindWalks = 0;    // stacks libunwind walked (the fallbacks, and every stack with tables off)
    uint64_t modulesTabled = 0;     // modules the table walk has a table for
    uint64_t modulesUntabled = 0;
    uint64_t tableBuildNs = 0; // reading and building the tables
};

class TableUnwinder;

// Unwinds a sampled user stack: with the modules' compact unwind tables where they walk it whole (TableUnwinder, the
// same stack at a fraction of the cost), else with libunwind's remote API: registers come from the sample, memory from
// the copied stack or from the mapped ELF files, unwind tables from each file's .eh_frame_hdr (read once, cached by the
// ElfCache). libunwind falls back to the frame-pointer chain where no unwind information exists.
//
// Thread: the session thread. One libunwind address space per target process, with libunwind's own
// per-IP cache, flushed when that process's memory map changes.
class Unwinder {
public:
    Unwinder(); // options from the environment
    explicit Unwinder(const UnwinderOptions &options);
    ~Unwinder();
    Unwinder(const Unwinder &) = delete;
    Unwinder &operator=(const Unwinder &) = delete;

    void unwind(const UnwindInput &input, UnwindOutput &out, size_t maxFrames = 512);
    // Frame-pointer walk over the copied stack, for when the DWARF walk stops short.
    void unwindFramePointers(const UnwindInput &input, UnwindOutput &out, size_t maxFrames = 512) const;
    void forgetProcess(int pid);
    bool tablesOn() const { return m_tables != nullptr; }
    // Waits until the tables the walks asked for so far are built (UnwinderOptions::buildAside), at most `timeout`;
    // whether they are.
    bool waitForTables(std::chrono::milliseconds timeout);
    UnwinderStats stats() const;

private:
    struct Space;
    Space &spaceFor(int pid, const ProcessMap *map);

    void unwindWithLibunwind(const UnwindInput &input, UnwindOutput &out, size_t maxFrames);

    std::unordered_map<int, Space *> m_spaces;
    std::unique_ptr<TableUnwinder> m_tables; // null: libunwind alone
    UnwinderStats m_stats;
};

} // namespace emberline::engine
