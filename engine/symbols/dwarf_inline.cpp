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

bool isFunctionScope(Dwarf_Die *die)
{
    const int tag = dwarf_tag(die);
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
}

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
        if (dwarf_attr(&die, DW_AT_abstract_origin, &attribute) == nullptr
            && dwarf_attr(&die, DW_AT_specification, &attribute) == nullptr)
            break;
        if (dwarf_formref_die(&attribute, &target) == nullptr)
            break;
        die = target;
    }
    return die;
}

// "ns::(anonymous namespace)::Class::" for a declaration, from its enclosing DIEs.
std::string scopePrefix(Dwarf_Die declaration)
{
    Dwarf_Die *scopesRaw = nullptr;
    const int count = dwarf_getscopes_die(&declaration, &scopesRaw);
    std::unique_ptr<Dwarf_Die, FreeDeleter> scopes(scopesRaw);
    std::string prefix;
    for (int i = 1; i < count; ++i) {
        Dwarf_Die *scope = &scopes.get()[i];
        const int tag = dwarf_tag(scope);
        if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type
            && tag != DW_TAG_union_type)
            continue;
        const char *name = dwarf_diename(scope);
        prefix.insert(0, std::string(name != nullptr ? name : "(anonymous namespace)") + "::");
    }
    return prefix;
}

FunctionName functionName(Dwarf_Die *die)
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
    return {scopePrefix(declarationOf(*die)) + name, false};
}

bool readUnsigned(Dwarf_Die *die, unsigned int attributeName, Dwarf_Word &value)
{
    Dwarf_Attribute attribute;
    return dwarf_formudata(dwarf_attr(die, attributeName, &attribute), &value) == 0;
}

// Where the caller of an inlined instance called it: the location of the next outer frame.
SymbolFrame callSiteOf(Dwarf_Die *inlined)
{
    SymbolFrame site;
    Dwarf_Word value = 0;
    if (readUnsigned(inlined, DW_AT_call_line, value))
        site.line = static_cast<int>(value);
    if (readUnsigned(inlined, DW_AT_call_column, value))
        site.column = static_cast<int>(value);
    if (readUnsigned(inlined, DW_AT_call_file, value)) {
        Dwarf_Die cu;
        Dwarf_Files *files = nullptr;
        size_t fileCount = 0;
        if (dwarf_diecu(inlined, &cu, nullptr, nullptr) != nullptr && dwarf_getsrcfiles(&cu, &files, &fileCount) == 0
            && value < fileCount) {
            if (const char *file = dwarf_filesrc(files, value, nullptr, nullptr))
                site.file = file;
        }
    }
    return site;
}

SymbolFrame lineTableLocation(Dwfl_Module *module, Dwarf_Addr address)
{
    SymbolFrame location;
    if (Dwfl_Line *line = dwfl_module_getsrc(module, address)) {
        int lineNumber = 0;
        int column = 0;
        if (const char *file = dwfl_lineinfo(line, nullptr, &lineNumber, &column, nullptr, nullptr)) {
            location.file = file;
            location.line = lineNumber;
            location.column = column;
        }
    }
    return location;
}

} // namespace

DwarfFrames dwarfFrames(Dwfl_Module *module, Dwarf_Addr address)
{
    DwarfFrames result;
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(module, address, &bias);
    if (cu == nullptr)
        return result;

    Dwarf_Die *pcScopesRaw = nullptr;
    const int pcScopeCount = dwarf_getscopes(cu, address - bias, &pcScopesRaw);
    std::unique_ptr<Dwarf_Die, FreeDeleter> pcScopes(pcScopesRaw);
    if (pcScopeCount <= 0)
        return result;

    // Past an inlined instance, dwarf_getscopes continues into the scopes of its abstract definition (what
    // name lookup needs). The call chain is the physical nesting of the innermost scope in the DIE tree.
    Dwarf_Die innermost = pcScopes.get()[0];
    Dwarf_Die *scopesRaw = nullptr;
    const int scopeCount = dwarf_getscopes_die(&innermost, &scopesRaw);
    std::unique_ptr<Dwarf_Die, FreeDeleter> scopes(scopesRaw);
    if (scopeCount <= 0)
        return result;

    SymbolFrame location = lineTableLocation(module, address);
    for (int i = 0; i < scopeCount; ++i) {
        Dwarf_Die *scope = &scopes.get()[i];
        if (!isFunctionScope(scope))
            continue;
        FunctionName name = functionName(scope);
        location.function = std::move(name.name);
        const bool inlined = dwarf_tag(scope) == DW_TAG_inlined_subroutine;
        if (inlined && location.function.empty())
            location.function = "??";
        result.frames.push_back(std::move(location));
        if (!inlined) {
            result.outermostFromLinkageName = name.fromLinkageName;
            Dwarf_Addr entry = 0;
            if (dwarf_entrypc(scope, &entry) == 0)
                result.outermostEntry = entry + bias;
            break;
        }
        location = callSiteOf(scope);
    }
    return result;
}

} // namespace emberline::engine
