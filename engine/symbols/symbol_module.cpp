#include "engine/symbols/symbol_module.h"

#include "engine/unwind/elf_image.h"

#include "engine/common/strings.h"
#include "engine/symbols/debuglink_search.h"
#include "engine/symbols/demangle.h"
#include "engine/symbols/dwarf_inline.h"
#include "engine/symbols/stores/debug_file_store.h"
#include "engine/symbols/symbols_logging.h"

#include <cstring>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace emberline::engine {
namespace {

// O_NONBLOCK and the S_ISREG check keep a FIFO or device named by a mapping from blocking or being read.
int openRegularFile(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat status {};
    if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
        ::close(fd);
        return -1;
    }
    return fd;
}

std::string joinSearchPath(const std::vector<std::string> &debugDirectories)
{
    // "" is the binary's own directory and ".debug" its subdirectory (gdb's defaults for .gnu_debuglink);
    // libdwfl consults only the absolute entries for build ids. A ':' cannot be expressed in the list.
    std::string path = ":.debug";
    for (const std::string &directory : debugDirectories) {
        if (!directory.empty() && directory.find(':') == std::string::npos)
            path += ':' + directory;
    }
    return path;
}

} // namespace

SymbolModule::SymbolModule(const std::vector<std::string> &debugDirectories)
    : m_debuginfoPath(joinSearchPath(debugDirectories)), m_debugDirectories(debugDirectories)
{
    m_debuginfoPathPointer = m_debuginfoPath.data();
    m_callbacks.find_elf = dwfl_build_id_find_elf;
    m_callbacks.find_debuginfo = &SymbolModule::findDebuginfo;
    m_callbacks.section_address = dwfl_offline_section_address;
    m_callbacks.debuginfo_path = &m_debuginfoPathPointer;
    m_dwfl = dwfl_begin(&m_callbacks);
}

// libdwfl's standard search ends with a debuginfod download on this thread; this one stops before it (the
// download is DebuginfodFetcher's, on its own thread) and takes the file it was given first.
int SymbolModule::findDebuginfo(Dwfl_Module *module, void **userdata, const char *moduleName, Dwarf_Addr base,
                                const char *fileName, const char *debuglinkFile, GElf_Word debuglinkCrc,
                                char **debuginfoFileName)
{
    auto *self = static_cast<SymbolModule *>(*userdata);
    // The first call asks for the module's debug file; a later one for a dwz file, which is found by build id.
    if (self != nullptr && !self->m_debugFile.empty() && !self->m_debugFileHandedOut) {
        self->m_debugFileHandedOut = true;
        const int fd = openRegularFile(self->m_debugFile);
        if (fd >= 0) {
            *debuginfoFileName = ::strdup(self->m_debugFile.c_str());
            return self->preferStoredCopy(fd);
        }
    }
    // The module's own debug file (a dwz file is asked for with its name and no CRC) kept uncompressed: handed out
    // before libdwfl's search, which would open the original itself and keep it.
    const bool ownDebugFile = debuglinkFile == nullptr || debuglinkCrc != 0;
    if (self != nullptr && ownDebugFile && !self->m_ownDebugFileAsked) {
        self->m_ownDebugFileAsked = true;
        if (const int copy = self->storedCopyByBuildId(debuginfoFileName); copy >= 0)
            return copy;
    }
    const int fd = dwfl_build_id_find_debuginfo(module, userdata, moduleName, base, fileName, debuglinkFile,
                                                debuglinkCrc, debuginfoFileName);
    // libdwfl keeps the file it opened here: a copy is only noted to be written (if none is kept yet).
    if (fd >= 0 && self != nullptr)
        return self->preferStoredCopy(fd, false);
    if (fd >= 0 || self == nullptr || fileName == nullptr || debuglinkFile == nullptr)
        return fd;
    DebuglinkSearch search;
    search.binaryPath = fileName;
    search.debuglink = debuglinkFile;
    search.crc = debuglinkCrc;
    search.buildId = self->m_buildId;
    search.debugDirectories = self->m_debugDirectories;
    std::string found;
    const int linked = findDebuglinkFile(search, &found);
    if (linked < 0)
        return linked;
    *debuginfoFileName = ::strdup(found.c_str());
    return self->preferStoredCopy(linked);
}

// The debug file under the configured directories' .build-id folders, as its uncompressed copy when one is kept
// (named as the original); -1 otherwise, and libdwfl searches as usual.
int SymbolModule::storedCopyByBuildId(char **debuginfoFileName)
{
    if (m_buildId.size() < 4)
        return -1;
    for (const std::string &directory : m_debugDirectories) {
        if (directory.empty() || directory[0] != '/')
            continue;
        const std::string path =
            directory + "/.build-id/" + m_buildId.substr(0, 2) + '/' + m_buildId.substr(2) + ".debug";
        const int fd = openRegularFile(path);
        if (fd < 0)
            continue;
        const int chosen = preferStoredCopy(fd);
        if (chosen == fd) {
            ::close(fd);
            return -1;
        }
        *debuginfoFileName = ::strdup(path.c_str());
        return chosen;
    }
    return -1;
}

// The module's own debug file (not a dwz file, which has another build id) is swapped for its uncompressed copy
// when one is kept; libdwfl still knows it by the original's name. One with compressed sections and no copy yet is
// copied when this module closes, from the sections libdw inflated for this session.
int SymbolModule::preferStoredCopy(int fd, bool replace)
{
    const std::string copyPath = storedDebugFilePath(debugFileStoreDirectory(), m_buildId, fd);
    if (copyPath.empty() || !m_copyPath.empty() || readElfBuildIdOf(fd) != m_buildId)
        return fd;
    if (const int copy = openStoredDebugFile(copyPath, m_buildId); copy >= 0) {
        if (!replace) {
            ::close(copy);
            return fd;
        }
        ::close(fd);
        return copy;
    }
    if (hasCompressedSections(fd))
        m_copyPath = copyPath;
    return fd;
}

SymbolModule::~SymbolModule()
{
    if (m_dwfl == nullptr)
        return;
    if (!m_copyPath.empty()) {
        Dwarf_Addr bias = 0;
        if (Dwarf *dwarf = dwfl_module_getdwarf(m_module, &bias);
            dwarf != nullptr && !storeDebugFile(m_copyPath, dwarf_getelf(dwarf)))
            qCDebug(lcSymbols, "could not keep an uncompressed copy of the debug file of %s", m_buildId.c_str());
    }
    dwfl_end(m_dwfl);
}

std::unique_ptr<SymbolModule> SymbolModule::openFile(const std::string &path, const std::string &expectedBuildId,
                                                     const std::vector<std::string> &debugDirectories,
                                                     const std::string &debugFile)
{
    const int fd = openRegularFile(path);
    if (fd < 0) {
        qCDebug(lcSymbols, "cannot open %s", path.c_str());
        return nullptr;
    }
    std::unique_ptr<SymbolModule> module(new SymbolModule(debugDirectories));
    module->m_debugFile = debugFile;
    if (!module->report(path, fd))
        return nullptr;
    if (!expectedBuildId.empty() && module->m_buildId != lowercaseHex(expectedBuildId)) {
        qCInfo(lcSymbols, "%s changed since it was mapped: build id %s, expected %s", path.c_str(),
               module->m_buildId.c_str(), expectedBuildId.c_str());
        return nullptr;
    }
    return module;
}

std::unique_ptr<SymbolModule> SymbolModule::openImage(const std::string &name, const void *image, size_t size,
                                                      const std::vector<std::string> &debugDirectories)
{
    const int fd = ::memfd_create("emberline-elf-image", MFD_CLOEXEC);
    if (fd < 0)
        return nullptr;
    const auto *bytes = static_cast<const char *>(image);
    for (size_t written = 0; written < size;) {
        const ssize_t n = ::write(fd, bytes + written, size - written);
        if (n <= 0) {
            ::close(fd);
            return nullptr;
        }
        written += static_cast<size_t>(n);
    }
    std::unique_ptr<SymbolModule> module(new SymbolModule(debugDirectories));
    if (!module->report(name, fd))
        return nullptr;
    return module;
}

// Takes ownership of fd in every case.
bool SymbolModule::report(const std::string &name, int fd)
{
    if (m_dwfl == nullptr) {
        ::close(fd);
        return false;
    }
    dwfl_report_begin(m_dwfl);
    // Base 0: an ET_DYN file is placed at its link-time addresses, like an ET_EXEC one.
    m_module = dwfl_report_elf(m_dwfl, name.c_str(), name.c_str(), fd, 0, false);
    dwfl_report_end(m_dwfl, nullptr, nullptr);
    if (m_module == nullptr) {
        ::close(fd); // not consumed on failure
        qCDebug(lcSymbols, "%s is not a usable ELF file: %s", name.c_str(), dwfl_errmsg(-1));
        return false;
    }

    Elf *elf = dwfl_module_getelf(m_module, &m_bias);
    size_t headerCount = 0;
    if (elf == nullptr || elf_getphdrnum(elf, &headerCount) != 0)
        return false;
    for (size_t i = 0; i < headerCount; ++i) {
        GElf_Phdr header;
        if (gelf_getphdr(elf, static_cast<int>(i), &header) != nullptr && header.p_type == PT_LOAD)
            m_segments.push_back({header.p_offset, header.p_filesz, header.p_vaddr});
    }

    const unsigned char *bits = nullptr;
    GElf_Addr noteAddress = 0;
    const int length = dwfl_module_build_id(m_module, &bits, &noteAddress);
    if (length > 0)
        m_buildId = hexBytes(bits, static_cast<size_t>(length));
    // The find_debuginfo callback finds this object through the module's user data.
    void **userdata = nullptr;
    dwfl_module_info(m_module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (userdata != nullptr)
        *userdata = this;
    return true;
}

ModuleSymbols SymbolModule::symbolInfo()
{
    ModuleSymbols info;
    Dwarf_Addr bias = 0;
    Dwarf *dwarf = dwfl_module_getdwarf(m_module, &bias);
    const char *mainFile = nullptr;
    const char *debugFile = nullptr;
    dwfl_module_info(m_module, nullptr, nullptr, nullptr, nullptr, nullptr, &mainFile, &debugFile);
    const std::string_view debug = debugFile != nullptr ? std::string_view(debugFile) : std::string_view();
    if (dwarf != nullptr) {
        info.status = SymbolStatus::FullDwarf;
        if (debug.empty() || (mainFile != nullptr && debug == mainFile))
            info.source = SymbolSource::InFile;
        else if (!m_debugFile.empty() && debug == m_debugFile)
            info.source = SymbolSource::Debuginfod;
        else if (debug.find("/.build-id/") != std::string_view::npos)
            info.source = SymbolSource::BuildId;
        else
            info.source = SymbolSource::Debuglink;
    } else if (dwfl_module_getsymtab(m_module) > 0) {
        info.status = SymbolStatus::SymbolTable;
        info.source = SymbolSource::InFile;
    } else {
        info.status = SymbolStatus::None;
    }
    return info;
}

std::string SymbolModule::dwarfIdentity()
{
    Dwarf_Addr bias = 0;
    if (dwfl_module_getdwarf(m_module, &bias) == nullptr)
        return {};
    const char *mainFile = nullptr;
    const char *debugFile = nullptr;
    dwfl_module_info(m_module, nullptr, nullptr, nullptr, nullptr, nullptr, &mainFile, &debugFile);
    const char *file = debugFile != nullptr ? debugFile : mainFile;
    struct stat st {};
    if (file == nullptr || ::stat(file, &st) != 0)
        return {};
    return std::string(file) + ' ' + std::to_string(st.st_size) + ' ' + std::to_string(st.st_mtim.tv_sec) + '.' +
           std::to_string(st.st_mtim.tv_nsec) + ' ' + std::to_string(st.st_ino) + ' ' + std::to_string(st.st_dev);
}

std::optional<Dwarf_Addr> SymbolModule::moduleAddress(uint64_t fileOffset) const
{
    for (const LoadSegment &segment : m_segments) {
        if (fileOffset >= segment.offset && fileOffset - segment.offset < segment.fileSize)
            return fileOffset - segment.offset + segment.address + m_bias;
    }
    return std::nullopt;
}

std::string SymbolModule::elfSymbolName(Dwarf_Addr address, Dwarf_Addr *symbolStart)
{
    if (!m_symbols)
        m_symbols = std::make_unique<ElfSymbolTable>(m_module);
    const std::optional<ElfSymbolTable::Match> match = m_symbols->find(address);
    if (!match)
        return {};
    if (symbolStart != nullptr)
        *symbolStart = match->start;
    return demangleSymbol(match->name);
}

std::vector<SymbolFrame> SymbolModule::symbolizeFileOffset(uint64_t fileOffset, LineTableStore *lines)
{
    const std::optional<Dwarf_Addr> address = moduleAddress(fileOffset);
    if (!address)
        return {};
    if (!m_functions)
        m_functions = std::make_unique<DwarfFunctionIndex>(m_module);
    DwarfFrames dwarf = dwarfFrames(m_module, *m_functions, *address, lines);
    std::vector<SymbolFrame> &frames = dwarf.frames;
    if (!frames.empty()) {
        std::string &outerName = frames.back().function;
        if (!dwarf.outermostFromLinkageName) {
            // Internal-linkage C++ functions have no DW_AT_linkage_name, but their ELF symbol is mangled:
            // use it when it is the same function (starts at its entry), for the parameter types.
            Dwarf_Addr symbolStart = 0;
            std::string symbolName = elfSymbolName(*address, &symbolStart);
            const bool sameFunction = dwarf.outermostEntry && symbolStart == *dwarf.outermostEntry;
            if (!symbolName.empty() && (outerName.empty() || (sameFunction && symbolName != outerName &&
                                                              symbolName.find('(') != std::string::npos)))
                outerName = std::move(symbolName);
        }
        if (outerName.empty())
            outerName = "??";
        return frames;
    }
    std::string name = elfSymbolName(*address);
    if (name.empty())
        return {};
    return {SymbolFrame{std::move(name), {}, 0, 0}};
}

std::string readElfBuildId(const std::string &path)
{
    const int fd = openRegularFile(path);
    if (fd < 0)
        return {};
    std::string buildId = readElfBuildIdOf(fd);
    ::close(fd);
    return buildId;
}

} // namespace emberline::engine
