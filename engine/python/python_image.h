#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace emberline::engine {

// A CPython version, as the binary says it.
struct PythonVersion {
    int major = 0;
    int minor = 0;
    int micro = 0;
    std::string text; // "3.9.18", "3.13.0"
};

// Where the version came from, most trusted first.
enum class PythonVersionSource {
    PyVersion,     // the exported 4-byte Py_Version (3.11+)
    VersionString, // the PY_VERSION text that Py_GetVersion formats, found in the binary
    FileName,      // only the file's name (python3.N, libpython3.N.so): a guess, said as one
};

// One function symbol of the eval loop: _PyEval_EvalFrameDefault, or a part GCC split off it
// ("_PyEval_EvalFrameDefault.cold").
struct PythonCodeRange {
    std::string name;
    uint64_t start = 0; // with the load bias
    uint64_t size = 0;
};

// What a CPython binary (an interpreter executable that holds the runtime, or a libpython3.N.so) tells about itself:
// its version, read from the binary and never from the user; where _PyRuntime lies; and the address ranges of the
// eval loop, by which later work recognizes eval frames in native stacks (never by name).
//
// Thread: a plain value; inspectPythonImage() reads files only.
struct PythonImage {
    std::string path;
    std::string buildId;
    PythonVersion version;
    PythonVersionSource versionSource = PythonVersionSource::FileName;
    std::string versionFrom;     // how it was found, in words
    uint64_t runtimeAddress = 0; // _PyRuntime with the load bias; 0 when not found
    std::string runtimeFrom;     // ".dynsym", ".symtab" or the debug file it came from
    // PyCode_Type with the load bias (exported: from .dynsym, else .symtab or the debug file); 0 when not found. The
    // agent's walk checks every code object's type against it.
    uint64_t codeTypeAddress = 0;
    std::vector<PythonCodeRange> evalLoop;
    // A full symbol table (.symtab, from the binary or its debug file) was read, so a split-off part of the eval loop
    // would be in evalLoop; with the dynamic symbols alone only the main part is known.
    bool evalLoopComplete = false;
    // The interpreter's functions that only pass a call on (_PyFunction_Vectorcall, _PyEval_Vector, ...: 3.8 to 3.10
    // go through several for every Python call), sorted by address: between two calls of the eval loop they are left
    // out of a stack, as the loop's own frames are replaced.
    std::vector<PythonCodeRange> forwarders;

    bool evalLoopKnown() const { return !evalLoop.empty(); }
};

// Inspects the ELF file at `path`, loaded at `bias` (runtime address = ELF address + bias; 0 for the file's own
// addresses). An error when it cannot be read, or when it is not a CPython (it defines neither Py_GetVersion nor
// _PyRuntime: an executable that links libpython is not one, its libpython is). The version comes from Py_Version,
// else from the PY_VERSION text that Py_GetVersion references, else from a version string alone in .rodata, and only
// last from the file name. _PyRuntime comes from .dynsym, else .symtab, else the debug file found by build id under
// /usr/lib/debug/.build-id.
Result<PythonImage> inspectPythonImage(const std::string &path, int64_t bias = 0);

// Whether process `pid` may run a CPython, at a glance (its executable is named python*, or a libpython3 is mapped):
// the cheap test before findPythonInProcess, so that a program's other processes (a compiler's, a shell's) are not
// inspected.
bool mayRunPython(int pid);

// The CPython of a running process, among its mappings (/proc/PID/maps): the executable and any libpython3.N.so,
// preferring the one that defines _PyRuntime; the image comes with its load bias applied.
Result<PythonImage> findPythonInProcess(int pid);

} // namespace emberline::engine
