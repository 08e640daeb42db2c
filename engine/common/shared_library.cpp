#include "engine/common/shared_library.h"

#include <dlfcn.h>

namespace emberline::engine {

SharedLibrary::SharedLibrary(const char *soname) : m_soname(soname)
{
    // Bound whole now: a missing function is found here, not in the middle of a transfer.
    m_handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (m_handle == nullptr) {
        const char *why = ::dlerror();
        m_error = why != nullptr ? why : m_soname + ": cannot be loaded";
    }
}

void *SharedLibrary::symbol(const char *name)
{
    if (m_handle == nullptr)
        return nullptr;
    ::dlerror();
    void *address = ::dlsym(m_handle, name);
    if (address == nullptr && m_error.empty())
        m_error = m_soname + " has no function " + name;
    return address;
}

} // namespace emberline::engine
