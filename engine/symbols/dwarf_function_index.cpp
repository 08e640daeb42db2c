#include "engine/symbols/dwarf_function_index.h"

#include <algorithm>
#include <cstdlib>
#include <dwarf.h>
#include <memory>
#include <optional>

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

// C has neither namespaces nor member functions: its units hold their functions at the top level, and the walk
// need not go through every struct and union their headers declare (hundreds per unit, with all their members).
bool scopesMayHoldFunctions(Dwarf_Die *cu)
{
    switch (dwarf_srclang(cu)) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
        return false;
    default:
        return true;
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
    const std::vector<Range> &ranges = unitIndex(cu).ranges;
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

const DwarfFunctionIndex::UnitIndex &DwarfFunctionIndex::unitIndex(Dwarf_Die *cu)
{
    const DieKey key = keyOf(*cu);
    auto it = m_units.find(key);
    if (it != m_units.end())
        return it->second;
    UnitIndex unit;
    unit.nestedScopes = scopesMayHoldFunctions(cu);
    indexScope(*cu, std::string(), unit, 0);
    std::sort(unit.ranges.begin(), unit.ranges.end(), [](const Range &a, const Range &b) { return a.low < b.low; });
    // A depth-first walk meets DIEs in offset order already; sorted again in case a producer nests otherwise.
    if (!std::is_sorted(unit.prefixOfFunction.begin(), unit.prefixOfFunction.end()))
        std::sort(unit.prefixOfFunction.begin(), unit.prefixOfFunction.end());
    return m_units.emplace(key, std::move(unit)).first->second;
}

void DwarfFunctionIndex::indexScope(Dwarf_Die scope, const std::string &prefix, UnitIndex &unit, int depth)
{
    Dwarf_Die child;
    if (depth > maximumNesting || dwarf_child(&scope, &child) != 0)
        return;
    // The index of `prefix` in unit.prefixes, found when this scope first needs it.
    std::optional<uint32_t> prefixIndex;
    do {
        const int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            // dwarf_hasattr reads the abbreviation alone; dwarf_ranges reads the DIE's attributes. Most subprograms
            // of a C unit are declarations from headers, with neither attribute: they are not read.
            if (dwarf_hasattr(&child, DW_AT_low_pc) || dwarf_hasattr(&child, DW_AT_ranges)) {
                Dwarf_Addr base = 0;
                Dwarf_Addr low = 0;
                Dwarf_Addr high = 0;
                for (ptrdiff_t offset = 0; (offset = dwarf_ranges(&child, offset, &base, &low, &high)) > 0;) {
                    if (high > low)
                        unit.ranges.push_back({low, high, dwarf_dieoffset(&child)});
                }
            }
            if (!hasLinkageName(child)) {
                if (!prefixIndex) {
                    const auto known = std::find(unit.prefixes.begin(), unit.prefixes.end(), prefix);
                    prefixIndex = static_cast<uint32_t>(known - unit.prefixes.begin());
                    if (known == unit.prefixes.end())
                        unit.prefixes.push_back(prefix);
                }
                unit.prefixOfFunction.emplace_back(dwarf_dieoffset(&child), *prefixIndex);
            }
        } else if (unit.nestedScopes && (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                                         tag == DW_TAG_structure_type || tag == DW_TAG_union_type)) {
            const char *name = dwarf_diename(&child);
            indexScope(child, prefix + (name != nullptr ? name : anonymousName(tag)) + "::", unit, depth + 1);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

const std::string *DwarfFunctionIndex::indexedPrefix(Dwarf_Die &declaration) const
{
    Dwarf_Die cu;
    if (dwarf_diecu(&declaration, &cu, nullptr, nullptr) == nullptr)
        return nullptr;
    const auto unit = m_units.find(keyOf(cu));
    if (unit == m_units.end())
        return nullptr;
    const std::vector<std::pair<Dwarf_Off, uint32_t>> &functions = unit->second.prefixOfFunction;
    const Dwarf_Off offset = dwarf_dieoffset(&declaration);
    const auto it = std::lower_bound(
        functions.begin(), functions.end(), offset,
        [](const std::pair<Dwarf_Off, uint32_t> &entry, Dwarf_Off value) { return entry.first < value; });
    if (it == functions.end() || it->first != offset)
        return nullptr;
    return &unit->second.prefixes[it->second];
}

std::string DwarfFunctionIndex::scopePrefix(Dwarf_Die declaration)
{
    if (const std::string *prefix = indexedPrefix(declaration))
        return *prefix;
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
