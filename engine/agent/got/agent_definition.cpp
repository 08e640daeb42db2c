// The definition a name has in a running program the agent was loaded into (agent_got.h: programDefinition): the
// injected front end's next definitions, which its hooks pass their calls on to.
//
// Thread: the thread that makes the agent's first lookups (the attach's), or any thread of the program later.

#include "engine/agent/got/agent_got.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>

namespace emberline::agent {
namespace {

// The module that holds `address` (where its mapping starts), or 0.
uintptr_t moduleOf(const void *address)
{
    dl_find_object found{};
    if (!address || _dl_find_object(const_cast<void *>(address), &found) != 0)
        return 0;
    return reinterpret_cast<uintptr_t>(found.dlfo_map_start);
}

// The names of the loaded shared objects (the dynamic linker's own strings), collected first: dlopen may not be
// called from dl_iterate_phdr's callback, which holds a lock of the dynamic linker.
struct LoadedNames {
    const char *name[256] = {};
    int count = 0;
};

int collectName(dl_phdr_info *info, size_t, void *data)
{
    auto *names = static_cast<LoadedNames *>(data);
    if (info->dlpi_name && info->dlpi_name[0] != '\0' && names->count < 256)
        names->name[names->count++] = info->dlpi_name;
    return 0;
}

// A program built without position independence that takes a function's address owns the function's canonical
// address: a stub in its PLT that jumps through its own global offset table (which the injected front end rewrites).
// The global scope names that stub; the definition is where the stub's entry leads once bound, else the C library's.
void *definitionBehind(void *found, const char *name)
{
    void *const *entry = pltStubEntry(found);
    if (!entry)
        return found;
    void *bound = __atomic_load_n(entry, __ATOMIC_ACQUIRE);
    if (bound && moduleOf(bound) != moduleOf(found))
        return bound;
    // Not bound yet (lazy binding): the first definition in the shared objects, in their load order (the stub is the
    // program's own, whose name is empty; the C library's functions and C++'s operators are further on).
    LoadedNames names;
    dl_iterate_phdr(collectName, &names);
    for (int i = 0; i < names.count; ++i) {
        void *module = dlopen(names.name[i], RTLD_LAZY | RTLD_NOLOAD);
        void *definition = module ? dlsym(module, name) : nullptr;
        if (module)
            dlclose(module);
        if (definition && moduleOf(definition) != moduleOf(found))
            return definition;
    }
    return found;
}

} // namespace

// The agent's own lookup (RTLD_DEFAULT, from the agent) searches the program's global scope, then the agent's own
// scope: a name the program does not define (C++'s operators in a C program) is found in the agent, its own hook.
// That is none: the hooks would pass their calls on to themselves, and the C++ runtime a library brings into the
// program later would be taken for an allocator of its own (its operators are not the "next" ones).
void *programDefinition(const char *name)
{
    void *found = dlsym(RTLD_DEFAULT, name);
    if (!found)
        return nullptr;
    found = definitionBehind(found, name);
    if (moduleOf(found) == moduleOf(reinterpret_cast<const void *>(&programDefinition)))
        return nullptr;
    return found;
}

} // namespace emberline::agent
