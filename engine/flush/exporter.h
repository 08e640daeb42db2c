#pragma once

#include "engine/common/result.h"
#include "engine/flush/flush.h"
#include "engine/model/merge.h"
#include "engine/pprof/pprof_writer.h"
#include "engine/recorder/recorder.h"
#include "engine/symbols/kernel_symbols.h"
#include "engine/symbols/perf_map.h"
#include "engine/symbols/symbolizer.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

struct ExporterOptions {
    std::string outputDirectory; // flush-NNNN.pprof and profile.pprof go here; empty: nothing written
    int frequency = 99;
    bool wallTime = false; // a wall-time/nanoseconds sample type beside the CPU ones
    // The four memory types after the time ones: alloc-samples/count and alloc-space/bytes (allocated during the
    // flush), inuse-objects/count and inuse-space/bytes (live at its end: a full snapshot in every flush). The
    // session's profile sums the allocations and holds, as in-use, what each process held when it ended.
    bool memory = false;
    int64_t minimumFlushNs = 1'000'000'000; // a shorter final flush is not uploaded (Flush::upload)
    std::string samplerDescription;
    Symbolizer::Options symbolizer;
    std::string kallsymsPath = "/proc/kallsyms"; // names the frames under [kernel.kallsyms], read at first use
    // Where JIT compilers write perf-PID.map (PerfMap): names code in anonymous memory of the followed processes.
    std::string perfMapDirectory = "/tmp";
    // Why the sampler could not name kernel frames (kptr_restrict, perf_event_paranoid); a line of the health view.
    std::string kernelFramesProblem;
    // With debuginfod on (symbolizer.debuginfod), how long the final flush waits for downloads still running, so
    // that a short session's last flush and profile.pprof get the names they bring. Only the session's end waits.
    int finalDebuginfodWaitMs = 5000;
    // How long any other flush waits for the downloads it asked for itself (the modules it met first): enough for
    // a file already in libdebuginfod's cache or on a nearby server, so that even the first flush has the names;
    // longer downloads go on in the background and serve the following flushes.
    int newDebuginfodWaitMs = 300;
};

// Turns a FlushInput into a Flush: symbolizes the flush's unique locations (cached across flushes), builds the
// pprof Profile (sample types cpu-samples/count, cpu-time/nanoseconds and, when measured, wall-time/
// nanoseconds; labels thread id, thread name, thread state, end_timestamp_ns, and process_id when several
// processes are followed), serializes it and writes it. Code in anonymous memory is named from the followed
// processes' perf map files (JIT compilers write them), read again at every flush for what they gained.
//
// The session's merged profile (profile.pprof) is written as the session goes: each flush's samples (a final
// flush too short to be reported on its own included) are appended to it at once, and its tables when the
// session ends. Only the tables stay in memory: with every address and thread of every stack, the merged
// samples grow with the session's distinct samples, which a long session of a program with many call paths
// keeps producing (hundreds of megabytes in 30 minutes).
//
// A write that fails (a full disk, a folder that cannot be written) costs only the file: the flush still goes to
// the views with its error (Flush::saveError), no empty or partial file is left under a final name, and the
// failures are kept for the session's summary.
//
// Thread: the exporter thread (ExportWorker) only.
class Exporter {
public:
    explicit Exporter(ExporterOptions options);

    // nullptr (and no error) when the flush is empty or shorter than the minimum duration.
    Result<std::shared_ptr<const Flush>> exportFlush(const FlushInput &input);
    // At the session's end: writes profile.pprof, the whole session merged, and keeps the line tables the session
    // decoded (Symbolizer::keepLineTables). Returns the profile's path ("" when nothing was recorded or nothing is
    // written).
    Result<std::string> writeSessionProfile();
    uint32_t flushesReported() const { return m_sequence; }
    // Every write that failed so far, as "<file>: <reason>", in order (profile.pprof's once).
    const std::vector<std::string> &saveErrors() const { return m_saveErrors; }
    uint32_t flushesNotSaved() const { return m_flushesNotSaved; }
    // The health as of the last flush input that carried unwind counters (empty flushes included); null before.
    std::shared_ptr<const UnwindHealth> health() const { return m_health; }

private:
    // Fills `ids` (when given and the input carries session ids) with the session ids of its rows.
    // `leaks`: a profile of the flush's leak samples only (MemorySample::leak), for the session's profile (a flush's
    // own profile holds them among its in-use values: the last flush's in-use is the leaks).
    Profile buildProfile(const FlushInput &input, SessionIds *ids = nullptr, bool leaks = false);
    // `final` tells whether the name is the location's for the session (cached), or may change at a later flush
    // (JIT code that no perf map named yet).
    const std::vector<SymbolFrame> &symbolize(const LocationKey &key, const ModuleInfo *module, bool &final);
    // A frame under [kernel.kallsyms]: its kernel function, from /proc/kallsyms read once.
    std::vector<SymbolFrame> symbolizeKernel(uint64_t address);
    // The perf maps of the flush's processes, each brought up to date once per flush.
    void refreshPerfMaps(const FlushInput &input);
    // A frame for JIT code at `address` from those maps; empty when none names it.
    std::vector<SymbolFrame> symbolizeJit(uint64_t address) const;
    void save(Flush &flush);
    // exporter_health.cpp: the health view's rows and faults from the pipeline's counters.
    std::shared_ptr<const UnwindHealth> buildHealth(const UnwindCounters &counters);
    const ModuleSymbols &moduleSymbols(uint32_t id, const ModuleUnwindInfo &info);
    std::vector<std::string> healthFaults(const UnwindCounters &counters,
                                          const std::vector<DebuginfodStatus> &debuginfod) const;
    void addToSessionProfile(const Profile &profile, const SessionIds *ids, Flush &flush,
                             std::span<const size_t> skipColumns = {});
    // The debug files debuginfod delivered since the last flush: their modules' names are looked up again. With
    // `finalFlush`, first waits (boundedly) for the downloads in flight. Whether the health should be built again.
    bool adoptDebuginfodDownloads(int waitMs);

    ExporterOptions m_options;
    Symbolizer m_symbolizer;
    std::unordered_map<LocationKey, std::vector<SymbolFrame>, LocationKeyHash> m_symbolCache;
    std::optional<KernelSymbols> m_kernelSymbols; // read at the first kernel frame; empty table if unreadable
    bool m_kernelSymbolsReadWhole = false;        // /proc/kallsyms read whole (not the table kept for this boot)
    std::unordered_map<uint32_t, std::unique_ptr<PerfMap>> m_perfMaps; // by pid
    std::vector<const PerfMap *> m_flushPerfMaps;                      // of the flush being built
    std::unique_ptr<PprofStreamWriter> m_sessionProfile;               // profile.pprof, while it is being written
    uint32_t m_sequence = 0;
    uint64_t m_namingEpoch = 0; // changes when the symbol caches start over (Flush::sessionIds)
    std::vector<std::string> m_saveErrors;
    uint32_t m_flushesNotSaved = 0;
    bool m_sessionProfileFailed = false;
    std::shared_ptr<const UnwindHealth> m_health;
    std::unordered_map<uint32_t, ModuleSymbols> m_moduleSymbols; // by module id (stable within the session)
    std::vector<std::string> m_replacedFiles;                    // whose build id changed on disk
    std::vector<std::string> m_agentFaults;                      // the newest flush's FlushInput::agentFaults
    std::vector<std::string> m_agentNotes;                       // and its agentNotes
    std::string m_kernelSymbolsProblem;                          // why /proc/kallsyms could not be read
};

} // namespace emberline::engine
