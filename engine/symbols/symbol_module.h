#pragma once

#include "engine/health/unwind_health.h"
#include "engine/symbols/dwarf_function_index.h"
#include "engine/symbols/elf_symbol_table.h"
#include "engine/symbols/stores/line_table_store.h"
#include "engine/symbols/symbol_frame.h"

#include <cstdint>
#include <elfutils/libdwfl.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace emberline::engine {

// One ELF file opened through libdwfl at its own link-time addresses, together with its separate debug file
// when one is found by build id or .gnu_debuglink under the configured directories, or given (a file debuginfod
// downloaded and DebuginfodFetcher checked). libdwfl's standard search is not used: its last resort, a
// debuginfod download, would hold up the exporter thread, so DebuginfodFetcher does it on its own thread.
// Answers file offsets
// (what a mapping tells the sampler) by translating them through the PT_LOAD program headers.
// Thread: belongs to its Symbolizer (the exporter thread); libdwfl sessions are not shared between threads.
// Invariant: m_dwfl and m_module are valid for the object's whole life (the factories return nullptr
// otherwise).
class SymbolModule {
public:
    // nullptr when the file is missing, not a regular file, not ELF, or when `expectedBuildId` is not empty
    // and the file's build id differs (the file was replaced since it was mapped).
    // `debugFile`, when not empty, is the separate debug file to use instead of searching for one.
    static std::unique_ptr<SymbolModule> openFile(const std::string &path, const std::string &expectedBuildId,
                                                  const std::vector<std::string> &debugDirectories,
                                                  const std::string &debugFile = {});
    // An ELF image in memory (the vdso), handed to libdwfl through an anonymous file.
    static std::unique_ptr<SymbolModule> openImage(const std::string &name, const void *image, size_t size,
                                                   const std::vector<std::string> &debugDirectories);
    ~SymbolModule();
    SymbolModule(const SymbolModule &) = delete;
    SymbolModule &operator=(const SymbolModule &) = delete;

    // Empty when the offset lies in no loaded segment or nothing names it.
    // With `lines`, the line tables kept between sessions answer first (line_table_store.h).
    std::vector<SymbolFrame> symbolizeFileOffset(uint64_t fileOffset, LineTableStore *lines = nullptr);
    const std::string &buildId() const { return m_buildId; }
    // Whether names come with DWARF or from the symbol table alone, and where the debug file was found.
    // Loads the debug information if it was not loaded yet.
    ModuleSymbols symbolInfo();
    // The file this module's DWARF is read from, as "path size mtime inode device" (what changes when it is
    // rebuilt, reinstalled or replaced); "" when the module has no DWARF. Loads the debug information.
    std::string dwarfIdentity();

private:
    struct LoadSegment {
        uint64_t offset = 0;
        uint64_t fileSize = 0;
        uint64_t address = 0; // p_vaddr
    };

    explicit SymbolModule(const std::vector<std::string> &debugDirectories);
    bool report(const std::string &name, int fd);
    static int findDebuginfo(Dwfl_Module *module, void **userdata, const char *moduleName, Dwarf_Addr base,
                             const char *fileName, const char *debuglinkFile, GElf_Word debuglinkCrc,
                             char **debuginfoFileName);
    int preferStoredCopy(int fd, bool replace = true);
    int storedCopyByBuildId(char **debuginfoFileName);
    std::optional<Dwarf_Addr> moduleAddress(uint64_t fileOffset) const;
    std::string elfSymbolName(Dwarf_Addr address, Dwarf_Addr *symbolStart = nullptr);

    std::string m_debuginfoPath; // libdwfl's search path: ":.debug:<dir>:<dir>..."
    char *m_debuginfoPathPointer = nullptr;
    Dwfl_Callbacks m_callbacks{};
    Dwfl *m_dwfl = nullptr;
    Dwfl_Module *m_module = nullptr;
    Dwarf_Addr m_bias = 0; // libdwfl address = p_vaddr + m_bias
    std::vector<LoadSegment> m_segments;
    std::string m_buildId;
    std::vector<std::string> m_debugDirectories;
    std::string m_debugFile; // given by the caller (debuginfod), or ""
    bool m_debugFileHandedOut = false;
    bool m_ownDebugFileAsked = false;
    std::string m_copyPath; // where an uncompressed copy of the debug file is to be kept when this closes, or ""
    // Built on first use: a module whose addresses all have DWARF names never sorts its symbol table.
    std::unique_ptr<ElfSymbolTable> m_symbols;
    std::unique_ptr<DwarfFunctionIndex> m_functions;
};

// Lowercase hex of the GNU build id note of an ELF file; "" if it has none or cannot be read.
std::string readElfBuildId(const std::string &path);
// The same of a file open at `fd`: readElfBuildIdOf (engine/unwind/elf_image.h).

} // namespace emberline::engine
