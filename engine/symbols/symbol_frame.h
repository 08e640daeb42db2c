#pragma once

#include <string>

namespace emberline::engine {

// One level of what an address means: a function and where in the source it is. An address inside inlined
// code yields several frames, innermost first. `file` is empty and `line` 0 when only the ELF symbol table
// knows the address; `column` is 0 when the compiler did not record one.
struct SymbolFrame {
    std::string function;
    std::string file;
    int line = 0;
    int column = 0;

    bool operator==(const SymbolFrame &) const = default;
};

} // namespace emberline::engine
