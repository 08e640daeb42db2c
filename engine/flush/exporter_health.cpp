// The Exporter's part of the unwind and symbol health view: each module's symbol status, looked up once per
// module id on the exporter thread, and the faults met while naming frames.
#include "engine/flush/exporter.h"

#include <cstdlib>
#include <set>

namespace emberline::engine {

const ModuleSymbols &Exporter::moduleSymbols(uint32_t id, const ModuleUnwindInfo &info)
{
    auto [it, inserted] = m_moduleSymbols.try_emplace(id);
    if (!inserted)
        return it->second;
    if (info.path == "[vdso]") {
        it->second = ModuleSymbols{SymbolStatus::SymbolTable, SymbolSource::InFile};
    } else if (!info.anonymous && !info.fileMissing && !info.path.empty() && info.path[0] == '/') {
        bool replaced = false;
        it->second = m_symbolizer.moduleSymbols(info.path, info.buildId, &replaced);
        if (replaced)
            m_replacedFiles.push_back(info.path);
    } else {
        it->second = ModuleSymbols{SymbolStatus::None, SymbolSource::None};
    }
    return it->second;
}

std::vector<std::string> Exporter::healthFaults(const UnwindCounters &counters,
                                                const std::vector<DebuginfodStatus> &debuginfod) const
{
    std::vector<std::string> faults;
    if (!m_options.kernelFramesProblem.empty())
        faults.push_back(m_options.kernelFramesProblem);
    if (!m_kernelSymbolsProblem.empty())
        faults.push_back(m_kernelSymbolsProblem);
    for (const auto &[pid, map] : m_perfMaps) {
        if (map->malformedLines() > 0)
            faults.push_back("perf map " + map->path() + ": " + std::to_string(map->malformedLines()) +
                             " malformed line(s) skipped");
        if (map->truncatedAtLimit())
            faults.push_back("perf map " + map->path() + " is too large: " + map->describe());
        if (map->rewrites() > 0)
            faults.push_back("perf map " + map->path() + " changed while it was read (rewritten " +
                             std::to_string(map->rewrites()) + " time(s)): names read before were dropped");
    }
    for (size_t id = 0; id < counters.modules.size() && id < counters.byModule.size(); ++id) {
        const ModuleUnwindInfo &info = counters.modules[id];
        if (info.fileMissing && counters.byModule[id].samples > 0)
            faults.push_back(info.path + ": deleted or replaced on disk while the program ran; its frames are not "
                                         "unwound through or named");
    }
    std::set<std::string> debuginfodFailures; // one line per file, however many processes map it
    for (size_t id = 0; id < counters.modules.size() && id < counters.byModule.size(); ++id) {
        const ModuleUnwindInfo &info = counters.modules[id];
        if (id >= debuginfod.size() || debuginfod[id].state != DebuginfodState::Failed ||
            !debuginfodFailures.insert(info.path).second)
            continue;
        faults.push_back("debuginfod could not give " + info.path + "'s debug file: " + debuginfod[id].error);
    }
    for (const std::string &path : m_replacedFiles)
        faults.push_back(path + " was replaced on disk during the session (another build id): its frames are named "
                                "by address only");
    faults.insert(faults.end(), m_agentFaults.begin(), m_agentFaults.end());
    return faults;
}

std::shared_ptr<const UnwindHealth> Exporter::buildHealth(const UnwindCounters &counters)
{
    std::vector<ModuleSymbols> symbols(counters.modules.size());
    std::vector<DebuginfodStatus> debuginfod(counters.modules.size());
    for (size_t id = 0; id < counters.modules.size() && id < counters.byModule.size(); ++id) {
        if (counters.byModule[id].samples == 0)
            continue;
        symbols[id] = moduleSymbols(static_cast<uint32_t>(id), counters.modules[id]);
        // Not cached with the symbols: a download moves on between flushes.
        if (!counters.modules[id].buildId.empty())
            debuginfod[id] = m_symbolizer.debuginfodStatus(counters.modules[id].buildId);
    }
    UnwindHealthContext context;
    const char *urls = std::getenv("DEBUGINFOD_URLS");
    context.debuginfodConfigured = urls != nullptr && *urls != '\0';
    if (counters.kernelSamples > 0 && !m_kernelSymbols)
        (void)symbolizeKernel(0); // reads /proc/kallsyms once, as the first kernel frame would
    context.kernelSymbolsRead = m_kernelSymbols && m_kernelSymbols->size() > 0;
    context.kernelSymbolsProblem = m_kernelSymbolsProblem;
    context.kernelFramesProblem = m_options.kernelFramesProblem;
    UnwindHealth health = buildUnwindHealth(counters, symbols, healthFaults(counters, debuginfod), context, debuginfod);
    health.notes.insert(health.notes.end(), m_agentNotes.begin(), m_agentNotes.end());
    return std::make_shared<const UnwindHealth>(std::move(health));
}

} // namespace emberline::engine
