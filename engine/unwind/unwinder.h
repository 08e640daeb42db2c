#pragma once

#include "engine/unwind/process_map.h"

#include <cstdint>
#include <span>
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
};

// Unwinds a sampled user stack with libunwind's remote API: registers come from the sample, memory from the
// copied stack or from the mapped ELF files, unwind tables from each file's .eh_frame_hdr (read once, cached
// by the ElfCache). libunwind falls back to the frame-pointer chain where no unwind information exists.
//
// Thread: the session thread. One libunwind address space per target process, with libunwind's own
// per-IP cache, flushed when that process's memory map changes.
class Unwinder {
public:
    Unwinder();
    ~Unwinder();
    Unwinder(const Unwinder &) = delete;
    Unwinder &operator=(const Unwinder &) = delete;

    void unwind(const UnwindInput &input, UnwindOutput &out, size_t maxFrames = 512);
    // Frame-pointer walk over the copied stack, for when the DWARF walk stops short.
    void unwindFramePointers(const UnwindInput &input, UnwindOutput &out, size_t maxFrames = 512) const;
    void forgetProcess(int pid);

private:
    struct Space;
    Space &spaceFor(int pid, const ProcessMap *map);

    std::unordered_map<int, Space *> m_spaces;
};

} // namespace emberline::engine
