#pragma once

#include "tests/targets/symbols/marker.h"

namespace symbols {

// Always inlined, and only into inlinedMiddle (symbols_target.cpp): the innermost frame of a three-level
// inline chain whose levels live in two files.
__attribute__((always_inline)) inline int inlinedLeaf(int x)
{
    EMBERLINE_MARK(emberline_mark_inline_leaf); // LINE: inline leaf
    return x * 3 + 1;
}

} // namespace symbols
