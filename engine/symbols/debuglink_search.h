#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace emberline::engine {

// Finds the separate debug file that a binary's .gnu_debuglink names, where gdb and libdwfl look for it: next to
// the binary, in its .debug subdirectory, and under each debug directory (with the binary's directory appended,
// then without). A candidate is taken when its GNU build id is `buildId`, or, for binaries without one, when its
// CRC-32 is `crc`; the binary itself is never taken. SymbolModule uses it in place of libdwfl's standard search,
// whose last resort is a debuginfod download on the calling thread.
//
// Thread: any; reads files only.
struct DebuglinkSearch {
    std::string binaryPath;
    std::string debuglink; // the file name in .gnu_debuglink
    uint32_t crc = 0;
    std::string buildId; // lowercase hex, "" when the binary has none
    std::vector<std::string> debugDirectories;
};

// An open descriptor of the debug file and its path in `found`, or -1.
int findDebuglinkFile(const DebuglinkSearch &search, std::string *found);

} // namespace emberline::engine
