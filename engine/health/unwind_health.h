#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// Why a stack stopped short of main or a thread's start (or, for FramePointers, how a stack that DWARF could
// not finish was completed).
enum class UnwindCause : uint8_t {
    StackCopyTooSmall, // the walk reached the end of the copied stack: the frames above were not copied
    NoUnwindInfo,      // the code's file has no unwind table (.eh_frame) for the address, and no frame chain
    JitOrAnonymous,    // code outside any file (JIT, anonymous executable memory)
    FileMissing,       // the mapped file is gone or was replaced on disk, so its unwind tables cannot be read
    FramePointers,     // not a failure: DWARF stopped here and the frame-pointer chain finished the stack
    Other,             // the walk broke for another reason (a damaged stack, code the unwinder misreads, a return
                       // address that no mapping holds)
};
inline constexpr size_t kUnwindCauseCount = 6;

// Largest user stack copy perf takes (SessionConfig's limit).
inline constexpr uint32_t kMaxStackCopyBytes = 65000;

// Counters of one module (one ModuleIds id), kept by the sampling pipeline per sample without allocating.
struct ModuleUnwindCounters {
    uint64_t samples = 0;    // stacks unwound (samples and off-CPU switches) with a frame in the module
    uint64_t incomplete = 0; // incomplete stacks whose outermost frame is in the module
    std::array<uint64_t, kUnwindCauseCount> causes{};
    uint64_t neededStackBytes = 0; // the largest stack copy a cut-short stack needed, as far as known
    bool neededExact = false;      // it is the whole stack's size (the main thread's), not how far a walk reached
    uint64_t lastSample = 0;       // the pipeline's sample serial that counted it last (one count per sample)
};

// What a module id stands for, registered once per id.
struct ModuleUnwindInfo {
    std::string path; // "" for addresses no mapping holds
    std::string buildId;
    bool hasUnwindTable = false;
    bool fileMissing = false;
    bool anonymous = false; // no file: JIT or anonymous memory
};

// The sampling pipeline's counters as of a flush (cumulative over the session), indexed by module id.
struct UnwindCounters {
    uint64_t samples = 0;
    uint64_t incomplete = 0;
    uint32_t stackBytes = 0;       // the user stack copy asked for now (else the largest a sample carried)
    bool stackCopyLearned = false; // the copy is learned from the stacks (it grows when they are cut short)
    // Stacks with kernel frames: from the kernel's own callchain (CPU samples taken in the kernel, and context
    // switches: where the thread waits), named under [kernel.kallsyms]; or CPU samples in the kernel without a
    // chain (a single [kernel] frame).
    // The agent's own walks checked against the session's unwind of the same sample's copy (one in
    // RingHeader::checkEvery): the checks, those whose stacks differ, and those where the walk went further than
    // the copy's unwind (a copy too small) and agreed up to there.
    uint64_t walkChecks = 0;
    uint64_t walkMismatches = 0;
    uint64_t walkLonger = 0;
    // The copied stacks of CPU samples the session unwound: walked whole by the modules' unwind tables, or by
    // libunwind (the table walk could not finish them, or it is off: EMBERLINE_UNWIND_TABLES=off).
    uint64_t tableWalks = 0;
    uint64_t libunwindWalks = 0;
    uint64_t kernelSamples = 0;
    uint64_t kernelUnnamedSamples = 0;
    std::vector<ModuleUnwindCounters> byModule;
    std::vector<ModuleUnwindInfo> modules;
};

enum class SymbolStatus : uint8_t { Unknown, FullDwarf, SymbolTable, None };
enum class SymbolSource : uint8_t { None, InFile, BuildId, Debuglink, Debuginfod };

// Where a module's debug file stands with debuginfod (DEBUGINFOD_URLS), as of one flush.
// NotFound is the servers' plain answer that they do not have the file; Failed is everything that went wrong.
enum class DebuginfodState : uint8_t { NotAsked, Waiting, Downloading, Found, NotFound, Failed };

struct DebuginfodStatus {
    DebuginfodState state = DebuginfodState::NotAsked;
    int64_t bytes = 0;      // Downloading: received so far
    int64_t totalBytes = 0; // Downloading: the size the server announced, 0 when it did not say
    std::string path;       // Found: the checked debug file in libdebuginfod's cache
    std::string error;      // Failed: why, in words (server down, timed out, not found, not a debug file...)
};

// How a module's names were found, as the symbolizer saw the file.
struct ModuleSymbols {
    SymbolStatus status = SymbolStatus::Unknown;
    SymbolSource source = SymbolSource::None;
};

// One row of the health view: a module, how its stacks ended, its symbols, and the fix to try.
struct ModuleHealth {
    std::string path; // "[unknown]" for addresses outside every mapping
    std::string buildId;
    uint64_t samples = 0;
    uint64_t incomplete = 0;
    double incompleteShare = 0; // of all incomplete stacks, those ending here (0..1)
    std::array<uint64_t, kUnwindCauseCount> causes{};
    bool hasCause = false;
    UnwindCause cause = UnwindCause::Other; // the most frequent (FramePointers only when nothing failed)
    ModuleSymbols symbols;
    DebuginfodStatus debuginfod;         // its debug file's download, when one was asked
    uint32_t suggestedStackBytes = 0;    // for StackCopyTooSmall: the copy that would have sufficed (0: unknown)
    bool suggestionIsLowerBound = false; // the stacks may need more: only how far their walks reached is known
    std::string causeText;
    std::string symbolText;
    std::string fix;
};

// The unwind and symbol health of a session as of one flush: per module, worst first, and the faults met
// (bad perf maps, unreadable kallsyms, a replaced binary...), each a line for the user. Immutable once built;
// travels in the Flush.
struct UnwindHealth {
    uint64_t samples = 0;
    uint64_t incomplete = 0;
    uint32_t stackBytes = 0;
    bool stackCopyLearned = false;
    // The in-process agent's own stack walks checked against the session's unwind of a copy (UnwindCounters').
    uint64_t walkChecks = 0;
    uint64_t walkMismatches = 0;
    // The copied stacks unwound by the modules' tables and by libunwind (UnwindCounters').
    uint64_t tableWalks = 0;
    uint64_t libunwindWalks = 0;
    std::vector<ModuleHealth> modules;
    std::vector<std::string> faults;
    std::vector<std::string> notes; // what the user may want to know and need not act on (the CPython found)
};

std::string_view unwindCauseName(UnwindCause cause);
std::string_view symbolStatusName(SymbolStatus status);
std::string_view symbolSourceName(SymbolSource source);
// "debuginfod: downloading 1.2 of 3.4 MB", "debuginfod: failed: ..."; "" when nothing was asked.
std::string debuginfodStatusText(const DebuginfodStatus &status);
// The stack copy to suggest for stacks seen to need `neededBytes`: rounded up to 4 KiB, at most perf's limit.
uint32_t suggestedStackCopy(uint64_t neededBytes, uint32_t currentBytes);

struct UnwindHealthContext {
    bool debuginfodConfigured = false; // DEBUGINFOD_URLS is set
    // The kernel's row: whether /proc/kallsyms gave the kernel's function names, or why not (kptr_restrict, no
    // permission); and why the kernel's callchain is not recorded, when it is not.
    bool kernelSymbolsRead = false;
    std::string kernelSymbolsProblem;
    std::string kernelFramesProblem;
};

// The name of the kernel's row, as perf names the kernel's mapping; "[kernel]" when its stacks are not recorded.
inline constexpr std::string_view kKernelHealthRow = "[kernel.kallsyms]";
inline constexpr std::string_view kKernelUnnamedHealthRow = "[kernel]";

// Builds the view's rows from the pipeline's counters, each module's symbols and its debug file's download
// (both parallel to counters.modules; missing entries are Unknown and not asked). Modules without samples are
// left out. Samples taken in the kernel make a row of their own, with how its frames were named.
UnwindHealth buildUnwindHealth(const UnwindCounters &counters, const std::vector<ModuleSymbols> &symbols,
                               std::vector<std::string> faults, const UnwindHealthContext &context,
                               const std::vector<DebuginfodStatus> &debuginfod = {});

// The health as lines for `emberline record`'s summary (without a prefix): the modules where stacks end or
// names are missing, at most `maxModules` of them, then every fault.
std::vector<std::string> describeUnwindHealth(const UnwindHealth &health, size_t maxModules = 8);

} // namespace emberline::engine
