#pragma once

// Compact unwind tables and the walk over them: what the agent needs to unwind a stack in the program itself, in a
// signal handler if need be. The session builds a module's table from its .eh_frame/.debug_frame (engine/unwind's
// unwind_table_builder) and shares it read-only; the agent looks up each frame's row and steps to the caller.
//
// Part of the agent's protocol: the row layout and the kinds are read by the agent from tables the session wrote,
// so any change to them changes kUnwindTableVersion (as a change to the ring changes agent_protocol.h's
// kRingVersion).
//
// Plain C++ with the compiler's own headers only: no library call, no allocation, no lock, no exception. Every
// function here may run in a signal handler, and every memory read of the walk is checked against the thread's
// stack bounds before it is made.

#include <cstddef>
#include <cstdint>

namespace emberline::agent {

inline constexpr uint32_t kUnwindTableMagic = 0x57554d45; // "EMUW"
inline constexpr uint32_t kUnwindTableVersion = 1;

// What a row says about the addresses it covers. The first three are rules the walk follows; the rest are the
// reasons a frame there is left to the fallback (the stack copy, unwound by the session).
enum class UnwindKind : uint8_t {
    CfaRsp = 0, // CFA = RSP + cfaOffset; return address at CFA - 8
    CfaRbp = 1, // CFA = RBP + cfaOffset; return address at CFA - 8
    End = 2,    // the outermost frame (the return address is undefined: _start, a thread's start): the stack ends
    // Fallbacks:
    Expression = 3, // the CFA, the return address or RBP is a DWARF expression
    Signal = 4,     // a signal frame (the caller is the interrupted state, not a call)
    Plt = 5,        // a PLT entry (its FDE is an expression, or it has none)
    NoFde = 6,      // no FDE covers the addresses (hand-written code, a gap between functions, the table's end)
    Register = 7,   // the CFA is another register's, or RBP, RSP or the return address has a register rule
    Other = 8,      // an offset the row cannot hold, a return address not at CFA - 8, a row libdw could not read
};
inline constexpr int kUnwindKindCount = 9;

constexpr bool isFallback(UnwindKind kind)
{
    return static_cast<uint8_t>(kind) >= static_cast<uint8_t>(UnwindKind::Expression);
}

// One row: the rule for [start, the next row's start). Addresses are the module's own (ELF virtual addresses):
// the runtime address minus the load bias. Rows are sorted by start and a table always ends with a NoFde row, so
// that the last real row has an end. 8 bytes, so that a module of 100,000 rows is 800 KB shared by every process.
struct UnwindRow {
    uint32_t start;     // the first address the row covers (module-relative)
    uint16_t cfaOffset; // bytes added to the CFA's register (CfaRsp, CfaRbp)
    UnwindKind kind;
    int8_t rbpSlot; // 0: RBP is the caller's still; n < 0: the caller's RBP was saved at CFA + 8 * n
};
static_assert(sizeof(UnwindRow) == 8, "the row is part of the agent's protocol");

// A table as it is shared: this header, then `rowCount` rows. The session writes it; the agent checks it once
// (unwindTableFromBytes) before it walks with it.
struct UnwindTableHeader {
    uint32_t magic;   // kUnwindTableMagic
    uint32_t version; // kUnwindTableVersion
    uint32_t rowCount;
    uint32_t reserved;
};
static_assert(sizeof(UnwindTableHeader) % alignof(UnwindRow) == 0);

// A module's rows, as the walk sees them: not owned.
struct UnwindTable {
    const UnwindRow *rows = nullptr;
    uint32_t count = 0;
};

// The table a shared block holds; false (and an empty table) when its magic, version or size is not right.
inline bool unwindTableFromBytes(const void *bytes, size_t size, UnwindTable &table)
{
    table = {};
    if (!bytes || size < sizeof(UnwindTableHeader))
        return false;
    const auto *header = static_cast<const UnwindTableHeader *>(bytes);
    if (header->magic != kUnwindTableMagic || header->version != kUnwindTableVersion)
        return false;
    if ((size - sizeof(UnwindTableHeader)) / sizeof(UnwindRow) < header->rowCount)
        return false;
    table.rows = reinterpret_cast<const UnwindRow *>(static_cast<const uint8_t *>(bytes) + sizeof(UnwindTableHeader));
    table.count = header->rowCount;
    return true;
}

// The row that covers a module-relative address: the last row starting at or below it; null below the first row
// or past the table (the closing NoFde row covers everything above, so it is returned as such).
inline const UnwindRow *findUnwindRow(const UnwindTable &table, uint64_t address)
{
    if (table.count == 0 || address > UINT32_MAX || address < table.rows[0].start)
        return nullptr;
    uint32_t low = 0;
    uint32_t high = table.count; // the answer is in [low, high)
    while (high - low > 1) {
        const uint32_t mid = low + (high - low) / 2;
        if (table.rows[mid].start <= address)
            low = mid;
        else
            high = mid;
    }
    return &table.rows[low];
}

// The registers the walk follows from frame to frame.
struct UnwindRegs {
    uint64_t pc = 0;
    uint64_t sp = 0;
    uint64_t bp = 0;
};

// A thread's stack, [low, high), and the only memory the walk reads: the step checks every address against it
// before it reads, so that a corrupted frame pointer or a wrong row makes the walk stop instead of fault.
struct StackBounds {
    uint64_t low = 0;
    uint64_t high = 0;

    bool holds(uint64_t address, uint64_t bytes) const
    {
        return address >= low && address <= high && bytes <= high - address;
    }
};

// Reads a word from the thread's own stack (the agent's case: the stack is mapped and ours).
struct OwnStackReader {
    bool operator()(uint64_t address, uint64_t &value) const
    {
        // NOLINTNEXTLINE(performance-no-int-to-ptr): the walk reads the stack at addresses it computed
        __builtin_memcpy(&value, reinterpret_cast<const void *>(address), sizeof(value));
        return true;
    }
};

enum class UnwindStatus : uint8_t {
    Stepped,     // regs now hold the caller's frame
    End,         // the outermost frame (an End row, or a return address of 0): the stack is whole
    NoRow,       // no table, or no row, for the pc
    Fallback,    // the row is a fallback kind (see `kind`)
    OutOfBounds, // the CFA or a saved register lies outside the stack bounds
    BadFrame,    // the caller's frame would not be above this one (a loop)
};

struct UnwindStep {
    UnwindStatus status = UnwindStatus::NoRow;
    UnwindKind kind = UnwindKind::NoFde; // the row's kind, when a row was found
};

// One step from a frame to its caller by the row that covers its pc (found with findUnwindRow, or remembered).
// `read(address, value)` reads a stack word; every address is checked against `stack` first.
template <typename Read>
UnwindStep unwindStepWithRow(const UnwindRow &row, const StackBounds &stack, UnwindRegs &regs, Read &&read)
{
    UnwindStep step;
    step.kind = row.kind;
    if (row.kind == UnwindKind::End) {
        step.status = UnwindStatus::End;
        return step;
    }
    if (isFallback(row.kind)) {
        step.status = UnwindStatus::Fallback;
        return step;
    }
    const uint64_t base = row.kind == UnwindKind::CfaRsp ? regs.sp : regs.bp;
    const uint64_t cfa = base + row.cfaOffset;
    // The return address lies just below the CFA, and the caller's frame (from the CFA up) is on the stack too.
    if (cfa < base || !stack.holds(cfa - 8, 8)) {
        step.status = UnwindStatus::OutOfBounds;
        return step;
    }
    if (cfa <= regs.sp) {
        step.status = UnwindStatus::BadFrame;
        return step;
    }
    uint64_t pc = 0;
    uint64_t bp = regs.bp;
    if (!read(cfa - 8, pc)) {
        step.status = UnwindStatus::OutOfBounds;
        return step;
    }
    if (row.rbpSlot != 0) {
        const uint64_t slot = cfa - uint64_t(-int64_t(row.rbpSlot)) * 8;
        if (!stack.holds(slot, 8) || !read(slot, bp)) {
            step.status = UnwindStatus::OutOfBounds;
            return step;
        }
    }
    if (pc == 0) { // a zero return address ends a stack too (as libunwind reads it)
        step.status = UnwindStatus::End;
        return step;
    }
    regs = UnwindRegs{pc, cfa, bp};
    step.status = UnwindStatus::Stepped;
    return step;
}

// One step from a frame to its caller with the module's table. `bias` is the module's load bias (runtime address
// minus ELF virtual address). `firstFrame`: the interrupted (or current) frame, whose pc is the instruction about
// to run, is looked up at pc itself; a caller's pc is a return address, the instruction after its call, which may
// already belong to the next function or the next row: it is looked up at pc - 1.
template <typename Read>
UnwindStep unwindStep(const UnwindTable &table, uint64_t bias, bool firstFrame, const StackBounds &stack,
                      UnwindRegs &regs, Read &&read)
{
    const uint64_t lookup = (firstFrame ? regs.pc : regs.pc - 1) - bias;
    const UnwindRow *row = findUnwindRow(table, lookup);
    if (!row)
        return UnwindStep{};
    return unwindStepWithRow(*row, stack, regs, read);
}

// The walk's outcome: how many pcs it wrote and why it stopped.
struct UnwindWalk {
    uint32_t frames = 0;
    UnwindStep last; // Stepped when it stopped at maxFrames
};

// Walks from `regs` (the interrupted or current frame) to the outermost frame, at most maxFrames pcs, the first
// frame's own pc first. `find(pc, table, bias)` gives the table and load bias of the module holding pc (false: none
// is tabled). Stops at the first step that is not Stepped: a Fallback or NoRow result means the stack is not whole
// and its copy is needed.
template <typename Find, typename Read>
UnwindWalk unwindStack(Find &&find, const StackBounds &stack, UnwindRegs regs, uint64_t *pcs, uint32_t maxFrames,
                       Read &&read)
{
    UnwindWalk walk;
    while (walk.frames < maxFrames) {
        pcs[walk.frames] = regs.pc;
        const bool firstFrame = walk.frames == 0;
        ++walk.frames;
        UnwindTable table;
        uint64_t bias = 0;
        if (!find(firstFrame ? regs.pc : regs.pc - 1, table, bias)) {
            walk.last = UnwindStep{};
            return walk;
        }
        walk.last = unwindStep(table, bias, firstFrame, stack, regs, read);
        if (walk.last.status != UnwindStatus::Stepped)
            return walk;
    }
    return walk;
}

} // namespace emberline::agent
