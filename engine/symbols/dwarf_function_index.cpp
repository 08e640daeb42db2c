#include "engine/symbols/dwarf_function_index.h"

#include <algorithm>
#include <cstdlib>
#include <dwarf.h>
#include <memory>

namespace emberline::engine {
namespace {

constexpr int maximumNesting = 64;
// Functions nested in functions (GNU C) are rare: a lookup checks this many preceding ranges for one.
constexpr int maximumRangeBacktrack = 16;

std::pair<const Dwarf *, Dwarf_Off> keyOf(Dwarf_Die &die)
{
    return {dwarf_cu_getdwarf(die.cu), dwarf_dieoffset(&die)};
}

bool hasLinkageName(Dwarf_Die &die)
{
    return dwarf_hasattr(&die, DW_AT_linkage_name) || dwarf_hasattr(&die, DW_AT_MIPS_linkage_name);
}

const char *anonymousName(int tag)
{
    switch (tag) {
    case DW_TAG_namespace:
        return "(anonymous namespace)";
    case DW_TAG_union_type:
        return "(anonymous union)";
    case DW_TAG_class_type:
        return "(anonymous class)";
    default:
        return "(anonymous struct)";
    }
}

} // namespace

Dwarf_Die *DwarfFunctionIndex::findUnit(Dwarf_Addr address, Dwarf_Addr *bias)
{
    if (Dwarf_Die *cu = dwfl_module_addrdie(m_module, address, bias))
        return cu;
    if (!m_unitIndexBuilt)
        buildUnitIndex();
    *bias = m_unitBias;
    const Dwarf_Addr pc = address - m_unitBias;
    auto it = std::upper_bound(m_unitIndex.begin(), m_unitIndex.end(), pc,
                               [](Dwarf_Addr value, const UnitRange &range) { return value < range.low; });
    if (it == m_unitIndex.begin())
        return nullptr;
    --it;
    return pc < it->high ? it->unit : nullptr;
}

void DwarfFunctionIndex::buildUnitIndex()
{
    m_unitIndexBuilt = true;
    Dwarf_Addr bias = 0;
    for (Dwarf_Die *cu = nullptr; (cu = dwfl_module_nextcu(m_module, cu, &bias)) != nullptr;) {
        m_unitBias = bias;
        Dwarf_Addr base = 0;
        Dwarf_Addr low = 0;
        Dwarf_Addr high = 0;
        for (ptrdiff_t offset = 0; (offset = dwarf_ranges(cu, offset, &base, &low, &high)) > 0;) {
            if (high > low)
                m_unitIndex.push_back({low, high, cu});
        }
    }
    std::sort(m_unitIndex.begin(), m_unitIndex.end(),
              [](const UnitRange &a, const UnitRange &b) { return a.low < b.low; });
}

bool DwarfFunctionIndex::findFunction(Dwarf_Addr address, Dwarf_Die *function, Dwarf_Addr *bias)
{
    Dwarf_Die *cu = findUnit(address, bias);
    if (cu == nullptr)
        return false;
    Dwarf *dwarf = dwarf_cu_getdwarf(cu->cu);
    const std::vector<Range> &ranges = unitRanges(cu);
    const Dwarf_Addr pc = address - *bias;

    auto it = std::upper_bound(ranges.begin(), ranges.end(), pc,
                               [](Dwarf_Addr value, const Range &range) { return value < range.low; });
    const Range *best = nullptr;
    for (int step = 0; it != ranges.begin() && step < maximumRangeBacktrack; ++step) {
        --it;
        if (pc < it->high && (best == nullptr || it->high - it->low < best->high - best->low))
            best = &*it;
    }
    return best != nullptr && dwarf_offdie(dwarf, best->function, function) != nullptr;
}

const std::vector<DwarfFunctionIndex::Range> &DwarfFunctionIndex::unitRanges(Dwarf_Die *cu)
{
    const Dwarf_Off key = dwarf_dieoffset(cu);
    auto it = m_units.find(key);
    if (it != m_units.end())
        return it->second;
    std::vector<Range> ranges;
    indexScope(*cu, std::string(), ranges, 0);
    std::sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) { return a.low < b.low; });
    return m_units.emplace(key, std::move(ranges)).first->second;
}

void DwarfFunctionIndex::indexScope(Dwarf_Die scope, const std::string &prefix, std::vector<Range> &ranges, int depth)
{
    Dwarf_Die child;
    if (depth > maximumNesting || dwarf_child(&scope, &child) != 0)
        return;
    do {
        const int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            Dwarf_Addr base = 0;
            Dwarf_Addr low = 0;
            Dwarf_Addr high = 0;
            for (ptrdiff_t offset = 0; (offset = dwarf_ranges(&child, offset, &base, &low, &high)) > 0;) {
                if (high > low)
                    ranges.push_back({low, high, dwarf_dieoffset(&child)});
            }
            if (!hasLinkageName(child))
                m_prefixes.emplace(keyOf(child), prefix);
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                   tag == DW_TAG_union_type) {
            const char *name = dwarf_diename(&child);
            indexScope(child, prefix + (name != nullptr ? name : anonymousName(tag)) + "::", ranges, depth + 1);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

std::string DwarfFunctionIndex::scopePrefix(Dwarf_Die declaration)
{
    const DieKey key = keyOf(declaration);
    if (auto it = m_prefixes.find(key); it != m_prefixes.end())
        return it->second;

    // Not in an indexed unit (a partial unit shared by several, or a unit no address led to): walk its unit.
    struct FreeDeleter {
        void operator()(void *pointer) const { std::free(pointer); }
    };
    Dwarf_Die *scopesRaw = nullptr;
    const int count = dwarf_getscopes_die(&declaration, &scopesRaw);
    std::unique_ptr<Dwarf_Die, FreeDeleter> scopes(scopesRaw);
    std::string prefix;
    for (int i = 1; i < count; ++i) {
        Dwarf_Die *scope = &scopes.get()[i];
        const int tag = dwarf_tag(scope);
        if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
            tag != DW_TAG_union_type)
            continue;
        const char *name = dwarf_diename(scope);
        prefix.insert(0, std::string(name != nullptr ? name : anonymousName(tag)) + "::");
    }
    m_prefixes.emplace(key, prefix);
    return prefix;
}

} // namespace emberline::engine
