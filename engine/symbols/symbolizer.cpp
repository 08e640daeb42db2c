#include "engine/symbols/symbolizer.h"

#include "engine/common/strings.h"

#include "engine/symbols/debuginfod_fetcher.h"
#include "engine/symbols/stores/line_table_store.h"
#include "engine/symbols/symbol_module.h"
#include "engine/symbols/symbols_logging.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <sys/auxv.h>

Q_LOGGING_CATEGORY(lcSymbols, "emberline.symbols", QtWarningMsg)

namespace emberline::engine {
namespace {

// A key no file path or build id can take: paths never contain NUL.
const std::string vdsoCacheKey("\0[vdso]", 7);

// The size of the vdso image: its end is the furthest of the section header table and the loaded segments.
size_t vdsoImageSize(const unsigned char *image)
{
    static_assert(sizeof(void *) == 8, "the vdso reader expects a 64-bit process");
    const auto *header = reinterpret_cast<const Elf64_Ehdr *>(image);
    if (std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64)
        return 0;
    size_t size = header->e_shoff + size_t(header->e_shnum) * header->e_shentsize;
    const auto *programHeaders = reinterpret_cast<const Elf64_Phdr *>(image + header->e_phoff);
    for (int i = 0; i < header->e_phnum; ++i) {
        if (programHeaders[i].p_type == PT_LOAD)
            size = std::max<size_t>(size, programHeaders[i].p_offset + programHeaders[i].p_filesz);
    }
    // A vdso is a few pages; anything larger means the headers are not what we think.
    constexpr size_t maximumVdsoSize = 1 << 20;
    return size <= maximumVdsoSize ? size : 0;
}

} // namespace

Symbolizer::Symbolizer(Options options) : m_options(std::move(options))
{
    if (m_options.debuginfod)
        m_fetcher = std::make_unique<DebuginfodFetcher>();
}

Symbolizer::~Symbolizer() = default;

std::vector<SymbolFrame> Symbolizer::symbolize(const std::string &path, const std::string &buildId, uint64_t fileOffset)
{
    try {
        ModuleSlot &moduleSlot = slot(path, buildId);
        // Asked before: answered without the module, which may be closed.
        if (const auto answers = m_answers.find(moduleSlot.cacheKey); answers != m_answers.end()) {
            if (const auto it = answers->second.find(fileOffset); it != answers->second.end())
                return it->second;
        }
        SymbolModule *symbolModule = module(moduleSlot, path, buildId);
        if (symbolModule == nullptr)
            return {};
        moduleSlot.lastUsedFlush = m_flushes;
        Frames frames = symbolModule->symbolizeFileOffset(fileOffset, lineTables(*symbolModule));
        m_answers[moduleSlot.cacheKey].emplace(fileOffset, frames);
        ++m_answerCount;
        return frames;
    } catch (...) {
        return {};
    }
}

std::vector<SymbolFrame> Symbolizer::symbolizeVdso(uint64_t offset)
{
    try {
        SymbolModule *symbolModule = vdsoModule();
        if (symbolModule == nullptr)
            return {};
        return answer(vdsoCacheKey, offset, *symbolModule);
    } catch (...) {
        return {};
    }
}

std::string Symbolizer::readBuildId(const std::string &path)
{
    try {
        return readElfBuildId(path);
    } catch (...) {
        return {};
    }
}

Symbolizer::ModuleSlot &Symbolizer::slot(const std::string &path, const std::string &buildId)
{
    std::string key = path + '\n' + buildId;
    auto it = m_modules.find(key);
    if (it == m_modules.end()) {
        it = m_modules.emplace(std::move(key), ModuleSlot{}).first;
        ModuleSlot &fresh = it->second;
        bool downloaded = false;
        fresh.module = openModule(path, buildId, downloaded);
        fresh.lastUsedFlush = m_flushes;
        if (fresh.module) {
            // The module's own build id, not the caller's spelling of it, so that all spellings share answers.
            fresh.cacheKey = fresh.module->buildId().empty() ? path : fresh.module->buildId();
            if (!downloaded)
                requestDebugFile(*fresh.module, path);
        }
    }
    return it->second;
}

SymbolModule *Symbolizer::module(ModuleSlot &moduleSlot, const std::string &path, const std::string &buildId)
{
    if (moduleSlot.closed) {
        moduleSlot.closed = false;
        bool downloaded = false;
        moduleSlot.module = openModule(path, buildId, downloaded);
        moduleSlot.idleFlushes = std::min<uint32_t>(moduleSlot.idleFlushes * 2, 1U << 16);
        moduleSlot.lastUsedFlush = m_flushes;
        qCDebug(lcSymbols, "reopened %s, closed while idle (closed again after %u idle flushes)", path.c_str(),
                moduleSlot.idleFlushes);
    }
    return moduleSlot.module.get();
}

std::unique_ptr<SymbolModule> Symbolizer::openModule(const std::string &path, const std::string &buildId,
                                                     bool &downloaded) const
{
    const auto found = m_downloadedDebugFiles.find(lowercaseHex(buildId));
    downloaded = found != m_downloadedDebugFiles.end();
    return SymbolModule::openFile(path, buildId, m_options.debugDirectories,
                                  downloaded ? found->second : std::string());
}

LineTableStore *Symbolizer::lineTables(SymbolModule &module)
{
    const std::string &buildId = module.buildId();
    if (m_options.lineTableDirectory.empty() || buildId.empty())
        return nullptr;
    auto [it, inserted] = m_lineTables.try_emplace(buildId);
    if (inserted) {
        const std::string identity = module.dwarfIdentity();
        if (!identity.empty())
            it->second = std::make_unique<LineTableStore>(m_options.lineTableDirectory, buildId, "dwarf " + identity);
    }
    return it->second.get();
}

size_t Symbolizer::keepLineTables()
{
    size_t written = 0;
    for (auto &[buildId, lines] : m_lineTables) {
        if (lines && lines->unitsAdded() > 0 && lines->save())
            ++written;
    }
    return written;
}

size_t Symbolizer::lineUnitsReadBack() const
{
    size_t units = 0;
    for (const auto &[buildId, lines] : m_lineTables)
        units += lines ? lines->unitsReadBack() : 0;
    return units;
}

size_t Symbolizer::lineUnitsDecoded() const
{
    size_t units = 0;
    for (const auto &[buildId, lines] : m_lineTables)
        units += lines ? lines->unitsAdded() : 0;
    return units;
}

size_t Symbolizer::closeIdleModules()
{
    ++m_flushes;
    size_t closed = 0;
    for (auto &[key, moduleSlot] : m_modules) {
        if (!moduleSlot.module || m_flushes - moduleSlot.lastUsedFlush <= moduleSlot.idleFlushes)
            continue;
        moduleSlot.module.reset();
        moduleSlot.closed = true;
        ++closed;
    }
    return closed;
}

size_t Symbolizer::openModules() const
{
    return static_cast<size_t>(std::count_if(m_modules.begin(), m_modules.end(),
                                             [](const auto &entry) { return entry.second.module != nullptr; }));
}

void Symbolizer::requestDebugFile(SymbolModule &module, const std::string &path)
{
    if (!m_fetcher || module.buildId().empty())
        return;
    if (module.symbolInfo().status != SymbolStatus::FullDwarf && m_fetcher->request(module.buildId(), path))
        ++m_downloadsRequested;
}

std::vector<std::string> Symbolizer::adoptDownloads()
{
    std::vector<std::string> adopted;
    if (!m_fetcher)
        return adopted;
    for (auto &found : m_fetcher->takeFound()) {
        const std::string buildId = found.first;
        m_downloadedDebugFiles[buildId] = std::move(found.second);
        m_lineTables.erase(buildId); // read from the downloaded file from now on
        if (auto answers = m_answers.find(buildId); answers != m_answers.end()) {
            m_answerCount -= answers->second.size();
            m_answers.erase(answers);
        }
        // Reopened at their next use, with the downloaded file.
        std::erase_if(m_modules, [&](const auto &entry) {
            const ModuleSlot &moduleSlot = entry.second;
            return (moduleSlot.module && moduleSlot.module->buildId() == buildId) ||
                   (moduleSlot.closed && moduleSlot.cacheKey == buildId);
        });
        adopted.push_back(buildId);
    }
    return adopted;
}

DebuginfodStatus Symbolizer::debuginfodStatus(const std::string &buildId) const
{
    return m_fetcher ? m_fetcher->status(lowercaseHex(buildId)) : DebuginfodStatus{};
}

bool Symbolizer::waitForDownloads(int timeoutMs)
{
    return !m_fetcher || m_fetcher->waitIdle(timeoutMs);
}

ModuleSymbols Symbolizer::moduleSymbols(const std::string &path, const std::string &buildId, bool *replaced)
{
    if (replaced != nullptr)
        *replaced = false;
    ModuleSlot &moduleSlot = slot(path, buildId);
    if (moduleSlot.symbols)
        return *moduleSlot.symbols;
    if (SymbolModule *m = module(moduleSlot, path, buildId)) {
        moduleSlot.symbols = m->symbolInfo();
        return *moduleSlot.symbols;
    }
    if (replaced != nullptr && !buildId.empty()) {
        const std::string now = readElfBuildId(path);
        *replaced = !now.empty() && now != lowercaseHex(buildId);
    }
    ModuleSymbols none;
    none.status = SymbolStatus::None;
    return none;
}

SymbolModule *Symbolizer::vdsoModule()
{
    if (!m_vdsoOpened) {
        m_vdsoOpened = true;
        // NOLINTNEXTLINE(performance-no-int-to-ptr): the auxiliary vector gives the vdso's address as a number
        const auto *image = reinterpret_cast<const unsigned char *>(getauxval(AT_SYSINFO_EHDR));
        const size_t size = image != nullptr ? vdsoImageSize(image) : 0;
        if (size != 0)
            m_vdso = SymbolModule::openImage("[vdso]", image, size, m_options.debugDirectories);
        if (!m_vdso)
            qCInfo(lcSymbols, "this process has no readable vdso image; vdso frames stay unnamed");
    }
    return m_vdso.get();
}

Symbolizer::Frames Symbolizer::answer(const std::string &cacheKey, uint64_t fileOffset, SymbolModule &module)
{
    auto &answers = m_answers[cacheKey];
    auto it = answers.find(fileOffset);
    if (it == answers.end()) {
        it = answers.emplace(fileOffset, module.symbolizeFileOffset(fileOffset)).first;
        ++m_answerCount;
    }
    return it->second;
}

} // namespace emberline::engine
