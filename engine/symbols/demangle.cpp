#include "engine/symbols/demangle.h"

#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <memory>

namespace emberline::engine {

std::string demangleSymbol(const char *name)
{
    if (name == nullptr)
        return {};
    // Only mangled names go to the demangler: it would also "demangle" a plain C name such as "f" or "i"
    // as a type ("float", "int").
    if (std::strncmp(name, "_Z", 2) != 0)
        return name;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                                          &std::free);
    if (status != 0 || !demangled)
        return name;
    return demangled.get();
}

} // namespace emberline::engine
