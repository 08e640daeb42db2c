#include "engine/python/python_image.h"

#include "engine/common/fd_closer.h"
#include "engine/process/proc_files.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/elf_image.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/process_map.h"

#include <algorithm>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <regex>

namespace emberline::engine {

namespace {

// A function or object symbol that the file defines.
struct DefinedSymbol {
    uint64_t value = 0;
    uint64_t size = 0;
    bool found = false;
};

// The symbols Emberline looks for in one symbol table.
struct SymbolFinds {
    DefinedSymbol pyVersion;
    DefinedSymbol getVersion;
    DefinedSymbol runtime;
    DefinedSymbol codeType;
    std::vector<PythonCodeRange> evalLoop;
    std::vector<PythonCodeRange> forwarders;
    bool hadDynsym = false;
    bool hadSymtab = false;
};

constexpr std::string_view kEvalLoop = "_PyEval_EvalFrameDefault";

// The interpreter's functions that only pass a call on, from a call site to the eval loop that runs the callee (3.8
// to 3.10 call the loop again for every Python call through several of them; from 3.11 a C caller still goes through
// some), or from the eval loop to a C function (a method, a type's slot, a generator's resumption). Between two calls
// of the eval loop they carry no information of the program's: the Python frames say who called whom.
constexpr std::string_view kForwarders[] = {
    "_PyEval_EvalFrame",
    "PyEval_EvalFrameEx",
    "PyEval_EvalFrame",
    "_PyEval_EvalCode",
    "_PyEval_EvalCodeWithName",
    "PyEval_EvalCode",
    "PyEval_EvalCodeEx",
    "_PyEval_Vector",
    "function_code_fastcall",
    "_PyFunction_Vectorcall",
    "_PyFunction_FastCallDict",
    "_PyFunction_FastCallKeywords",
    "call_function",
    "_PyObject_Call",
    "PyObject_Call",
    "_PyObject_Call_Prepend",
    "PyVectorcall_Call",
    "_PyObject_FastCallDict",
    "_PyObject_FastCallDictTstate",
    "_PyObject_MakeTpCall",
    "PyObject_Vectorcall",
    "PyObject_VectorcallDict",
    "_PyObject_VectorcallTstate",
    "PyObject_VectorcallMethod",
    "PyObject_CallOneArg",
    "PyObject_CallNoArgs",
    "PyObject_CallObject",
    "PyObject_CallFunctionObjArgs",
    "PyObject_CallMethodObjArgs",
    "_PyObject_CallMethodIdObjArgs",
    "_PyObject_FastCall_Prepend",
    "method_vectorcall",
    "cfunction_call",
    "cfunction_vectorcall_O",
    "cfunction_vectorcall_FASTCALL",
    "cfunction_vectorcall_FASTCALL_KEYWORDS",
    "cfunction_vectorcall_NOARGS",
    "method_vectorcall_O",
    "method_vectorcall_FASTCALL",
    "method_vectorcall_FASTCALL_KEYWORDS",
    "method_vectorcall_NOARGS",
    "method_vectorcall_VARARGS",
    "method_vectorcall_VARARGS_KEYWORDS",
    "slot_tp_call",
    "slot_tp_init",
    "type_call",
    "vectorcall_method",
    "vectorcall_unbound",
    "call_unbound",
    "call_unbound_noarg",
    "gen_send_ex",
    "gen_send_ex2",
    "gen_iternext",
    "gen_send",
    "coro_wrapper_iternext",
    "builtin_exec_impl",
    "builtin_exec",
    "partial_call",
    "partial_vectorcall",
    "bounded_lru_cache_wrapper",
    "lru_cache_call",
    "property_descr_get",
    "wrapperdescr_call",
    "wrapper_call",
    "_PyObject_CallFunction_SizeT",
    "object_vacall",
    "PyObject_CallFunction",
    "_PyObject_CallNoArg",
    "_PyObject_Vectorcall",
};

// Whether `name` is one of kForwarders, or a part GCC split off one (".cold", ".part.0", ".isra.0", ".constprop.0").
bool isForwarder(std::string_view name)
{
    const std::string_view whole = name.substr(0, name.find('.'));
    for (std::string_view f : kForwarders)
        if (whole == f)
            return true;
    return false;
}

// Reads the defined symbols of interest from one table (SHT_DYNSYM or SHT_SYMTAB) of `elf`.
void scanTable(Elf *elf, Elf_Scn *scn, const GElf_Shdr &shdr, SymbolFinds &out)
{
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data || shdr.sh_entsize == 0)
        return;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    const bool dynamic = shdr.sh_type == SHT_DYNSYM;
    for (size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
            continue;
        const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (!name || !*name)
            continue;
        const std::string_view n(name);
        const DefinedSymbol found{sym.st_value, sym.st_size, true};
        if (n == "Py_Version" && !out.pyVersion.found)
            out.pyVersion = found;
        else if (n == "Py_GetVersion" && !out.getVersion.found)
            out.getVersion = found;
        else if (n == "_PyRuntime" && !out.runtime.found)
            out.runtime = found;
        else if (n == "PyCode_Type" && !out.codeType.found)
            out.codeType = found;
        else if (n.starts_with(kEvalLoop) && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > 0) {
            // Either the whole name or a part GCC split off (".cold", ".part.0"); the same part in both tables once.
            const bool whole = n.size() == kEvalLoop.size() || n[kEvalLoop.size()] == '.';
            bool seen = false;
            for (const PythonCodeRange &r : out.evalLoop)
                seen = seen || r.start == sym.st_value;
            if (whole && !seen)
                out.evalLoop.push_back({std::string(n), sym.st_value, sym.st_size});
        } else if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > 0 && isForwarder(n)) {
            out.forwarders.push_back({std::string(n), sym.st_value, sym.st_size});
        }
    }
    (dynamic ? out.hadDynsym : out.hadSymtab) = true;
}

// Reads both symbol tables of the file at `path`; false when it is not ELF.
bool scanSymbols(const std::string &path, SymbolFinds &dynsym, SymbolFinds &symtab)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    FdCloser closer(fd);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        if (elf)
            elf_end(elf);
        return false;
    }
    Elf_Scn *scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr))
            continue;
        if (shdr.sh_type == SHT_DYNSYM)
            scanTable(elf, scn, shdr, dynsym);
        else if (shdr.sh_type == SHT_SYMTAB)
            scanTable(elf, scn, shdr, symtab);
    }
    elf_end(elf);
    return true;
}

// "3.N.M" with an optional pre-release and '+': the PY_VERSION text.
bool parseVersionText(const std::string &text, PythonVersion &out)
{
    static const std::regex pattern(R"(^(3)\.(\d{1,2})\.(\d{1,2})((a|b|rc)\d{1,2})?\+?$)");
    std::smatch m;
    if (!std::regex_match(text, m, pattern))
        return false;
    out.major = std::stoi(m[1]);
    out.minor = std::stoi(m[2]);
    out.micro = std::stoi(m[3]);
    out.text = text;
    return true;
}

// The NUL-terminated text at `vaddr` in the file, at most 32 bytes; empty when not there.
std::string stringAt(const ElfImage &image, uint64_t vaddr)
{
    char buf[33] = {};
    size_t n = sizeof buf - 1;
    while (n > 0 && !image.readVaddr(vaddr, buf, n))
        n /= 2; // near the end of a segment
    buf[n] = '\0';
    return std::string(buf, strnlen(buf, n));
}

// The PY_VERSION text among the strings Py_GetVersion's x86-64 code points at: `lea disp32(%rip), reg` (position-
// independent code) and `mov $imm32, reg32` (an executable linked at a fixed address). The text may share its bytes
// with a longer string that ends with it (the linker merges string tails), so only the referenced address tells.
bool versionFromGetVersion(const ElfImage &image, const DefinedSymbol &fn, PythonVersion &out)
{
    const uint64_t size = std::min<uint64_t>(fn.size ? fn.size : 256, 1024);
    std::vector<uint8_t> code(size);
    if (!image.readVaddr(fn.value, code.data(), code.size()))
        return false;
    for (size_t i = 0; i + 5 <= code.size(); ++i) {
        uint64_t target = 0;
        if (i + 7 <= code.size() && (code[i] & 0xfb) == 0x48 && code[i + 1] == 0x8d && (code[i + 2] & 0xc7) == 0x05) {
            int32_t disp = 0;
            std::memcpy(&disp, &code[i + 3], 4);
            target = fn.value + i + 7 + static_cast<int64_t>(disp);
        } else if (code[i] >= 0xb8 && code[i] <= 0xbf) {
            uint32_t imm = 0;
            std::memcpy(&imm, &code[i + 1], 4);
            target = imm;
        } else {
            continue;
        }
        if (parseVersionText(stringAt(image, target), out))
            return true;
    }
    return false;
}

// A version string standing alone (NUL before and after) in .rodata, when every such string agrees on 3.N.
bool versionFromRodata(const std::string &path, PythonVersion &out)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    FdCloser closer(fd);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    if (!elf)
        return false;
    size_t shstrndx = 0;
    elf_getshdrstrndx(elf, &shstrndx);
    std::vector<PythonVersion> found;
    Elf_Scn *scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
        GElf_Shdr shdr;
        const char *name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, shstrndx, shdr.sh_name) : nullptr;
        Elf_Data *data = name && std::strcmp(name, ".rodata") == 0 ? elf_rawdata(scn, nullptr) : nullptr;
        if (!data || !data->d_buf)
            continue;
        const auto *bytes = static_cast<const char *>(data->d_buf);
        for (size_t i = 1; i + 5 < data->d_size; ++i) {
            if (bytes[i - 1] != '\0' || bytes[i] != '3' || bytes[i + 1] != '.')
                continue;
            PythonVersion v;
            if (parseVersionText(std::string(bytes + i, strnlen(bytes + i, std::min<size_t>(16, data->d_size - i))), v))
                found.push_back(v);
        }
    }
    elf_end(elf);
    if (found.empty())
        return false;
    for (const PythonVersion &v : found)
        if (v.major != found[0].major || v.minor != found[0].minor)
            return false;
    out = found[0];
    return true;
}

bool versionFromFileName(const std::string &path, PythonVersion &out)
{
    static const std::regex pattern(R"(^(lib)?python(3)\.(\d{1,2}).*)");
    const std::string name = std::filesystem::path(path).filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, pattern))
        return false;
    out.major = std::stoi(m[2]);
    out.minor = std::stoi(m[3]);
    out.text = std::to_string(out.major) + "." + std::to_string(out.minor);
    return true;
}

std::string versionHex(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

void findVersion(const std::string &path, const ElfImage &image, const SymbolFinds &syms, PythonImage &out)
{
    uint8_t raw[4];
    if (syms.pyVersion.found && image.readVaddr(syms.pyVersion.value, raw, sizeof raw)) {
        uint32_t v = 0;
        std::memcpy(&v, raw, sizeof v);
        out.version.major = static_cast<int>(v >> 24);
        out.version.minor = static_cast<int>((v >> 16) & 0xff);
        out.version.micro = static_cast<int>((v >> 8) & 0xff);
        out.version.text = std::to_string(out.version.major) + "." + std::to_string(out.version.minor) + "." +
                           std::to_string(out.version.micro);
        out.versionSource = PythonVersionSource::PyVersion;
        out.versionFrom = "Py_Version " + versionHex(v);
        return;
    }
    if (syms.getVersion.found && versionFromGetVersion(image, syms.getVersion, out.version)) {
        out.versionSource = PythonVersionSource::VersionString;
        out.versionFrom = "the PY_VERSION text \"" + out.version.text + "\" that Py_GetVersion formats";
        return;
    }
    if (versionFromRodata(path, out.version)) {
        out.versionSource = PythonVersionSource::VersionString;
        out.versionFrom = "the version string \"" + out.version.text + "\" in .rodata";
        return;
    }
    if (versionFromFileName(path, out.version)) {
        out.versionSource = PythonVersionSource::FileName;
        out.versionFrom = "only the file name: the binary did not say its version";
    }
}

// The separate debug file of a build id, where distributions install it.
std::string debugFileByBuildId(const std::string &buildId)
{
    if (buildId.size() < 3)
        return {};
    const std::string path = "/usr/lib/debug/.build-id/" + buildId.substr(0, 2) + "/" + buildId.substr(2) + ".debug";
    return ::access(path.c_str(), R_OK) == 0 ? path : std::string();
}

} // namespace

Result<PythonImage> inspectPythonImage(const std::string &path, int64_t bias)
{
    auto opened = ElfImage::open(path);
    if (!opened)
        return opened.error();
    const ElfImage &image = *opened.value();
    SymbolFinds dynsym, symtab;
    if (!scanSymbols(path, dynsym, symtab))
        return makeError(Error::Code::Format, path + " is not an ELF file");

    PythonImage out;
    out.path = path;
    out.buildId = image.buildId();
    const SymbolFinds *runtimeFrom = dynsym.runtime.found ? &dynsym : symtab.runtime.found ? &symtab : nullptr;
    SymbolFinds debug, debugDyn;
    std::string debugPath;
    if (!runtimeFrom || !symtab.hadSymtab) {
        debugPath = debugFileByBuildId(out.buildId);
        if (!debugPath.empty() && scanSymbols(debugPath, debugDyn, debug) && !runtimeFrom && debug.runtime.found)
            runtimeFrom = &debug;
    }
    SymbolFinds merged = dynsym;
    merged.pyVersion = dynsym.pyVersion.found ? dynsym.pyVersion : symtab.pyVersion;
    merged.getVersion = dynsym.getVersion.found ? dynsym.getVersion : symtab.getVersion;
    if (!merged.getVersion.found && !runtimeFrom)
        return makeError(Error::Code::Unsupported,
                         path + " is not a CPython: it defines neither Py_GetVersion nor _PyRuntime");

    findVersion(path, image, merged, out);
    if (runtimeFrom) {
        out.runtimeAddress = runtimeFrom->runtime.value + static_cast<uint64_t>(bias);
        out.runtimeFrom = runtimeFrom == &dynsym ? ".dynsym" : runtimeFrom == &symtab ? ".symtab" : debugPath;
    }
    for (const SymbolFinds *table : {&dynsym, &symtab, &debug})
        if (table->codeType.found && !out.codeTypeAddress)
            out.codeTypeAddress = table->codeType.value + static_cast<uint64_t>(bias);
    // The eval loop: every part any table names, the full tables' parts included.
    for (const SymbolFinds *table : {&dynsym, &symtab, &debug})
        for (const PythonCodeRange &r : table->evalLoop) {
            bool seen = false;
            for (const PythonCodeRange &have : out.evalLoop)
                seen = seen || have.start == r.start + static_cast<uint64_t>(bias);
            if (!seen)
                out.evalLoop.push_back({r.name, r.start + static_cast<uint64_t>(bias), r.size});
        }
    out.evalLoopComplete = symtab.hadSymtab || debug.hadSymtab;
    for (const SymbolFinds *table : {&dynsym, &symtab, &debug})
        for (const PythonCodeRange &r : table->forwarders)
            out.forwarders.push_back({r.name, r.start + static_cast<uint64_t>(bias), r.size});
    std::sort(out.forwarders.begin(), out.forwarders.end(),
              [](const PythonCodeRange &a, const PythonCodeRange &b) { return a.start < b.start; });
    out.forwarders.erase(
        std::unique(out.forwarders.begin(), out.forwarders.end(),
                    [](const PythonCodeRange &a, const PythonCodeRange &b) { return a.start == b.start; }),
        out.forwarders.end());
    return out;
}

bool mayRunPython(int pid)
{
    std::error_code ec;
    const std::string proc = "/proc/" + std::to_string(pid);
    if (std::filesystem::read_symlink(proc + "/exe", ec).filename().string().starts_with("python"))
        return true;
    return readProcFile(proc + "/maps").find("/libpython3") != std::string::npos;
}

Result<PythonImage> findPythonInProcess(int pid)
{
    ElfCache cache;
    ModuleIds ids(1);
    ProcessMap map(&cache, &ids);
    if (Status s = map.loadFromProc(pid); !s)
        return s.error();
    std::error_code ec;
    const std::string exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
    std::vector<std::pair<std::string, int64_t>> candidates;
    for (const auto &[start, m] : map.modules()) {
        const std::string name = std::filesystem::path(m.path).filename().string();
        if (!m.image || (m.path != exe && !name.starts_with("libpython3")))
            continue;
        bool seen = false;
        for (const auto &c : candidates)
            seen = seen || c.first == m.path;
        if (!seen)
            candidates.emplace_back(m.path, m.bias);
    }
    std::string why;
    Result<PythonImage> best = makeError(Error::Code::Unsupported, "");
    for (const auto &[path, bias] : candidates) {
        Result<PythonImage> image = inspectPythonImage(path, bias);
        if (!image) {
            why += (why.empty() ? "" : "; ") + image.error().message;
            continue;
        }
        const bool hasRuntime = image->runtimeAddress != 0;
        if (hasRuntime)
            return image;
        if (!best)
            best = std::move(image);
    }
    if (best)
        return best;
    return makeError(Error::Code::Unsupported, "process " + std::to_string(pid) + " runs no CPython" +
                                                   (why.empty() ? std::string() : " (" + why + ")"));
}

} // namespace emberline::engine
