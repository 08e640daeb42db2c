#pragma once

#include "engine/agent/agent_unwind.h"

#include <array>
#include <cstdint>
#include <vector>

namespace emberline::engine {

// What a module's table holds and what it leaves to the fallback. Bytes are addresses covered (module-relative).
struct UnwindTableStats {
    uint64_t executableBytes = 0; // the module's executable sections (.init, .plt*, .text, .fini, ...)
    uint64_t coveredBytes = 0;    // of those, the bytes under rows the walk follows (CfaRsp, CfaRbp, End)
    uint32_t fdes = 0;            // FDEs read from .eh_frame and .debug_frame
    uint32_t debugFrameFdes = 0;  // of those, .debug_frame's that filled addresses .eh_frame left uncovered
    uint32_t unreadFdes = 0;      // entries libdw refused, or FDEs whose addresses could not be decoded
    uint32_t dwarfRows = 0;       // the rows libdw gave, before equal neighbours were merged
    uint32_t overlaps = 0;        // rows cut short or dropped because an earlier FDE covered their addresses
    uint64_t pltBytes = 0;        // lazy-binding PLT entries tabled from the linker's PLT expression (two rows each)
    std::array<uint32_t, agent::kUnwindKindCount> rows{};  // the table's rows by kind (the closing row not counted)
    std::array<uint64_t, agent::kUnwindKindCount> bytes{}; // the addresses those rows cover, by kind

    double coveredShare() const { return executableBytes ? double(coveredBytes) / double(executableBytes) : 0.0; }
};

// A rule over [start, end) as the builder read it from one FDE row, before it becomes a table row.
struct UnwindSpan {
    uint64_t start = 0;
    uint64_t end = 0;
    agent::UnwindKind kind = agent::UnwindKind::NoFde;
    uint16_t cfaOffset = 0;
    int8_t rbpSlot = 0;
    uint8_t pltSplit = 0; // the builder's own: a lazy-binding PLT's rule, CfaRsp + 8 from this entry offset on
};

// A section that holds code (SHF_EXECINSTR): what the table should cover.
struct CodeSection {
    uint64_t start = 0;
    uint64_t end = 0;
    bool plt = false; // .plt, .plt.got, .plt.sec: what no FDE covers there is counted as Plt, not NoFde
};

// Lays the FDEs' spans out as a table: sorted by start; a span that overlaps an earlier one keeps only its own
// addresses (counted in stats.overlaps); the code sections' addresses no FDE covers become Plt or NoFde rows; equal
// neighbours merge; a closing NoFde row ends the table. Fills in stats' rows, bytes, executableBytes and
// coveredBytes.
std::vector<agent::UnwindRow> layOutUnwindRows(std::vector<UnwindSpan> spans, const std::vector<CodeSection> &sections,
                                               UnwindTableStats &stats);

} // namespace emberline::engine
