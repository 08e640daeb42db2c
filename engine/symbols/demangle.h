#pragma once

#include <string>

namespace emberline::engine {

// The readable form of a C++ (Itanium ABI) symbol name, e.g. "_ZNK2ns5Shape4areaEi" -> "ns::Shape::area(int)
// const"; any other name (C, already demangled, or not demangleable) is returned unchanged. Never throws.
std::string demangleSymbol(const char *name);

} // namespace emberline::engine
