#pragma once

#include "engine/model/frame_table.h"

#include <string>
#include <string_view>

namespace emberline::engine {

// CPython frames, as Emberline records them (engine/flush/exporter.cpp) and as other Python profilers write them in
// pprof: a location without a mapping (no machine code of the program's binaries holds it) whose line names the
// Python function by its qualified name ("Worker.hot", "outer.<locals>.cool", "<module>"), its source file and the
// line being run. What tells such a frame from a native one is this pair alone: no mapping (or one that names no
// file, as a few writers give every location), and a Python source file (".py", ".pyw", or a module frozen into the
// interpreter, "<frozen importlib._bootstrap>"). Every view asks here, so that they all agree on which frames are
// Python.

// Whether `file` names Python source: a ".py" or ".pyw" file, or a frozen module ("<frozen NAME>").
bool isPythonSourceFile(std::string_view file);
// Whether a frame is a Python function's: no mapping's file (its module is empty) and a Python source file.
bool isPythonFrame(const Frame &frame);
// The same rule on a profile's own tables: whether `line` of `location` is a Python function's (the location has no
// mapping with a file, the line's function a Python source file).
bool isPythonLine(const Profile &profile, const Location &location, const Line &line);
// Whether a module is frozen into the interpreter ("<frozen zipimport>"): its source is not on disk under that name.
bool isFrozenPythonFile(std::string_view file);

// The interpreter's own frames, where a recording kept them (`record --python-interpreter-frames`, or a session
// started from the window with View > Python Interpreter Frames on): CPython's eval loop and the functions that only
// pass a call on between two of its frames, placed among the Python frames they ran. Each such function's
// system_name is its name after this prefix, which no compiler's symbol begins with; the views hide these frames
// unless asked to show them (Transform::Kind::HideInterpreter), as if they had not been kept.
inline constexpr std::string_view kInterpreterSystemNamePrefix = "[python interpreter] ";
// Whether `function` of `profile` is such an interpreter frame's.
bool isInterpreterFunction(const Profile &profile, const Function &function);
// Whether any function of `profile` is.
bool hasInterpreterFunctions(const Profile &profile);

// Where a Python file sits for `import`: its path below the import root it was found in (a site-packages or
// dist-packages folder, or the standard library's lib/pythonX.Y), with '/' between the parts:
//   /usr/lib/python3.12/json/encoder.py                     → "json/encoder.py"
//   /venv/lib/python3.12/site-packages/requests/api.py      → "requests/api.py"
//   /home/me/tools/split.py (a script, or a file under no known root) → "split.py"
//   <frozen importlib._bootstrap>                           → "<frozen importlib._bootstrap>"
std::string pythonImportPath(std::string_view file);
// The dotted module name of a Python file: "json.encoder", "requests.api", "importlib._bootstrap"; a package's
// __init__.py is the package ("json"); a script is its base name without the extension ("split").
std::string pythonModuleName(std::string_view file);

} // namespace emberline::engine
