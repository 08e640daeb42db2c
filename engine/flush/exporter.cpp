#include "engine/flush/exporter.h"

#include "engine/common/strings.h"
#include "engine/symbols/symbols_logging.h"

#include "engine/model/python_frame.h"
#include "engine/model/sample_kinds.h"
#include "engine/model/thread_state.h"
#include "engine/pprof/pprof_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include <malloc.h>

namespace emberline::engine {

Exporter::Exporter(ExporterOptions options) : m_options(std::move(options)), m_symbolizer(m_options.symbolizer)
{
    // Per-sample timestamps stay in the flush files; the session's profile adds up each thread's stacks.
    if (!m_options.outputDirectory.empty()) {
        m_sessionProfile = std::make_unique<PprofStreamWriter>(m_options.outputDirectory + "/profile.pprof",
                                                               std::vector<std::string>{"end_timestamp_ns"});
        m_sessionProfile->dropComments(std::string(kInUseMarginComment)); // of one flush's snapshot
    }
}

namespace {

// Memory that holds no file's code: where JIT compilers put theirs (perf's "//anon", an unnamed or "[anon:…]"
// mapping of /proc/PID/maps, a memfd).
bool anonymousCode(const ModuleInfo *module)
{
    if (!module)
        return true;
    const std::string &path = module->path;
    return path.empty() || path.starts_with("//anon") || path.starts_with("[anon") || path.starts_with("/memfd:");
}

} // namespace

void Exporter::refreshPerfMaps(const FlushInput &input)
{
    m_flushPerfMaps.clear();
    std::set<uint32_t> pids;
    for (const auto &[tid, pid] : input.processOfThread)
        pids.insert(pid);
    for (uint32_t pid : pids) {
        std::unique_ptr<PerfMap> &map = m_perfMaps[pid];
        if (!map)
            map = std::make_unique<PerfMap>(m_options.perfMapDirectory + "/perf-" + std::to_string(pid) + ".map");
        const size_t before = map->entries();
        const size_t malformedBefore = map->malformedLines();
        if (!map->refresh())
            continue;
        if (map->entries() != before || map->malformedLines() != malformedBefore)
            qCDebug(lcSymbols, "JIT symbols: %s", map->describe().c_str());
        m_flushPerfMaps.push_back(map.get());
    }
}

std::vector<SymbolFrame> Exporter::symbolizeJit(uint64_t address) const
{
    for (const PerfMap *map : m_flushPerfMaps) {
        const std::string_view name = map->lookup(address);
        if (!name.empty()) {
            SymbolFrame frame;
            frame.function = std::string(name);
            return {frame};
        }
    }
    return {};
}

const std::vector<SymbolFrame> &Exporter::symbolize(const LocationKey &key, const ModuleInfo *module, bool &final)
{
    final = true;
    const LocationKey &cacheKey = key;
    auto it = m_symbolCache.find(cacheKey);
    if (it != m_symbolCache.end())
        return it->second;
    if (key.moduleId != kKernelModule && key.moduleId != kKernelSymbolsModule && anonymousCode(module)) {
        // JIT code: named from the perf maps when they name it; a miss is asked again at the next flush, once
        // the maps have been read again.
        std::vector<SymbolFrame> frames = symbolizeJit(key.address);
        if (frames.empty()) {
            static const std::vector<SymbolFrame> kNone;
            final = false;
            return kNone;
        }
        return m_symbolCache.emplace(cacheKey, std::move(frames)).first->second;
    }
    std::vector<SymbolFrame> frames;
    if (module) {
        const uint64_t offset = key.address - module->start + module->pgoff;
        if (module->id == kKernelSymbolsModule)
            frames = symbolizeKernel(key.address);
        else if (module->path == "[vdso]")
            frames = m_symbolizer.symbolizeVdso(key.address - module->start);
        else if (!module->path.empty() && module->path[0] == '/')
            frames = m_symbolizer.symbolize(module->path, module->buildId, offset);
    }
    return m_symbolCache.emplace(cacheKey, std::move(frames)).first->second;
}

std::vector<SymbolFrame> Exporter::symbolizeKernel(uint64_t address)
{
    // The running kernel's through the table kept for this boot; a kept table names the kernel's own text only,
    // and an address elsewhere (a module, a BPF program) has the whole file read once.
    const bool live = m_options.kallsymsPath == KernelSymbols::LiveFiles{}.kallsyms;
    if (m_kernelSymbols && !m_kernelSymbols->answersFully(address))
        m_kernelSymbols.reset();
    if (!m_kernelSymbols) {
        auto loaded = live && !m_kernelSymbolsReadWhole ? KernelSymbols::loadLive(KernelSymbols::storeDirectory())
                                                        : KernelSymbols::load(m_options.kallsymsPath);
        m_kernelSymbolsReadWhole = !loaded || !loaded->kept();
        if (!loaded) {
            qCWarning(lcSymbols, "kernel frames stay unnamed: %s", loaded.error().message.c_str());
            m_kernelSymbolsProblem = "kernel frames stay unnamed: " + loaded.error().message;
        }
        m_kernelSymbols = loaded ? std::move(loaded).value() : KernelSymbols();
    }
    const KernelSymbols::Found found = m_kernelSymbols->lookup(address);
    if (found.name.empty())
        return {};
    SymbolFrame frame;
    frame.function = std::string(found.name);
    return {frame};
}

Profile Exporter::buildProfile(const FlushInput &in, SessionIds *ids, bool leaks)
{
    refreshPerfMaps(in);
    Profile p;
    p.sampleTypes().push_back({p.intern("cpu-samples"), p.intern("count")});
    p.sampleTypes().push_back({p.intern("cpu-time"), p.intern("nanoseconds")});
    if (m_options.wallTime)
        p.sampleTypes().push_back({p.intern("wall-time"), p.intern("nanoseconds")});
    const size_t timeTypes = p.sampleTypes().size();
    if (m_options.memory) {
        p.sampleTypes().push_back({p.intern("alloc-samples"), p.intern("count")});
        p.sampleTypes().push_back({p.intern("alloc-space"), p.intern("bytes")});
        p.sampleTypes().push_back({p.intern("inuse-objects"), p.intern("count")});
        p.sampleTypes().push_back({p.intern("inuse-space"), p.intern("bytes")});
    }
    const size_t valueCount = p.sampleTypes().size();
    // pprof's default is the last type (wall time, or a memory type): every reader (the window, `report`,
    // `go tool pprof`, Datadog) is told to open the recording on CPU time instead.
    p.defaultSampleType = p.intern("cpu-time");
    p.periodType = {p.intern("cpu-time"), p.intern("nanoseconds")};
    p.period = m_options.frequency > 0 ? 1'000'000'000 / m_options.frequency : 0;
    p.timeNanos = in.startNs;
    p.durationNanos = in.endNs - in.startNs;
    p.comments().push_back(p.intern("emberline " EMBERLINE_VERSION));
    if (!m_options.samplerDescription.empty())
        p.comments().push_back(p.intern(m_options.samplerDescription));
    if (m_options.memory)
        p.comments().push_back(p.intern(kLifetimesComment));
    if (in.inUseBytesMargin > 0)
        p.comments().push_back(
            p.intern(std::string(kInUseMarginComment) + std::to_string(std::llround(in.inUseBytesMargin)) + " bytes"));

    std::map<uint32_t, uint32_t> mappingOf;
    std::map<uint32_t, const ModuleInfo *> moduleOf;
    for (const ModuleInfo &m : in.modules) {
        moduleOf[m.id] = &m;
        Mapping mapping;
        mapping.id = p.mappings().size() + 1;
        mapping.start = m.start;
        mapping.limit = m.end;
        mapping.offset = m.pgoff;
        mapping.filename = p.intern(m.path);
        mapping.buildId = p.intern(m.buildId);
        mapping.hasFunctions = mapping.hasFilenames = mapping.hasLineNumbers = mapping.hasInlineFrames = true;
        mappingOf[m.id] = static_cast<uint32_t>(p.mappings().size());
        p.mappings().push_back(mapping);
    }

    std::map<std::pair<StringId, StringId>, uint32_t> functionOf;
    auto function = [&](const std::string &name, const std::string &file, int64_t line) {
        const StringId n = p.intern(name);
        const StringId f = p.intern(file);
        auto [it, inserted] = functionOf.try_emplace({n, f}, static_cast<uint32_t>(p.functions().size()));
        if (inserted)
            p.functions().push_back(Function{p.functions().size() + 1, n, n, f, line});
        return it->second;
    };
    // The interpreter's kept frames (kInterpreterFrameBit): functions of their own, marked by their system name.
    std::map<std::pair<StringId, StringId>, uint32_t> interpreterFunctionOf;
    auto interpreterFunction = [&](const std::string &name, const std::string &file) {
        const StringId n = p.intern(name);
        const StringId f = p.intern(file);
        auto [it, inserted] = interpreterFunctionOf.try_emplace({n, f}, static_cast<uint32_t>(p.functions().size()));
        if (inserted) {
            const StringId system = p.intern(std::string(kInterpreterSystemNamePrefix) + name);
            p.functions().push_back(Function{p.functions().size() + 1, n, system, f, 0});
        }
        return it->second;
    };

    const bool withIds = !leaks && ids && in.sessionLocations.size() == in.locations.size() &&
                         in.sessionStacks.size() == in.stacks.size();
    if (withIds) {
        ids->namingEpoch = m_namingEpoch;
        ids->stackGeneration = in.stackGeneration;
        ids->locations.reserve(in.locations.size());
        ids->sampleStacks.reserve(in.samples.size());
    }
    for (size_t i = 0; i < in.locations.size(); ++i) {
        const bool interpreter =
            in.locations[i].moduleId >= kFirstModuleId && (in.locations[i].address & kInterpreterFrameBit) != 0;
        // Only a module's own addresses carry the mark: the kernel's all have bit 62 set.
        const LocationKey key{in.locations[i].moduleId,
                              interpreter ? in.locations[i].address & ~kInterpreterFrameBit : in.locations[i].address};
        bool final = true;
        Location loc;
        loc.id = p.locations().size() + 1;
        loc.address = key.address;
        const ModuleInfo *module = nullptr;
        if (auto m = moduleOf.find(key.moduleId); m != moduleOf.end()) {
            module = m->second;
            loc.mappingIndex = mappingOf[key.moduleId];
        }
        if (key.moduleId == kKernelModule) {
            loc.lines.push_back(Line{function("[kernel]", "", 0), 0, 0});
        } else if (key.moduleId == kMarkerModule) {
            loc.lines.push_back(Line{function(markerFrameName(key.address), "", 0), 0, 0});
        } else if (key.moduleId == kPythonModule) {
            const auto named = in.pythonNames.find(key.address);
            if (named == in.pythonNames.end())
                loc.lines.push_back(Line{function("[python]", "", 0), 0, 0});
            else
                loc.lines.push_back(Line{function(named->second.function, named->second.file, named->second.line),
                                         named->second.line, 0});
        } else {
            const std::vector<SymbolFrame> &frames = symbolize(key, module, final);
            for (const SymbolFrame &f : frames) {
                if (!f.function.empty())
                    loc.lines.push_back(
                        Line{interpreter ? interpreterFunction(f.function, f.file) : function(f.function, f.file, 0),
                             f.line, f.column});
            }
            if (loc.lines.empty()) {
                // Never an empty name: module+offset is what a user can feed to addr2line. An unnamed mapping of
                // /proc/PID/maps (JIT code, as the in-process and ptrace samplers see it) is named by its address,
                // as perf's "//anon" is.
                const std::string name =
                    !module ? "[unknown] " + hexAddress(key.address)
                    : module->path.empty()
                        ? "anon+" + hexAddress(key.address)
                        : baseName(module->path) + "+" + hexAddress(key.address - module->start + module->pgoff);
                loc.lines.push_back(Line{interpreter ? interpreterFunction(name, "") : function(name, "", 0), 0, 0});
            }
        }
        p.locations().push_back(std::move(loc));
        if (withIds)
            ids->locations.push_back(final ? in.sessionLocations[i] : kNoIndex);
    }

    std::set<uint32_t> pids;
    for (const auto &[tid, pid] : in.processOfThread)
        pids.insert(pid);
    const bool manyProcesses = pids.size() > 1;
    const StringId tidKey = p.intern("thread id");
    const StringId nameKey = p.intern("thread name");
    const StringId timeKey = p.intern("end_timestamp_ns");
    const StringId pidKey = p.intern("process_id");
    const StringId stateKey = p.intern("thread state");
    StringId stateNames[5];
    for (uint8_t i = 0; i < 5; ++i)
        stateNames[i] = p.intern(threadStateName(static_cast<ThreadState>(i)));
    const StringId nsUnit = p.intern("nanoseconds");
    std::map<uint32_t, StringId> threadNameIds;
    for (const auto &[tid, name] : in.threadNames)
        threadNameIds[tid] = p.intern(name);
    p.reserveSamples(in.samples.size() + in.memory.size());
    std::vector<Label> labels;
    int64_t values[7] = {};
    for (const RecordedSample &s : leaks ? std::span<const RecordedSample>() : std::span(in.samples)) {
        labels.clear();
        labels.push_back(Label{tidKey, 0, s.tid, 0});
        if (auto n = threadNameIds.find(s.tid); n != threadNameIds.end())
            labels.push_back(Label{nameKey, n->second, 0, 0});
        labels.push_back(Label{stateKey, stateNames[s.state < 5 ? s.state : 0], 0, 0});
        labels.push_back(Label{timeKey, 0, s.timeNs, nsUnit});
        if (manyProcesses)
            labels.push_back(Label{pidKey, 0, s.pid, 0});
        values[0] = s.counted ? 1 : 0;
        values[1] = s.cpuNs;
        values[2] = s.wallNs;
        for (size_t v = timeTypes; v < valueCount; ++v)
            values[v] = 0; // the memory types, and wall time's slot when it is not measured
        p.addSample(in.stacks.stack(s.stackId), std::span<const int64_t>(values, valueCount), labels);
        if (withIds)
            ids->sampleStacks.push_back(in.sessionStacks[s.stackId]);
    }
    if (!m_options.memory)
        return p;
    // Memory samples: no time of their own (0 in the time types), the thread that allocated and the flush's end.
    std::fill(std::begin(values), std::end(values), 0);
    const StringId lifetimeKey = p.intern(kLifetimeLabel);
    const StringId shortLived = p.intern(kShortLivedValue);
    const StringId blockBytesKey = p.intern(kBlockBytesLabel);
    const StringId bytesUnit = p.intern("bytes");
    for (const MemorySample &s : in.memory) {
        // A flush's profile holds every memory sample: the leaks are the last flush's in-use. The session's leaks
        // profile holds them alone.
        if (leaks && !s.leak)
            continue;
        labels.clear();
        labels.push_back(Label{tidKey, 0, s.tid, 0});
        if (auto n = threadNameIds.find(s.tid); n != threadNameIds.end())
            labels.push_back(Label{nameKey, n->second, 0, 0});
        labels.push_back(Label{timeKey, 0, s.timeNs, nsUnit});
        if (manyProcesses)
            labels.push_back(Label{pidKey, 0, s.pid, 0});
        if (s.shortLived)
            labels.push_back(Label{lifetimeKey, shortLived, 0, 0});
        if (s.blockBytes >= 0)
            labels.push_back(Label{blockBytesKey, 0, s.blockBytes, bytesUnit});
        values[timeTypes] = s.allocObjects;
        values[timeTypes + 1] = s.allocBytes;
        values[timeTypes + 2] = s.inuseObjects;
        values[timeTypes + 3] = s.inuseBytes;
        p.addSample(in.stacks.stack(s.stackId), std::span<const int64_t>(values, valueCount), labels);
        if (withIds)
            ids->sampleStacks.push_back(in.sessionStacks[s.stackId]);
    }
    return p;
}

void Exporter::addToSessionProfile(const Profile &profile, const SessionIds *ids, Flush &flush,
                                   std::span<const size_t> skipColumns)
{
    if (!m_sessionProfile || m_sessionProfileFailed)
        return;
    if (auto st = m_sessionProfile->add(profile, ids, skipColumns); !st) {
        // The writer refuses everything after its first error; the file is removed when it is dropped.
        m_sessionProfileFailed = true;
        flush.sessionProfileError = st.error().message;
        m_saveErrors.push_back(st.error().message);
    }
}

void Exporter::save(Flush &flush)
{
    char name[32];
    std::snprintf(name, sizeof name, "flush-%04u.pprof", flush.sequence);
    const std::string path = m_options.outputDirectory + "/" + name;
    if (auto st = writeFileAtomically(path, flush.pprofBytes); !st) {
        flush.saveError = st.error().message;
        m_saveErrors.push_back(st.error().message);
        ++m_flushesNotSaved;
        return;
    }
    flush.path = path;
}

bool Exporter::adoptDebuginfodDownloads(int waitMs)
{
    if (!m_options.symbolizer.debuginfod)
        return false;
    if (waitMs > 0 && !m_symbolizer.waitForDownloads(waitMs))
        qCDebug(lcSymbols, "debuginfod downloads still running after %d ms go on in the background", waitMs);
    if (m_symbolizer.adoptDownloads().empty())
        return waitMs > 0; // downloads may have ended (failed) since the health was built
    // Rare (once per module at most): start the location and health caches over rather than sort out which
    // entries belong to the modules that changed.
    m_symbolCache.clear();
    m_moduleSymbols.clear();
    ++m_namingEpoch; // the live aggregate forgets what it learnt by id: names may have changed
    return true;
}

Result<std::shared_ptr<const Flush>> Exporter::exportFlush(const FlushInput &input)
{
    adoptDebuginfodDownloads(0);
    const size_t requestedBefore = m_symbolizer.downloadsRequested();
    m_agentFaults = input.agentFaults;
    m_agentNotes = input.agentNotes;
    if (input.unwind)
        m_health = buildHealth(*input.unwind);
    // Building the health opened every module with samples and asked for the missing debug files. The last flush
    // waits (boundedly) for all downloads, so that it and profile.pprof get their names and its health says how
    // they ended; another waits briefly, and only for downloads it asked for itself.
    int waitMs = 0;
    if (input.final)
        waitMs = m_options.finalDebuginfodWaitMs;
    else if (m_symbolizer.downloadsRequested() != requestedBefore)
        waitMs = m_options.newDebuginfodWaitMs;
    if (waitMs > 0 && adoptDebuginfodDownloads(waitMs) && input.unwind)
        m_health = buildHealth(*input.unwind);
    if (input.samples.empty() && input.memory.empty())
        return std::shared_ptr<const Flush>();
    auto ids = std::make_shared<SessionIds>();
    auto profile = std::make_shared<Profile>(buildProfile(input, ids.get()));
    // Modules no flush has needed for a while give back their debug information. What libdw held is freed in this
    // thread's arena, which later flushes would reuse only in part: it goes back to the system now (this happens a
    // few times a session).
    if (m_symbolizer.closeIdleModules() > 0)
        ::malloc_trim(0);
    auto flush = std::make_shared<Flush>();
    flush->sequence = ++m_sequence;
    flush->startNs = input.startNs;
    flush->endNs = input.endNs;
    flush->final = input.final;
    // Like Datadog's exporter, a final flush shorter than the minimum is not uploaded on its own (its samples are
    // in the session's profile); it still reaches the live views and the session's folder, which must keep every
    // sample. Scheduled flushes last one period (at least 1 s) by construction, give or take timer jitter.
    flush->upload = !(input.final && input.endNs - input.startNs < m_options.minimumFlushNs);
    flush->pprofBytes = writePprof(*profile, true);
    flush->samples = input.samples.size();
    flush->lost = input.lost;
    flush->incomplete = input.incomplete;
    flush->inUseBytesMargin = input.inUseBytesMargin;
    flush->health = m_health;
    if (!ids->locations.empty() || !ids->sampleStacks.empty())
        flush->sessionIds = std::move(ids);
    if (m_options.memory) {
        // The session's profile sums allocations over flushes; its in-use values are the leaks alone.
        const size_t inuse = profile->sampleTypes().size() - 2;
        const size_t skip[2] = {inuse, inuse + 1};
        addToSessionProfile(*profile, flush->sessionIds.get(), *flush, skip);
        if (std::any_of(input.memory.begin(), input.memory.end(), [](const MemorySample &m) { return m.leak; }))
            addToSessionProfile(buildProfile(input, nullptr, true), nullptr, *flush);
    } else {
        addToSessionProfile(*profile, flush->sessionIds.get(), *flush);
    }
    flush->profile = std::move(profile);
    if (!m_options.outputDirectory.empty())
        save(*flush);
    return std::shared_ptr<const Flush>(std::move(flush));
}

Result<std::string> Exporter::writeSessionProfile()
{
    // The line tables this session decoded, for the next session of the same modules.
    m_symbolizer.keepLineTables();
    if (!m_sessionProfile)
        return std::string();
    if (m_sessionProfileFailed) {
        m_sessionProfile.reset(); // removes its temporary file
        return std::string();
    }
    auto written = m_sessionProfile->finish();
    m_sessionProfile.reset();
    if (!written)
        m_saveErrors.push_back(written.error().message);
    return written;
}

} // namespace emberline::engine
