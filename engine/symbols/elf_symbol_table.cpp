#include "engine/symbols/elf_symbol_table.h"

#include <algorithm>

namespace emberline::engine {
namespace {

int symbolRank(const GElf_Sym &symbol)
{
    const int type = GELF_ST_TYPE(symbol.st_info);
    const int binding = GELF_ST_BIND(symbol.st_info);
    const int typeRank = (type == STT_FUNC || type == STT_GNU_IFUNC) ? 0 : 4;
    const int bindingRank = binding == STB_GLOBAL ? 0 : binding == STB_WEAK ? 1 : 2;
    return typeRank + bindingRank;
}

// A symbol that can name code: functions, and untyped labels of assembly sources.
bool namesCode(const GElf_Sym &symbol)
{
    const int type = GELF_ST_TYPE(symbol.st_info);
    return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE;
}

// How far back a lookup looks for a sized symbol that still covers the address (symbols nested in others).
constexpr int maximumSymbolBacktrack = 32;

} // namespace

ElfSymbolTable::ElfSymbolTable(Dwfl_Module *module)
{
    const int count = dwfl_module_getsymtab(module);
    for (int i = 1; i < count; ++i) {
        GElf_Sym symbol;
        GElf_Addr address = 0;
        GElf_Word section = SHN_UNDEF;
        const char *name = dwfl_module_getsym_info(module, i, &symbol, &address, &section, nullptr, nullptr);
        if (name == nullptr || *name == '\0' || section == SHN_UNDEF || !namesCode(symbol))
            continue;
        m_symbols.push_back({address, symbol.st_size, name, symbolRank(symbol)});
    }
    std::sort(m_symbols.begin(), m_symbols.end(), [](const Symbol &a, const Symbol &b) {
        return a.start != b.start ? a.start < b.start : a.rank < b.rank;
    });

    Dwarf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(module, &bias);
    for (Elf_Scn *section = elf != nullptr ? elf_nextscn(elf, nullptr) : nullptr; section != nullptr;
         section = elf_nextscn(elf, section)) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) != nullptr && (header.sh_flags & SHF_EXECINSTR) != 0)
            m_codeSections.emplace_back(header.sh_addr + bias, header.sh_addr + bias + header.sh_size);
    }
}

bool ElfSymbolTable::inSameCodeSection(Dwarf_Addr a, Dwarf_Addr b) const
{
    return std::any_of(m_codeSections.begin(), m_codeSections.end(), [&](const auto &section) {
        return a >= section.first && a < section.second && b >= section.first && b < section.second;
    });
}

std::optional<ElfSymbolTable::Match> ElfSymbolTable::find(Dwarf_Addr address) const
{
    auto end = std::upper_bound(m_symbols.begin(), m_symbols.end(), address,
                                [](Dwarf_Addr value, const Symbol &symbol) { return value < symbol.start; });
    if (end == m_symbols.begin())
        return std::nullopt;
    // Sorted by start then rank: walking back, the first sized symbol that covers the address is the
    // closest and, among equal starts, the best ranked.
    auto it = end;
    for (int step = 0; it != m_symbols.begin() && step < maximumSymbolBacktrack; ++step) {
        --it;
        if (it->size > 0 && address - it->start < it->size)
            return Match{it->name, it->start};
    }
    // No sized symbol covers it: the nearest start may be a sizeless label, unless a sized symbol starts there
    // (then the address lies past the end of that function: unknown code, better left unnamed).
    const Dwarf_Addr nearest = std::prev(end)->start;
    auto first = std::lower_bound(m_symbols.begin(), end, nearest,
                                  [](const Symbol &symbol, Dwarf_Addr value) { return symbol.start < value; });
    if (std::any_of(first, end, [](const Symbol &symbol) { return symbol.size > 0; }))
        return std::nullopt;
    if (!inSameCodeSection(nearest, address))
        return std::nullopt;
    return Match{first->name, first->start};
}

} // namespace emberline::engine
