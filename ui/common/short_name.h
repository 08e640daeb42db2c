#pragma once

#include <QString>
#include <QStringView>

namespace emberline::ui {

// A C++ function name as perf and pprof show it in a flame graph: without its parameter list, its return type and
// trailing qualifiers (const, &&), and with template arguments folded to <…>:
//   "std::vector<int, std::allocator<int> >::push_back(int const&)"  →  "std::vector<…>::push_back".
// Operators ("operator<<", "operator()"), "(anonymous namespace)", lambdas ("{lambda(int)#1}") and a name that is
// not a demangled C++ name (a module+offset, a script's "run (app.py:12)", "[kernel]") are left as they are.
QString shortFunctionName(QStringView name);

} // namespace emberline::ui
