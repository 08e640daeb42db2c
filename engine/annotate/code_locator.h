#pragma once

#include "engine/common/result.h"

#include <string>
#include <vector>

namespace emberline::engine {

class DebuginfodClient;

// Where an ELF file with the machine code of a mapping was found, and what was learnt on the way (a file refused
// for its build id, a file missing). Shown beside the disassembly so that the user knows what is annotated.
struct LocatedCode {
    std::string path;
    std::string origin; // "recorded path", "debug directory" or "debuginfod"
    std::vector<std::string> notes;
};

// Finds the ELF file that holds a mapping's code by its build id: the recorded path first (refused, with a note,
// when its build id differs: a file rebuilt or upgraded since the recording must never be annotated with the old
// costs), then <dir>/.build-id/xx/yyyy (without .debug: where distributions link the binary itself; the .debug
// files hold no code), then debuginfod's executable when DEBUGINFOD_URLS is set and a client is given. A mapping
// without a build id cannot be checked: its recorded path is used as it is, with a note saying so.
//
// Thread: any, but the debuginfod client's thread rules hold (never the GUI thread).
class CodeLocator {
public:
    CodeLocator(std::vector<std::string> debugDirectories, DebuginfodClient *debuginfod)
        : m_debugDirectories(std::move(debugDirectories)), m_debuginfod(debuginfod)
    {
    }

    // The error's message says every place looked at and why each was refused.
    Result<LocatedCode> locate(const std::string &recordedPath, const std::string &buildId) const;

private:
    std::vector<std::string> m_debugDirectories;
    DebuginfodClient *m_debuginfod;
};

} // namespace emberline::engine
