#pragma once

#include "engine/symbols/dwarf_function_index.h"
#include "engine/symbols/stores/line_table_store.h"
#include "engine/symbols/symbol_frame.h"

#include <elfutils/libdwfl.h>
#include <optional>
#include <vector>

namespace emberline::engine {

struct DwarfFrames {
    std::vector<SymbolFrame> frames;
    // The outermost name came from DW_AT_linkage_name (qualified, with parameter types). When it did not,
    // an ELF symbol starting at outermostEntry names the same function better.
    bool outermostFromLinkageName = false;
    std::optional<Dwarf_Addr> outermostEntry; // libdwfl address of the outermost function's entry
};

// The frames DWARF gives for one address of a module (an address in libdwfl's space for that module): the
// innermost inlined callee first, the out-of-line function last. The innermost frame's file:line comes from
// the line table; each outer frame's is the call site its inlined callee records (DW_AT_call_file/line/column).
// Names are the demangled linkage names, or DW_AT_name qualified by its enclosing namespaces and classes when
// there is none (internal linkage, C functions, main). No frames when no function DIE covers the address; the
// outermost name is empty when DWARF does not name it, so that the caller can ask the ELF symbol table.
// With `lines`, the line tables it keeps answer first, and the units libdw decodes are added to it.
DwarfFrames dwarfFrames(Dwfl_Module *module, DwarfFunctionIndex &index, Dwarf_Addr address,
                        LineTableStore *lines = nullptr);

// The line table's file:line:column for an address of a module (libdwfl's space): through libdwfl, which places
// addresses by .debug_aranges, else through `index`'s units (binaries built by clang carry no .debug_aranges).
SymbolFrame lineTableLocation(Dwfl_Module *module, DwarfFunctionIndex &index, Dwarf_Addr address,
                              LineTableStore *lines = nullptr);

} // namespace emberline::engine
