#pragma once

#include "engine/model/frame_table.h"

#include <QString>
#include <QStringView>

namespace emberline::ui {

// A C++ function name as perf and pprof show it in a flame graph: without its parameter list, its return type and
// trailing qualifiers (const, &&), and with template arguments folded to <…>:
//   "std::vector<int, std::allocator<int> >::push_back(int const&)"  →  "std::vector<…>::push_back".
// Operators ("operator<<", "operator()"), "(anonymous namespace)", lambdas ("{lambda(int)#1}") and a name that is
// not a demangled C++ name (a module+offset, a script's "run (app.py:12)", "[kernel]") are left as they are.
QString shortFunctionName(QStringView name);
// A frame's short name: shortFunctionName for native code; a Python function's qualified name as it is, its angle
// brackets ("outer.<locals>.cool", "<module>", "<listcomp>") being part of the name, not template arguments.
QString shortFrameName(const engine::Frame &frame, QStringView name);

} // namespace emberline::ui
