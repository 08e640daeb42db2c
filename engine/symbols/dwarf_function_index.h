#pragma once

#include <cstdint>
#include <elfutils/libdwfl.h>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace emberline::engine {

// Per compilation unit, built on first use: the code ranges of its out-of-line functions (DW_TAG_subprogram
// with addresses) and the namespace/class prefix of every function declared without a linkage name. One walk
// over a CU's namespace tree replaces the whole-CU walk that dwarf_getscopes does for every address, which
// costs milliseconds per address in large C++ units. A C unit is walked at its top level alone: C has no namespaces
// and no member functions, and its units declare hundreds of structs and unions whose members held most of the walk.
//
// Units are found through .debug_aranges when the file has it (libdwfl's lookup). Producers that write none
// (clang by default) get an index of their own: every unit's DW_AT_ranges, sorted, built once on the first
// address libdwfl cannot place. Without it such binaries would have names from the symbol table only, with no
// file, line or inlined frames.
// Thread: belongs to its SymbolModule.
class DwarfFunctionIndex {
public:
    explicit DwarfFunctionIndex(Dwfl_Module *module) : m_module(module) {}

    // The compilation unit whose code contains `address` (libdwfl address), or null; `bias` as below.
    Dwarf_Die *findUnit(Dwarf_Addr address, Dwarf_Addr *bias);
    // The innermost out-of-line function whose code contains `address` (libdwfl address); `bias` turns
    // libdwfl addresses into the DWARF's own.
    bool findFunction(Dwarf_Addr address, Dwarf_Die *function, Dwarf_Addr *bias);
    // "ns::(anonymous namespace)::Class::" for a function declaration DIE.
    std::string scopePrefix(Dwarf_Die declaration);

private:
    struct Range {
        Dwarf_Addr low = 0;
        Dwarf_Addr high = 0;
        Dwarf_Off function = 0;
    };
    struct UnitRange {
        Dwarf_Addr low = 0;
        Dwarf_Addr high = 0;
        Dwarf_Die *unit = nullptr; // owned by libdwfl, valid as long as the module
    };
    using DieKey = std::pair<const Dwarf *, Dwarf_Off>;
    // What one unit's walk learnt: its functions' ranges, and the prefix of every function declared in it without
    // a linkage name. Most such functions are C's, at the top level; a pair (DIE offset, index into prefixes) per
    // function costs far less than a map entry with a string of its own.
    struct UnitIndex {
        std::vector<Range> ranges;                                    // sorted by low
        std::vector<std::pair<Dwarf_Off, uint32_t>> prefixOfFunction; // sorted by DIE offset (the walk's order)
        std::vector<std::string> prefixes;                            // distinct, in order of first use
        bool nestedScopes = true; // whether namespaces, classes, structs and unions are walked for functions
    };

    void buildUnitIndex();

    const UnitIndex &unitIndex(Dwarf_Die *cu);
    void indexScope(Dwarf_Die scope, const std::string &prefix, UnitIndex &unit, int depth);
    const std::string *indexedPrefix(Dwarf_Die &declaration) const;

    Dwfl_Module *m_module;
    std::vector<UnitRange> m_unitIndex; // sorted by low; built only for files without .debug_aranges
    Dwarf_Addr m_unitBias = 0;
    bool m_unitIndexBuilt = false;
    std::map<DieKey, UnitIndex> m_units;      // by the unit's Dwarf and CU DIE offset
    std::map<DieKey, std::string> m_prefixes; // declarations outside the indexed units, by their DIE
};

} // namespace emberline::engine
