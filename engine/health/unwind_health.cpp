#include "engine/health/unwind_health.h"

#include "engine/common/strings.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace emberline::engine {

std::string_view unwindCauseName(UnwindCause cause)
{
    switch (cause) {
    case UnwindCause::StackCopyTooSmall:
        return "stack copy too small";
    case UnwindCause::NoUnwindInfo:
        return "no unwind info";
    case UnwindCause::JitOrAnonymous:
        return "JIT or anonymous code";
    case UnwindCause::FileMissing:
        return "file missing or replaced";
    case UnwindCause::FramePointers:
        return "frame pointers used";
    case UnwindCause::Other:
        return "damaged or unusual stack";
    }
    return "unknown";
}

std::string_view symbolStatusName(SymbolStatus status)
{
    switch (status) {
    case SymbolStatus::FullDwarf:
        return "full DWARF";
    case SymbolStatus::SymbolTable:
        return "symbol table only";
    case SymbolStatus::None:
        return "no symbols";
    case SymbolStatus::Unknown:
        break;
    }
    return "not looked up";
}

std::string_view symbolSourceName(SymbolSource source)
{
    switch (source) {
    case SymbolSource::InFile:
        return "in the file";
    case SymbolSource::BuildId:
        return "found by build id";
    case SymbolSource::Debuglink:
        return "found by debuglink";
    case SymbolSource::Debuginfod:
        return "found by debuginfod";
    case SymbolSource::None:
        break;
    }
    return "";
}

namespace {

std::string byteSize(int64_t bytes)
{
    char text[32];
    if (bytes < 1000)
        std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
    else if (bytes < 1'000'000)
        std::snprintf(text, sizeof text, "%.0f KB", double(bytes) / 1e3);
    else
        std::snprintf(text, sizeof text, "%.1f MB", double(bytes) / 1e6);
    return text;
}

} // namespace

std::string debuginfodStatusText(const DebuginfodStatus &status)
{
    switch (status.state) {
    case DebuginfodState::NotAsked:
        return {};
    case DebuginfodState::Waiting:
        return "debuginfod: download queued";
    case DebuginfodState::Downloading:
        if (status.totalBytes > 0)
            return "debuginfod: downloading " + byteSize(status.bytes) + " of " + byteSize(status.totalBytes);
        return "debuginfod: downloading, " + byteSize(status.bytes) + " so far";
    case DebuginfodState::Found:
        return "debuginfod: debug file downloaded";
    case DebuginfodState::NotFound:
        return "debuginfod: not on the server";
    case DebuginfodState::Failed:
        return "debuginfod: failed: " + status.error;
    }
    return {};
}

uint32_t suggestedStackCopy(uint64_t neededBytes, uint32_t currentBytes)
{
    uint64_t bytes = neededBytes > 0 ? neededBytes : uint64_t(currentBytes) * 2;
    bytes = (bytes + 4095) / 4096 * 4096;
    return static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(bytes, currentBytes), kMaxStackCopyBytes));
}

namespace {

std::string healthSymbolText(const ModuleSymbols &symbols, const DebuginfodStatus &debuginfod)
{
    std::string text(symbolStatusName(symbols.status));
    const std::string_view source = symbolSourceName(symbols.source);
    if (!source.empty() && symbols.status != SymbolStatus::None && symbols.status != SymbolStatus::Unknown)
        text += ", " + std::string(source);
    // Once the names come from the downloaded file, "found by debuginfod" says it all.
    if (symbols.source != SymbolSource::Debuginfod && debuginfod.state != DebuginfodState::NotAsked)
        text += "; " + debuginfodStatusText(debuginfod);
    return text;
}

std::string healthFixFor(const ModuleHealth &m, const ModuleUnwindInfo &info, const UnwindCounters &counters,
                         const UnwindHealthContext &context)
{
    const uint32_t stackBytes = counters.stackBytes;
    const std::string name = info.path.empty() ? std::string("[unknown]") : baseName(info.path);
    if (m.hasCause) {
        switch (m.cause) {
        case UnwindCause::StackCopyTooSmall:
            // A learned copy grows by itself up to perf's limit: stacks that fit under it were cut before it grew.
            if (counters.stackCopyLearned && (stackBytes < kMaxStackCopyBytes || m.suggestedStackBytes <= stackBytes))
                return "none needed: the learned copy grows when stacks are cut short (now " +
                       std::to_string(stackBytes) + " bytes), and these were cut before it grew; --stack-size " +
                       std::to_string(m.suggestedStackBytes ? m.suggestedStackBytes : stackBytes) +
                       " copies that much from the start";
            if (m.suggestedStackBytes > stackBytes)
                return "copy more stack: --stack-size " + std::to_string(m.suggestedStackBytes) +
                       (m.suggestionIsLowerBound ? " or more" : "") + " (" + std::to_string(stackBytes) + " was used)";
            return "the stacks are deeper than the largest copy perf allows (" + std::to_string(kMaxStackCopyBytes) +
                   " bytes): only their innermost frames can be shown";
        case UnwindCause::NoUnwindInfo:
            return "rebuild " + name + " with -fno-omit-frame-pointer (or -fasynchronous-unwind-tables)";
        case UnwindCause::JitOrAnonymous:
            return "let the JIT write /tmp/perf-PID.map and keep frame pointers (node --perf-basic-prof, "
                   "python3 -X perf)";
        case UnwindCause::FileMissing:
            return name + " was deleted or replaced on disk during the session: profile a fresh start of the program";
        case UnwindCause::Other:
            // Stacks that end outside every mapping: a return address read from the wrong slot, or a process that
            // exec'd or exited before its memory map could be read (a shell script's short-lived commands).
            if (info.path.empty())
                return "no simple fix: the walk reached an address outside every mapping, from a damaged stack or "
                       "a process that exec'd or exited before its memory map could be read";
            return "no simple fix: the stack or its unwind info looks damaged here; frame pointers in the callers "
                   "let the fallback walk go on";
        case UnwindCause::FramePointers:
            break;
        }
    }
    if (!info.anonymous && !info.path.empty() && info.path[0] == '/' &&
        (m.symbols.status == SymbolStatus::None || m.symbols.status == SymbolStatus::SymbolTable)) {
        const DebuginfodState fetch = m.debuginfod.state;
        if (fetch == DebuginfodState::Waiting || fetch == DebuginfodState::Downloading)
            return "wait: debuginfod is downloading " + name + "'s debug file; later flushes use it";
        std::string fix = "install the -dbgsym package that holds " + name + "'s debug file";
        if (!context.debuginfodConfigured)
            fix += ", or set DEBUGINFOD_URLS (https://debuginfod.debian.net)";
        return fix;
    }
    if (m.hasCause && m.cause == UnwindCause::FramePointers)
        return "nothing: frame pointers finished these stacks";
    return {};
}

// The most frequent failure; FramePointers only when no stack failed in the module.
void pickHealthCause(ModuleHealth &m)
{
    uint64_t best = 0;
    for (size_t i = 0; i < kUnwindCauseCount; ++i) {
        if (static_cast<UnwindCause>(i) == UnwindCause::FramePointers)
            continue;
        if (m.causes[i] > best) {
            best = m.causes[i];
            m.cause = static_cast<UnwindCause>(i);
        }
    }
    m.hasCause = best > 0;
    if (!m.hasCause && m.causes[size_t(UnwindCause::FramePointers)] > 0) {
        m.cause = UnwindCause::FramePointers;
        m.hasCause = true;
    }
}

// The kernel's rows: stacks the kernel's callchain gave, named from /proc/kallsyms or not; stacks with one
// [kernel] frame because the callchain was not recorded.
void addKernelRows(const UnwindCounters &counters, const UnwindHealthContext &context, UnwindHealth &health)
{
    if (counters.kernelSamples > 0) {
        ModuleHealth m;
        m.path = std::string(kKernelHealthRow);
        m.samples = counters.kernelSamples;
        if (context.kernelSymbolsRead) {
            m.symbols = ModuleSymbols{SymbolStatus::SymbolTable, SymbolSource::InFile};
            m.symbolText = "symbol table, /proc/kallsyms";
        } else {
            m.symbols = ModuleSymbols{SymbolStatus::None, SymbolSource::None};
            m.symbolText = "none: " + (context.kernelSymbolsProblem.empty() ? std::string("/proc/kallsyms not read yet")
                                                                            : context.kernelSymbolsProblem);
            m.fix = "let Emberline read the kernel's addresses: run it as root, or set kernel.kptr_restrict=0 "
                    "(sysctl)";
        }
        health.modules.push_back(std::move(m));
    }
    if (counters.kernelUnnamedSamples > 0) {
        ModuleHealth m;
        m.path = std::string(kKernelUnnamedHealthRow);
        m.samples = counters.kernelUnnamedSamples;
        m.symbols = ModuleSymbols{SymbolStatus::None, SymbolSource::None};
        m.symbolText = "none: the kernel's call stacks are not recorded";
        if (!context.kernelFramesProblem.empty())
            m.symbolText += " (" + context.kernelFramesProblem + ")";
        m.fix = "run as root, or lower kernel.perf_event_paranoid to 1 or less, for kernel frames by name";
        health.modules.push_back(std::move(m));
    }
}

} // namespace

UnwindHealth buildUnwindHealth(const UnwindCounters &counters, const std::vector<ModuleSymbols> &symbols,
                               std::vector<std::string> faults, const UnwindHealthContext &context,
                               const std::vector<DebuginfodStatus> &debuginfod)
{
    UnwindHealth health;
    health.samples = counters.samples;
    health.incomplete = counters.incomplete;
    health.stackBytes = counters.stackBytes;
    health.stackCopyLearned = counters.stackCopyLearned;
    health.walkChecks = counters.walkChecks;
    health.walkMismatches = counters.walkMismatches;
    health.tableWalks = counters.tableWalks;
    health.libunwindWalks = counters.libunwindWalks;
    if (const uint64_t walks = counters.tableWalks + counters.libunwindWalks; walks > 0) {
        char share[16];
        std::snprintf(share, sizeof share, "%.1f", 100.0 * double(counters.tableWalks) / double(walks));
        health.notes.push_back(std::to_string(counters.tableWalks) + " of " + std::to_string(walks) + " (" + share +
                               "%) copied stacks unwound by Emberline's unwind tables, " +
                               std::to_string(counters.libunwindWalks) + " by libunwind");
    }
    health.faults = std::move(faults);
    if (counters.walkChecks > 0 && counters.walkMismatches * 1000 > counters.walkChecks)
        health.faults.push_back(std::to_string(counters.walkMismatches) + " of " + std::to_string(counters.walkChecks) +
                                " checked stacks walked by the agent differ from Emberline's own unwind of their copy: "
                                "record with --agent-stacks copy, and report the program");
    // One row per file: a library loaded by many processes (each at its own address, so under its own module id)
    // is one thing to fix.
    static const ModuleUnwindInfo kNoInfo;
    std::map<std::pair<std::string, std::string>, size_t> rowOf;
    std::vector<const ModuleUnwindInfo *> infoOf;
    std::vector<uint64_t> neededOf;
    std::vector<bool> exactOf;
    for (size_t id = 0; id < counters.byModule.size(); ++id) {
        const ModuleUnwindCounters &c = counters.byModule[id];
        if (c.samples == 0 && c.incomplete == 0)
            continue;
        const ModuleUnwindInfo &info = id < counters.modules.size() ? counters.modules[id] : kNoInfo;
        auto [it, inserted] = rowOf.try_emplace({info.path, info.buildId}, health.modules.size());
        if (inserted) {
            ModuleHealth m;
            m.path = info.path.empty() ? std::string("[unknown]") : info.path;
            m.buildId = info.buildId;
            health.modules.push_back(std::move(m));
            infoOf.push_back(&info);
            neededOf.push_back(0);
            exactOf.push_back(false);
        }
        ModuleHealth &m = health.modules[it->second];
        m.samples += c.samples;
        m.incomplete += c.incomplete;
        for (size_t i = 0; i < kUnwindCauseCount; ++i)
            m.causes[i] += c.causes[i];
        if (c.neededStackBytes > neededOf[it->second]) {
            neededOf[it->second] = c.neededStackBytes;
            exactOf[it->second] = c.neededExact;
        }
        if (id < symbols.size() && m.symbols.status == SymbolStatus::Unknown)
            m.symbols = symbols[id];
        if (id < debuginfod.size() && m.debuginfod.state == DebuginfodState::NotAsked)
            m.debuginfod = debuginfod[id];
    }
    for (size_t row = 0; row < health.modules.size(); ++row) {
        ModuleHealth &m = health.modules[row];
        const ModuleUnwindInfo &info = *infoOf[row];
        m.incompleteShare = counters.incomplete ? double(m.incomplete) / double(counters.incomplete) : 0;
        if (info.anonymous || info.path.empty())
            m.symbols.status = SymbolStatus::None;
        pickHealthCause(m);
        if (m.hasCause && m.cause == UnwindCause::StackCopyTooSmall) {
            m.suggestedStackBytes = suggestedStackCopy(neededOf[row], counters.stackBytes);
            m.suggestionIsLowerBound = !exactOf[row];
        }
        m.causeText = m.hasCause ? std::string(unwindCauseName(m.cause)) : std::string();
        m.symbolText = healthSymbolText(m.symbols, m.debuginfod);
        m.fix = healthFixFor(m, info, counters, context);
    }
    addKernelRows(counters, context, health);
    std::stable_sort(health.modules.begin(), health.modules.end(), [](const ModuleHealth &a, const ModuleHealth &b) {
        return a.incomplete != b.incomplete ? a.incomplete > b.incomplete : a.samples > b.samples;
    });
    return health;
}

std::vector<std::string> describeUnwindHealth(const UnwindHealth &health, size_t maxModules)
{
    std::vector<std::string> lines;
    char buf[160];
    std::snprintf(buf, sizeof buf, "unwind health: %llu of %llu stacks incomplete (%.2f%%)",
                  static_cast<unsigned long long>(health.incomplete), static_cast<unsigned long long>(health.samples),
                  health.samples ? 100.0 * double(health.incomplete) / double(health.samples) : 0.0);
    lines.emplace_back(buf);
    size_t shown = 0;
    for (const ModuleHealth &m : health.modules) {
        if (m.fix.empty() && m.incomplete == 0 && m.debuginfod.state == DebuginfodState::NotAsked)
            continue;
        if (shown++ == maxModules)
            break;
        std::string line = "  " + baseName(m.path) + ": " + std::to_string(m.samples) + " stacks";
        if (m.incomplete > 0) {
            std::snprintf(buf, sizeof buf, ", %.0f%% of the incomplete stacks end here", 100.0 * m.incompleteShare);
            line += buf;
        }
        if (m.hasCause)
            line += "; cause: " + m.causeText;
        line += "; symbols: " + m.symbolText;
        if (!m.fix.empty())
            line += "; fix: " + m.fix;
        lines.push_back(std::move(line));
    }
    for (const std::string &fault : health.faults)
        lines.push_back("  problem: " + fault);
    for (const std::string &note : health.notes)
        lines.push_back("  " + note);
    return lines;
}

} // namespace emberline::engine
