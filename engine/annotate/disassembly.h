#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

// One machine instruction of a function with its cost: `self` sums the samples whose leaf frame's address lies in
// it, `total` each sample once when any of its frames does (callers' frames hold return address - 1, inside the
// call instruction). `file:line` is the line table's row for it, the innermost inlined line.
struct AnnotatedInstruction {
    uint64_t address = 0; // link-time address, as objdump shows it
    std::vector<uint8_t> bytes;
    std::string text;
    std::string file;
    int64_t line = 0;
    int64_t self = 0;
    int64_t total = 0;
};

// A function's machine code annotated with a profile's costs, or why it could not be (`error`, and then no
// instructions). `notes` say what the user should know: a file refused for its build id before another was
// found, where symbols came from, samples that fell between instructions.
struct FunctionDisassembly {
    std::string name;
    std::string file;   // the source file of the function, as the profile records it
    std::string binary; // the ELF file disassembled
    std::string origin; // how it was found: "recorded path", "debug directory", "debuginfod"
    std::string buildId;
    uint64_t start = 0;
    uint64_t end = 0;
    int64_t self = 0;
    int64_t total = 0;
    std::vector<AnnotatedInstruction> instructions;
    std::vector<std::string> notes;
    std::string error;
};

struct DisassemblyRequest {
    using NameMatcher = std::function<bool(const std::string &name)>;
    NameMatcher matches; // the functions to show, by the name of the out-of-line function of an address
    int sampleType = 0;
    std::vector<std::string> debugDirectories{"/usr/lib/debug"};
    bool useDebuginfod = true; // when DEBUGINFOD_URLS is set
    size_t maxFunctions = 100; // the costliest ones
};

// `emberline report --disasm` and the disassembly view: for every function of the profile's addresses whose name
// matches, finds the ELF file by the mapping's build id (CodeLocator: never a file whose build id differs), reads
// the function's range from its symbols or DWARF, decodes it with capstone and puts each location's cost on the
// instruction that holds its address. Functions come costliest (total) first.
//
// Errors (no function listed): a profile without instruction addresses, no function matching. A function whose
// file cannot be found or read is listed with its `error`.
//
// Thread: any thread but the GUI thread (it may query debuginfod); reads the immutable profile and the file
// system. `perStack` is one value per interned stack (valuesPerStack).
Result<std::vector<FunctionDisassembly>> disassembleFunctions(const Profile &profile, std::span<const int64_t> perStack,
                                                              const DisassemblyRequest &request,
                                                              const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
