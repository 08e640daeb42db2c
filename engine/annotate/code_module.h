#pragma once

#include "engine/common/result.h"
#include "engine/symbols/dwarf_function_index.h"

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace emberline::engine {

class DebuginfodClient;

// One ELF file that holds machine code, opened through libdwfl at its link-time addresses, with its symbols and
// line table from wherever they are: the file itself, a separate debug file found by build id or .gnu_debuglink
// under the debug directories, or debuginfod. Addresses in and out are link-time addresses (as objdump shows
// them); file offsets (what a mapping records) are translated through the PT_LOAD headers.
//
// Thread: the thread that opened it; libdwfl sessions are not shared.
class CodeModule {
public:
    struct Range {
        uint64_t start = 0;
        uint64_t end = 0; // exclusive
        std::string name; // demangled symbol, or DWARF's name
    };
    struct SourceLine {
        std::string file;
        int64_t line = 0;
    };

    // `debuginfod` may be null (then only the local directories are searched for symbols).
    static Result<std::unique_ptr<CodeModule>>
    open(const std::string &path, const std::vector<std::string> &debugDirectories, DebuginfodClient *debuginfod);
    ~CodeModule();
    CodeModule(const CodeModule &) = delete;
    CodeModule &operator=(const CodeModule &) = delete;

    std::optional<uint64_t> addressOfFileOffset(uint64_t fileOffset) const;
    // The function whose code contains `address`: its sized ELF symbol, else the DWARF subprogram range.
    std::optional<Range> functionAt(uint64_t address);
    // The bytes of [start, end) from the section that holds them; an error for a section without contents
    // (a debug file's NOBITS .text).
    Result<std::vector<uint8_t>> code(uint64_t start, uint64_t end) const;
    // The line table's row for `address`: the innermost (inlined) source line.
    SourceLine lineAt(uint64_t address) const;

    int machine() const { return m_machine; }
    bool is64Bit() const { return m_is64Bit; }
    const std::string &path() const { return m_path; }
    const std::string &buildId() const { return m_buildId; }
    // Where symbols and lines come from when not from the file itself; empty otherwise.
    const std::string &debugFile() const { return m_debugFile; }

private:
    CodeModule() = default;
    static int findDebuginfo(Dwfl_Module *module, void **userdata, const char *moduleName, Dwarf_Addr base,
                             const char *fileName, const char *debuglinkFile, GElf_Word debuglinkCrc,
                             char **debuginfoFileName);
    bool readHeaders();

    struct LoadSegment {
        uint64_t offset = 0;
        uint64_t fileSize = 0;
        uint64_t address = 0;
    };

    std::string m_path;
    std::string m_debuginfoPath;
    char *m_debuginfoPathPointer = nullptr;
    Dwfl_Callbacks m_callbacks{};
    Dwfl *m_dwfl = nullptr;
    Dwfl_Module *m_module = nullptr;
    Dwarf_Addr m_bias = 0;
    DebuginfodClient *m_debuginfod = nullptr;
    std::vector<LoadSegment> m_segments;
    std::string m_buildId;
    std::string m_debugFile;
    int m_machine = 0;
    bool m_is64Bit = true;
    mutable std::unique_ptr<DwarfFunctionIndex> m_functions; // built at first use (lineAt is const)
};

} // namespace emberline::engine
