#pragma once

#include "engine/health/unwind_health.h"
#include "engine/symbols/symbol_frame.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

class DebuginfodFetcher;
class LineTableStore;
class SymbolModule;

// Where separate debug files are looked for: `<dir>/.build-id/ab/cdef….debug` by build id, and the name in
// .gnu_debuglink under each directory (and next to the binary, and in its .debug subdirectory).
// With `debuginfod`, a module that has a build id but no DWARF of its own or nearby gets its debug file downloaded
// in the background (DebuginfodFetcher, DEBUGINFOD_URLS).
struct SymbolizerOptions {
    std::vector<std::string> debugDirectories{"/usr/lib/debug"};
    bool debuginfod = false;
    // Where the line tables of modules named from DWARF are kept between sessions (line_table_store.h); "" keeps
    // none.
    std::string lineTableDirectory;
};

// Turns (ELF file, build id, file offset) into function names and source locations with elfutils, at flush
// time. Caches one libdwfl session per (path, build id) and every answer per (build id, or path when there is
// none; file offset), so a flush symbolizes only addresses it has not seen. A file that vanished, changed
// (build id mismatch), or is not ELF yields an empty answer, never a crash; nothing throws out of the class.
// With debuginfod on, a module without DWARF is named from its symbol table (or by address) until its download
// arrives; adoptDownloads() then reopens it with the downloaded file and forgets its answers, so that the
// following flushes name its frames fully. Nothing here waits on the network.
//
// A module that has not been asked for a new address for a few flushes is closed (closeIdleModules), so that the
// debug information of libraries whose code the program no longer reaches new parts of (libdw decompresses a
// file's debug sections whole: 11 MB for libc) does not stay for the session. Its answers stay cached; a new
// address reopens it, and a module reopened so waits twice as long before it is closed again. A file replaced
// on disk after its module was closed is not reopened (its build id no longer matches): addresses first seen
// after that are named by address.
//
// Thread: lives on the exporter thread; not synchronised. A file that cannot be opened is not retried.
class Symbolizer {
public:
    using Options = SymbolizerOptions;

    explicit Symbolizer(Options options = {});
    ~Symbolizer();
    Symbolizer(const Symbolizer &) = delete;
    Symbolizer &operator=(const Symbolizer &) = delete;

    // `fileOffset` = runtime address - mapping start + mapping file offset. Frames innermost (inlined callee)
    // first, outermost last; names demangled; each inline level with its file:line (outer levels at the call
    // site). A name without file:line when only the ELF symbol table knows the address. Empty vector when
    // nothing is known: the caller then writes `module+0xoffset`.
    std::vector<SymbolFrame> symbolize(const std::string &path, const std::string &buildId, uint64_t fileOffset);
    // The vdso: the target runs the same kernel as we do, so our own vdso image (getauxval(AT_SYSINFO_EHDR))
    // symbolizes it; `offset` is relative to the vdso mapping start.
    std::vector<SymbolFrame> symbolizeVdso(uint64_t offset);
    // How the names of this file are found (DWARF or symbol table; in the file, by build id, by debuglink).
    // None when the file cannot be opened or is not the one with `buildId` any more (`replaced` is then set).
    ModuleSymbols moduleSymbols(const std::string &path, const std::string &buildId, bool *replaced = nullptr);
    // GNU build id of an ELF file as lowercase hex, "" if none or unreadable.
    static std::string readBuildId(const std::string &path);
    // Takes the debug files debuginfod delivered since the last call: the modules they belong to are reopened with
    // them at their next use and their cached answers dropped. Returns their build ids (callers drop their own
    // caches of those modules).
    std::vector<std::string> adoptDownloads();
    // Where the download of `buildId`'s debug file stands (NotAsked without debuginfod).
    DebuginfodStatus debuginfodStatus(const std::string &buildId) const;
    // Waits at most `timeoutMs` for the downloads asked for so far; whether none is left.
    bool waitForDownloads(int timeoutMs);
    // Downloads asked for since the session began (each build id counts once).
    size_t downloadsRequested() const { return m_downloadsRequested; }
    // Answers held in the cache (empty answers included).
    size_t cachedAddresses() const { return m_answerCount; }
    // After a flush is symbolized: closes the modules that no flush of the last few (kIdleFlushes, doubled at
    // every reopen of the module) asked for a new address. Returns how many it closed.
    size_t closeIdleModules();
    // Modules open now (the vdso not counted).
    size_t openModules() const;
    // Keeps the line tables decoded in this session for the next (lineTableDirectory). Writes files: call it off the
    // GUI thread, at the session's end. Returns how many modules' tables it wrote.
    size_t keepLineTables();
    // Compilation units whose line tables were read back from earlier sessions, and decoded in this one.
    size_t lineUnitsReadBack() const;
    size_t lineUnitsDecoded() const;
    static constexpr uint32_t kIdleFlushes = 3;

private:
    using Frames = std::vector<SymbolFrame>;
    // One (path, build id): its module while open, and what outlives a close.
    struct ModuleSlot {
        std::unique_ptr<SymbolModule> module; // null when the file could not be used, or while closed
        bool closed = false;                  // closed while idle: reopened at its next new address
        uint64_t lastUsedFlush = 0;
        uint32_t idleFlushes = kIdleFlushes;
        std::string cacheKey;                 // its answers' key (the file's build id, or its path)
        std::optional<ModuleSymbols> symbols; // moduleSymbols' answer, once asked
    };
    ModuleSlot &slot(const std::string &path, const std::string &buildId);
    SymbolModule *module(ModuleSlot &slot, const std::string &path, const std::string &buildId);
    // Opens the file with the debug file downloaded for its build id, if any (`downloaded` says which).
    std::unique_ptr<SymbolModule> openModule(const std::string &path, const std::string &buildId,
                                             bool &downloaded) const;
    SymbolModule *vdsoModule();
    // The kept line tables of a module just opened (by its build id), read back at its first opening.
    LineTableStore *lineTables(SymbolModule &module);
    Frames answer(const std::string &cacheKey, uint64_t fileOffset, SymbolModule &module);

    void requestDebugFile(SymbolModule &module, const std::string &path);

    Options m_options;
    std::unique_ptr<DebuginfodFetcher> m_fetcher;                        // null without debuginfod
    std::unordered_map<std::string, std::string> m_downloadedDebugFiles; // build id -> checked debug file
    size_t m_downloadsRequested = 0;
    // Key: path '\n' build id. An entry without a module and not closed remembers a file that could not be used.
    std::unordered_map<std::string, ModuleSlot> m_modules;
    uint64_t m_flushes = 0; // closeIdleModules calls
    // Key: build id, or path when the file has none; then the file offset.
    std::unordered_map<std::string, std::unordered_map<uint64_t, Frames>> m_answers;
    size_t m_answerCount = 0;
    // By build id; null for a module named without DWARF (its tables are not worth keeping).
    std::unordered_map<std::string, std::unique_ptr<LineTableStore>> m_lineTables;
    std::unique_ptr<SymbolModule> m_vdso;
    bool m_vdsoOpened = false;
};

} // namespace emberline::engine
