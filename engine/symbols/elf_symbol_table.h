#pragma once

#include <elfutils/libdwfl.h>
#include <optional>
#include <utility>
#include <vector>

namespace emberline::engine {

// A module's ELF symbols (.symtab, else .dynsym, from the file or its debug file) sorted by address, so that a
// lookup is a binary search instead of libdwfl's scan of every symbol. A sized symbol must contain the address;
// a sizeless one (hand-written assembly) names it only from the nearest start within the same code section.
// Thread: belongs to its SymbolModule. Names point into libelf's string tables and live as long as the module.
class ElfSymbolTable {
public:
    struct Match {
        const char *name = nullptr;
        Dwarf_Addr start = 0;
    };

    explicit ElfSymbolTable(Dwfl_Module *module);
    std::optional<Match> find(Dwarf_Addr address) const;

private:
    struct Symbol {
        Dwarf_Addr start = 0;
        GElf_Xword size = 0;
        const char *name = nullptr;
        int rank = 0; // lower is better: functions before untyped labels, global before weak before local
    };
    bool inSameCodeSection(Dwarf_Addr a, Dwarf_Addr b) const;

    std::vector<Symbol> m_symbols; // by start, then rank
    std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> m_codeSections;
};

} // namespace emberline::engine
