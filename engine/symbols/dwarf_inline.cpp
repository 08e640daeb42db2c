#include "engine/symbols/dwarf_inline.h"

#include "engine/symbols/demangle.h"

#include <cstdlib>
#include <dwarf.h>
#include <memory>

namespace emberline::engine {
namespace {

struct FreeDeleter {
    void operator()(void *pointer) const { std::free(pointer); }
};

// dwarf_attr_integrate follows DW_AT_abstract_origin (inlined and out-of-line instances) and
// DW_AT_specification (members defined outside their class), where the names live.
struct FunctionName {
    std::string name;
    bool fromLinkageName = false;
};

const char *integratedString(Dwarf_Die *die, unsigned int attributeName)
{
    Dwarf_Attribute attribute;
    return dwarf_formstring(dwarf_attr_integrate(die, attributeName, &attribute));
}

// The DIE that carries a function's name and position in the namespace tree: an inlined or out-of-line
// instance points to its abstract origin, a definition outside its class to the declaration inside it.
Dwarf_Die declarationOf(Dwarf_Die die)
{
    for (int depth = 0; depth < 8; ++depth) {
        Dwarf_Attribute attribute;
        Dwarf_Die target;
        if (dwarf_attr(&die, DW_AT_abstract_origin, &attribute) == nullptr &&
            dwarf_attr(&die, DW_AT_specification, &attribute) == nullptr)
            break;
        if (dwarf_formref_die(&attribute, &target) == nullptr)
            break;
        die = target;
    }
    return die;
}

FunctionName functionName(Dwarf_Die *die, DwarfFunctionIndex &index)
{
    // DW_AT_name is unqualified ("area"); the linkage name demangles to what a debugger shows
    // ("ns::Shape::area(int) const"). Functions with internal linkage have no linkage name: qualify their
    // DW_AT_name from the enclosing namespaces and classes (without parameter types, which DWARF would
    // have to spell out type by type).
    for (unsigned int attributeName : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
        if (const char *linkageName = integratedString(die, attributeName))
            return {demangleSymbol(linkageName), true};
    }
    const char *name = integratedString(die, DW_AT_name);
    if (name == nullptr)
        return {};
    return {index.scopePrefix(declarationOf(*die)) + name, false};
}

bool readUnsigned(Dwarf_Die *die, unsigned int attributeName, Dwarf_Word &value)
{
    Dwarf_Attribute attribute;
    return dwarf_formudata(dwarf_attr(die, attributeName, &attribute), &value) == 0;
}

// Where the caller of an inlined instance called it: the location of the next outer frame.
SymbolFrame callSiteOf(Dwarf_Die *inlined, LineTableStore *lines)
{
    SymbolFrame site;
    Dwarf_Word value = 0;
    if (readUnsigned(inlined, DW_AT_call_line, value))
        site.line = static_cast<int>(value);
    if (readUnsigned(inlined, DW_AT_call_column, value))
        site.column = static_cast<int>(value);
    Dwarf_Die cu;
    if (!readUnsigned(inlined, DW_AT_call_file, value) || dwarf_diecu(inlined, &cu, nullptr, nullptr) == nullptr)
        return site;
    // The unit's file table is read with its whole line program: a kept one spares that.
    if (const auto *kept = lines ? lines->unitFiles(dwarf_dieoffset(&cu)) : nullptr) {
        if (value < kept->size())
            site.file = *(*kept)[value];
        return site;
    }
    Dwarf_Files *files = nullptr;
    size_t fileCount = 0;
    if (dwarf_getsrcfiles(&cu, &files, &fileCount) == 0 && value < fileCount) {
        if (const char *file = dwarf_filesrc(files, value, nullptr, nullptr))
            site.file = file;
    }
    if (lines && fileCount > 0)
        lines->addUnit(&cu);
    return site;
}

// Appends the inlined instances nested in `scope` that contain `pc`, outermost first. Lexical blocks are
// looked through; one without addresses of its own may still hold inlined code.
void appendInlinedInstances(Dwarf_Die scope, Dwarf_Addr pc, std::vector<Dwarf_Die> &chain, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(&scope, &child) != 0)
        return;
    do {
        const int tag = dwarf_tag(&child);
        if (tag == DW_TAG_inlined_subroutine) {
            if (dwarf_haspc(&child, pc) > 0) {
                chain.push_back(child);
                appendInlinedInstances(child, pc, chain, depth + 1);
                return;
            }
        } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block) {
            const bool hasAddresses = dwarf_hasattr(&child, DW_AT_low_pc) || dwarf_hasattr(&child, DW_AT_ranges);
            if (!hasAddresses || dwarf_haspc(&child, pc) > 0) {
                const size_t before = chain.size();
                appendInlinedInstances(child, pc, chain, depth + 1);
                if (hasAddresses || chain.size() != before)
                    return;
            }
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

} // namespace

SymbolFrame lineTableLocation(Dwfl_Module *module, DwarfFunctionIndex &index, Dwarf_Addr address, LineTableStore *lines)
{
    SymbolFrame location;
    Dwarf_Addr unitBias = 0;
    if (Dwarf_Die *unit = lines ? dwfl_module_addrdie(module, address, &unitBias) : nullptr) {
        if (const auto kept = lines->find(dwarf_dieoffset(unit), address - unitBias)) {
            location.file = *kept->file;
            location.line = kept->line;
            location.column = kept->column;
            return location;
        }
    }
    if (Dwfl_Line *line = dwfl_module_getsrc(module, address)) {
        if (Dwarf_Die *cu = lines ? dwfl_linecu(line) : nullptr)
            lines->addUnit(cu);
        int lineNumber = 0;
        int column = 0;
        if (const char *file = dwfl_lineinfo(line, nullptr, &lineNumber, &column, nullptr, nullptr)) {
            location.file = file;
            location.line = lineNumber;
            location.column = column;
        }
        return location;
    }
    // libdwfl places addresses through .debug_aranges; a file without it is read through the index's units.
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = index.findUnit(address, &bias);
    Dwarf_Line *line = cu != nullptr ? dwarf_getsrc_die(cu, address - bias) : nullptr;
    if (line == nullptr)
        return location;
    if (const char *file = dwarf_linesrc(line, nullptr, nullptr)) {
        int lineNumber = 0;
        int column = 0;
        dwarf_lineno(line, &lineNumber);
        dwarf_linecol(line, &column);
        location.file = file;
        location.line = lineNumber;
        location.column = column;
    }
    return location;
}

DwarfFrames dwarfFrames(Dwfl_Module *module, DwarfFunctionIndex &index, Dwarf_Addr address, LineTableStore *lines)
{
    DwarfFrames result;
    Dwarf_Die function;
    Dwarf_Addr bias = 0;
    if (!index.findFunction(address, &function, &bias))
        return result;
    std::vector<Dwarf_Die> chain{function}; // outermost first
    appendInlinedInstances(function, address - bias, chain, 0);

    SymbolFrame location = lineTableLocation(module, index, address, lines);
    for (size_t level = chain.size(); level-- > 0;) {
        Dwarf_Die *scope = &chain[level];
        FunctionName name = functionName(scope, index);
        location.function = std::move(name.name);
        if (level == 0) {
            result.outermostFromLinkageName = name.fromLinkageName;
            Dwarf_Addr entry = 0;
            if (dwarf_entrypc(scope, &entry) == 0)
                result.outermostEntry = entry + bias;
            result.frames.push_back(std::move(location));
            break;
        }
        if (location.function.empty())
            location.function = "??";
        result.frames.push_back(std::move(location));
        location = callSiteOf(scope, lines);
    }
    return result;
}

} // namespace emberline::engine
