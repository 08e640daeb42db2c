#pragma once

#include "engine/agent/python/python_layout.h"
#include "engine/common/result.h"

#include <string>

namespace emberline::engine {

// The layout that walks one interpreter, and where it came from.
struct ChosenPythonLayout {
    PythonLayout layout;
    std::string source; // "the 3.9 table", "3.13's debug offsets, which agree with the 3.13 table", ...
};

// Chooses the layout of CPython major.minor: the built-in table for 3.8-3.12; for 3.13, the process's own
// _Py_DebugOffsets (`debugOffsets`, read from the start of _PyRuntime; null when they could not be read). 3.13 needs
// them: their cookie must be "xdebugpy" and their version 3.13. When every offset they give agrees with the 3.13
// table, the table is used whole; when some differ (a patched or free-threaded build), the debug offsets are used,
// and what only the table knows is left absent. Any other version (3.7, 3.14, ...) has no layout: the error says why.
Result<ChosenPythonLayout> choosePythonLayout(int major, int minor, const DebugOffsets313 *debugOffsets);

} // namespace emberline::engine
