#include "engine/annotate/code_module.h"

#include "engine/annotate/debuginfod_client.h"
#include "engine/common/strings.h"
#include "engine/symbols/demangle.h"
#include "engine/symbols/dwarf_inline.h"

#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace emberline::engine {
namespace {

// Functions larger than this are not disassembled whole: a listing nobody reads, and a bound on memory.
constexpr uint64_t kMaxFunctionBytes = 4u << 20;

std::string searchPath(const std::vector<std::string> &debugDirectories)
{
    // As SymbolModule: the binary's own directory and its .debug subdirectory, then the absolute directories,
    // where libdwfl also looks by build id.
    std::string path = ":.debug";
    for (const std::string &directory : debugDirectories) {
        if (!directory.empty() && directory.find(':') == std::string::npos)
            path += ':' + directory;
    }
    return path;
}

std::string pathOfDescriptor(int fd)
{
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
    return ec ? std::string() : path.string();
}

} // namespace

CodeModule::~CodeModule()
{
    if (m_dwfl != nullptr)
        dwfl_end(m_dwfl);
}

Result<std::unique_ptr<CodeModule>> CodeModule::open(const std::string &path,
                                                     const std::vector<std::string> &debugDirectories,
                                                     DebuginfodClient *debuginfod)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return makeError(Error::Code::Io, path + ": " + std::strerror(errno));
    struct stat status {};
    if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
        ::close(fd);
        return makeError(Error::Code::Io, path + ": not a regular file");
    }
    std::unique_ptr<CodeModule> module(new CodeModule);
    module->m_path = path;
    module->m_debuginfod = debuginfod;
    module->m_debuginfoPath = searchPath(debugDirectories);
    module->m_debuginfoPathPointer = module->m_debuginfoPath.data();
    module->m_callbacks.find_elf = dwfl_build_id_find_elf;
    module->m_callbacks.find_debuginfo = &CodeModule::findDebuginfo;
    module->m_callbacks.section_address = dwfl_offline_section_address;
    module->m_callbacks.debuginfo_path = &module->m_debuginfoPathPointer;
    module->m_dwfl = dwfl_begin(&module->m_callbacks);
    if (module->m_dwfl == nullptr) {
        ::close(fd);
        return makeError(Error::Code::Internal, "libdwfl could not start");
    }
    dwfl_report_begin(module->m_dwfl);
    module->m_module = dwfl_report_elf(module->m_dwfl, path.c_str(), path.c_str(), fd, 0, false);
    dwfl_report_end(module->m_dwfl, nullptr, nullptr);
    if (module->m_module == nullptr) {
        ::close(fd);
        return makeError(Error::Code::Format, path + ": not an ELF file (" + dwfl_errmsg(-1) + ")");
    }
    void **userdata = nullptr;
    dwfl_module_info(module->m_module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (userdata != nullptr)
        *userdata = module.get();
    if (!module->readHeaders())
        return makeError(Error::Code::Format, path + ": no program headers");
    return module;
}

// libdwfl's own search (build id and .gnu_debuglink under the directories), then debuginfod through our client,
// so that the query obeys its thread rule and its failure is ours to report.
int CodeModule::findDebuginfo(Dwfl_Module *module, void **userdata, const char *moduleName, Dwarf_Addr base,
                              const char *fileName, const char *debuglinkFile, GElf_Word debuglinkCrc,
                              char **debuginfoFileName)
{
    const int fd = dwfl_standard_find_debuginfo(module, userdata, moduleName, base, fileName, debuglinkFile,
                                                debuglinkCrc, debuginfoFileName);
    auto *self = userdata != nullptr ? static_cast<CodeModule *>(*userdata) : nullptr;
    if (self == nullptr)
        return fd;
    if (fd >= 0) {
        // libdwfl's own debuginfod query (when DEBUGINFOD_URLS was set as it loaded) returns no name.
        self->m_debugFile = *debuginfoFileName != nullptr ? *debuginfoFileName : pathOfDescriptor(fd);
        return fd;
    }
    if (self->m_debuginfod == nullptr || self->m_buildId.empty() || !DebuginfodClient::configured())
        return fd;
    auto found = self->m_debuginfod->findDebuginfo(self->m_buildId);
    if (!found)
        return -1;
    const int debugFd = ::open(found.value().c_str(), O_RDONLY | O_CLOEXEC);
    if (debugFd >= 0) {
        *debuginfoFileName = ::strdup(found.value().c_str());
        self->m_debugFile = found.value();
    }
    return debugFd;
}

bool CodeModule::readHeaders()
{
    Elf *elf = dwfl_module_getelf(m_module, &m_bias);
    size_t headerCount = 0;
    if (elf == nullptr || elf_getphdrnum(elf, &headerCount) != 0)
        return false;
    GElf_Ehdr header;
    if (gelf_getehdr(elf, &header) == nullptr)
        return false;
    m_machine = header.e_machine;
    m_is64Bit = gelf_getclass(elf) == ELFCLASS64;
    for (size_t i = 0; i < headerCount; ++i) {
        GElf_Phdr program;
        if (gelf_getphdr(elf, static_cast<int>(i), &program) != nullptr && program.p_type == PT_LOAD)
            m_segments.push_back({program.p_offset, program.p_filesz, program.p_vaddr});
    }
    const unsigned char *bits = nullptr;
    GElf_Addr noteAddress = 0;
    const int length = dwfl_module_build_id(m_module, &bits, &noteAddress);
    if (length > 0)
        m_buildId = hexBytes(bits, static_cast<size_t>(length));
    // Loads the symbols and DWARF now (from wherever they are), so that debugFile() can tell.
    Dwarf_Addr bias = 0;
    dwfl_module_getdwarf(m_module, &bias);
    dwfl_module_getsymtab(m_module);
    return true;
}

std::optional<uint64_t> CodeModule::addressOfFileOffset(uint64_t fileOffset) const
{
    for (const LoadSegment &segment : m_segments) {
        if (fileOffset >= segment.offset && fileOffset - segment.offset < segment.fileSize)
            return fileOffset - segment.offset + segment.address;
    }
    return std::nullopt;
}

std::optional<CodeModule::Range> CodeModule::functionAt(uint64_t address)
{
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char *name = dwfl_module_addrinfo(m_module, address + m_bias, &offset, &symbol, nullptr, nullptr, nullptr);
    if (name != nullptr && symbol.st_size > 0 && offset < symbol.st_size && symbol.st_size <= kMaxFunctionBytes)
        return Range{address - offset, address - offset + symbol.st_size, demangleSymbol(name)};

    if (!m_functions)
        m_functions = std::make_unique<DwarfFunctionIndex>(m_module);
    Dwarf_Die function;
    Dwarf_Addr bias = 0;
    if (!m_functions->findFunction(address + m_bias, &function, &bias))
        return std::nullopt;
    const Dwarf_Addr dwarfAddress = address + m_bias - bias;
    Dwarf_Addr base = 0, start = 0, end = 0;
    for (ptrdiff_t next = 0; (next = dwarf_ranges(&function, next, &base, &start, &end)) > 0;) {
        if (dwarfAddress >= start && dwarfAddress < end && end - start <= kMaxFunctionBytes) {
            const char *dwarfName = dwarf_diename(&function);
            return Range{start + bias - m_bias, end + bias - m_bias, dwarfName != nullptr ? dwarfName : ""};
        }
    }
    return std::nullopt;
}

Result<std::vector<uint8_t>> CodeModule::code(uint64_t start, uint64_t end) const
{
    Dwarf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(m_module, &bias);
    for (Elf_Scn *section = elf != nullptr ? elf_nextscn(elf, nullptr) : nullptr; section != nullptr;
         section = elf_nextscn(elf, section)) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == nullptr || (header.sh_flags & SHF_ALLOC) == 0)
            continue;
        if (start < header.sh_addr || start - header.sh_addr >= header.sh_size)
            continue;
        if (header.sh_type == SHT_NOBITS)
            return makeError(Error::Code::Format, m_path + " holds no code at this address (a debug file?)");
        Elf_Data *data = elf_getdata(section, nullptr);
        if (data == nullptr || data->d_buf == nullptr)
            return makeError(Error::Code::Format, m_path + ": its code section cannot be read");
        const uint64_t from = start - header.sh_addr;
        const uint64_t to = std::min<uint64_t>(end - header.sh_addr, std::min<uint64_t>(header.sh_size, data->d_size));
        if (from >= to)
            break;
        const auto *bytes = static_cast<const uint8_t *>(data->d_buf);
        return std::vector<uint8_t>(bytes + from, bytes + to);
    }
    return makeError(Error::Code::Format, m_path + ": no section holds the function's code");
}

CodeModule::SourceLine CodeModule::lineAt(uint64_t address) const
{
    if (!m_functions)
        m_functions = std::make_unique<DwarfFunctionIndex>(m_module);
    const SymbolFrame location = lineTableLocation(m_module, *m_functions, address + m_bias);
    return {location.file, location.line};
}

} // namespace emberline::engine
