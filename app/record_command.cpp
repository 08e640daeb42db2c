#include "app/record_command.h"

#include "app/upload_options.h"
#include "engine/analysis/heap_summary.h"
#include "engine/model/frame_table.h"
#include "engine/model/units.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/process/process_list.h"
#include "engine/sampler/replay_sampler.h"
#include "engine/session/record_session.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDir>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <string>

namespace emberline::app {
namespace {

engine::SessionControl g_control;

void onSignal(int)
{
    g_control.stop.store(true);
}

// What the blocks still live at the end are called: leaks where the program ended, else (an attached program, or a
// session that stopped first) what it still held when the session ended.
const char *liveAtEnd(bool programEnded)
{
    return programEnded ? "still live when the program ended"
                        : "still live when the session ended (the program ran on)";
}

void printMemorySummary(const engine::MemorySummary &m, bool programEnded)
{
    auto bytes = [](double v) { return engine::formatValue(static_cast<int64_t>(std::llround(v)), "bytes"); };
    const std::string how = m.interval == 1 ? std::string("every allocation")
                                            : "sampled every " + bytes(static_cast<double>(m.interval)) +
                                                  " on average: the profile's values are estimates, \u00b1 the range "
                                                  "sampling leaves them 19 times in 20 (the live heap calibrated to "
                                                  "the agent's exact count of it)";
    // "1.2 MiB (±80.0 KiB)": an estimate and its sampling's 95% range, when it has one.
    auto estimate = [&](double value, double margin) {
        return margin >= 1 && value > 0 ? bytes(value) + " (\u00b1" + bytes(margin) + ")" : bytes(value);
    };
    // The totals the hooks counted; where sampled, what the profile's samples make of them beside.
    std::string allocated = estimate(m.allocatedBytes, m.allocatedBytesMargin) + " allocated in " +
                            std::to_string(std::llround(m.allocatedObjects)) + " allocations";
    if (m.allocatedExact && m.interval > 1)
        allocated += " (counted; the samples estimate " +
                     estimate(m.sampledAllocatedBytes, m.sampledAllocatedBytesMargin) + " in " +
                     std::to_string(std::llround(m.sampledAllocatedObjects)) + ")";
    std::fprintf(stderr, "emberline: memory (%s): %s; live heap peak %s; %s %s in %.0f blocks\n", how.c_str(),
                 allocated.c_str(), bytes(m.highWaterBytes).c_str(), liveAtEnd(programEnded),
                 estimate(m.leakedBytes, m.leakedBytesMargin).c_str(), m.leakedObjects);
    std::fprintf(stderr,
                 "emberline: memory: %llu allocation(s) and %llu free(s) read from %llu process(es); %llu sampled "
                 "allocation(s) (%s) lost to a full ring; %llu free(s) of unknown addresses\n",
                 static_cast<unsigned long long>(m.samples), static_cast<unsigned long long>(m.frees),
                 static_cast<unsigned long long>(m.processes), static_cast<unsigned long long>(m.allocsDropped),
                 bytes(static_cast<double>(m.bytesDropped)).c_str(), static_cast<unsigned long long>(m.unknownFrees));
    if (m.attached)
        std::fprintf(stderr,
                     "emberline: memory: attached to the running program (its thread stopped %s to load the agent, "
                     "in an injection of %s; %d module(s) call its hooks): allocated and in use count what was "
                     "allocated since the attach; the frees of unknown addresses are mostly of blocks allocated "
                     "before it, and the resident memory holds those blocks too\n",
                     engine::formatValue(static_cast<int64_t>(m.attachStoppedNs), "nanoseconds").c_str(),
                     engine::formatValue(static_cast<int64_t>(m.attachInjectNs), "nanoseconds").c_str(),
                     m.modulesRedirected);
    if (m.waitNs > 0)
        std::fprintf(stderr, "emberline: memory: the program waited %s for room in the ring (exact mode)\n",
                     engine::formatValue(static_cast<int64_t>(m.waitNs), "nanoseconds").c_str());
    for (const std::string &note : m.notes)
        std::fprintf(stderr, "emberline: memory: %s\n", note.c_str());
    for (const std::string &problem : m.problems)
        std::fprintf(stderr, "emberline: memory: %s\n", problem.c_str());
}

void printAgentStacks(const engine::AgentStacksSummary &a)
{
    // A checked sample was walked (and copied too, for the check): it counts as walked.
    const uint64_t walked = a.walked + a.checks;
    const uint64_t total = walked + a.copied;
    if (total == 0)
        return;
    const auto share = [total](uint64_t n) { return 100.0 * static_cast<double>(n) / static_cast<double>(total); };
    std::string copied;
    for (size_t i = 0; i < a.copiedBecause.size() && i < 3; ++i)
        copied += (i ? ", " : "") + a.copiedBecause[i].first + " " + std::to_string(a.copiedBecause[i].second);
    std::fprintf(stderr,
                 "emberline: agent stacks: %llu of %llu (%.2f%%) walked in the program (%llu of them as a stack "
                 "written before, %llu from the innermost frames of a thread's earlier walk, %llu copied too for the "
                 "check), %llu (%.2f%%) copied%s%s%s\n",
                 static_cast<unsigned long long>(walked), static_cast<unsigned long long>(total), share(walked),
                 static_cast<unsigned long long>(a.stackRefs), static_cast<unsigned long long>(a.leafWalks),
                 static_cast<unsigned long long>(a.checks), static_cast<unsigned long long>(a.copied), share(a.copied),
                 copied.empty() ? "" : " (", copied.c_str(), copied.empty() ? "" : ")");
    if (a.handlerSamples > 0)
        std::fprintf(stderr, "emberline: in-process sampler: its handler took p50 %s, p99 %s a sample (%llu samples)\n",
                     engine::formatValue(static_cast<int64_t>(a.handlerP50Ns), "nanoseconds").c_str(),
                     engine::formatValue(static_cast<int64_t>(a.handlerP99Ns), "nanoseconds").c_str(),
                     static_cast<unsigned long long>(a.handlerSamples));
    if (a.pythonWalks > 0)
        std::fprintf(stderr,
                     "emberline: in-process sampler: of that, its walk of the Python frames took p50 %s, p99 %s "
                     "(%llu walks, %.1f frames on average)\n",
                     engine::formatValue(static_cast<int64_t>(a.pythonWalkP50Ns), "nanoseconds").c_str(),
                     engine::formatValue(static_cast<int64_t>(a.pythonWalkP99Ns), "nanoseconds").c_str(),
                     static_cast<unsigned long long>(a.pythonWalks), a.pythonWalkFrames);
    if (a.walking)
        std::fprintf(stderr,
                     "emberline: agent stacks: %llu unwind table(s) shared (%llu kept from earlier sessions; %s, "
                     "made in %s)%s%s; %llu checked against Emberline's own unwind of a copy: %llu differ (%.3f%%)\n",
                     static_cast<unsigned long long>(a.tablesBuilt), static_cast<unsigned long long>(a.tablesStored),
                     engine::formatValue(static_cast<int64_t>(a.tableBytes), "bytes").c_str(),
                     engine::formatValue(a.tableBuildNs, "nanoseconds").c_str(), a.tableProblem.empty() ? "" : ": ",
                     a.tableProblem.c_str(), static_cast<unsigned long long>(a.checks),
                     static_cast<unsigned long long>(a.mismatches),
                     a.checks ? 100.0 * static_cast<double>(a.mismatches) / static_cast<double>(a.checks) : 0.0);
}

// As heaptrack_print ends: the functions (each stack blamed on its caller of malloc or operator new, as the window's
// memory summary blames it) that leaked most, allocated most often and freed most soon, from the session's
// profile.pprof; `report` and the window's Memory tab go further.
void printMemoryDigest(const std::string &sessionProfile, bool programEnded)
{
    auto read = engine::readPprofFile(sessionProfile);
    if (!read) {
        std::fprintf(stderr, "emberline: memory: no summary by function: %s\n", read.error().message.c_str());
        return;
    }
    const engine::Profile &profile = read.value();
    const engine::FrameTable frames(profile);
    constexpr size_t kTop = 5;
    const engine::HeapSummary s = engine::summarizeHeap(profile, frames, engine::memoryByStack(profile), nullptr, kTop);
    const auto bytes = [](int64_t v) { return engine::formatValue(v, "bytes"); };
    const auto list = [](const char *title, const std::vector<engine::HeapSummaryRow> &rows, auto &&describe) {
        if (rows.empty())
            return;
        std::string line;
        for (const engine::HeapSummaryRow &row : rows)
            line += (line.empty() ? "" : "; ") + row.function + " " + describe(row);
        std::fprintf(stderr, "emberline: memory: %s: %s\n", title, line.c_str());
    };
    const std::string leaksTitle = programEnded ? std::string("largest leaks (") + liveAtEnd(true) + ")"
                                                : std::string("largest ") + liveAtEnd(false);
    list(leaksTitle.c_str(), s.leaks, [&](const engine::HeapSummaryRow &r) {
        // A process image's heap that no sample saw ("[heap no sample saw]") is counted in bytes alone.
        return bytes(r.inuseBytes) +
               (r.inuseObjects > 0 ? " in " + std::to_string(r.inuseObjects) + " blocks" : std::string());
    });
    list("most allocations", s.allocations, [&](const engine::HeapSummaryRow &r) {
        return std::to_string(r.allocObjects) + " (" + bytes(r.allocBytes) + ")";
    });
    list(s.temporaryByLifetime ? "most short-lived (freed within 1 ms)" : "most allocations not live at the end",
         s.temporary, [&](const engine::HeapSummaryRow &r) {
             return std::to_string(r.value) + " of " + std::to_string(r.allocObjects);
         });
}

// "profiler CPU 1.2 s (3.1% of a core, 4.0% of the target's)": Emberline's CPU as a share of one core over the
// session, and of the target's only when the target kept at least a tenth of a core busy: against a mostly idle
// target, Emberline's fixed costs read as several hundred per cent of nothing. The window's status bar
// (ui/views/live/session_status_bar.cpp) draws the same line.
std::string cpuLine(const engine::SessionSummary &s)
{
    constexpr double kComparableTargetCores = 0.1;
    const auto share = [&](int64_t ns) { return s.durationNs > 0 ? 100.0 * double(ns) / double(s.durationNs) : 0.0; };
    char line[256];
    std::snprintf(line, sizeof line, "target CPU sampled %s (%.1f%% of a core); profiler CPU %s (%.1f%% of a core",
                  engine::formatValue(s.targetCpuNs, "nanoseconds").c_str(), share(s.targetCpuNs),
                  engine::formatValue(s.profilerCpuNs, "nanoseconds").c_str(), share(s.profilerCpuNs));
    std::string out = line;
    if (s.targetCpuNs > 0 && share(s.targetCpuNs) >= 100.0 * kComparableTargetCores) {
        std::snprintf(line, sizeof line, ", %.2f%% of the target's",
                      100.0 * static_cast<double>(s.profilerCpuNs) / static_cast<double>(s.targetCpuNs));
        out += line;
    }
    return out + ")";
}

void printSummary(const engine::SessionSummary &s)
{
    const double incompletePct = s.samples ? 100.0 * static_cast<double>(s.incomplete) / s.samples : 0;
    std::fprintf(stderr,
                 "emberline: %s\nemberline: %s\n"
                 "emberline: %s after %s: %llu samples (%.1f per second), %llu lost, %.2f%% of the CPU samples' stacks "
                 "incomplete\n"
                 "emberline: %s\n",
                 s.samplerChoice.c_str(), s.samplerDescription.c_str(), s.endReason.c_str(),
                 engine::formatValue(s.durationNs, "nanoseconds").c_str(), static_cast<unsigned long long>(s.samples),
                 s.realRateHz, static_cast<unsigned long long>(s.lost), incompletePct, cpuLine(s).c_str());
    if (!s.wallTimeProblem.empty())
        std::fprintf(stderr, "emberline: %s\n", s.wallTimeProblem.c_str());
    for (const std::string &problem : s.samplerProblems)
        std::fprintf(stderr, "emberline: %s\n", problem.c_str());
    if (!s.kernelFramesProblem.empty())
        std::fprintf(stderr, "emberline: %s\n", s.kernelFramesProblem.c_str());
    std::fprintf(stderr, "emberline: %llu sample(s) of other processes dropped (not in the followed tree)\n",
                 static_cast<unsigned long long>(s.foreignDropped));
    if (s.stackCopyLearned)
        std::fprintf(stderr,
                     "emberline: stack copy learned: %u bytes at the end (%u change(s)); the deepest stack "
                     "used %llu bytes\n",
                     s.stackCopyBytes, s.stackCopyChanges, static_cast<unsigned long long>(s.deepestStackBytes));
    if (!s.stackCopyProblem.empty())
        std::fprintf(stderr, "emberline: %s\n", s.stackCopyProblem.c_str());
    if (s.health) {
        // Its counts take in the stacks of off-CPU waits: a share apart from the CPU samples' above.
        if (s.health->samples != s.samples)
            std::fprintf(stderr, "emberline: the unwind health counts the stacks of CPU samples and off-CPU waits "
                                 "together:\n");
        for (const std::string &line : engine::describeUnwindHealth(*s.health))
            std::fprintf(stderr, "emberline: %s\n", line.c_str());
    } else {
        for (const auto &[module, count] : s.incompleteByModule)
            std::fprintf(stderr, "emberline:   incomplete stacks ending in %s: %llu\n", module.c_str(),
                         static_cast<unsigned long long>(count));
    }
    if (s.memory) {
        printMemorySummary(*s.memory, s.targetExited);
        if (!s.sessionProfilePath.empty())
            printMemoryDigest(s.sessionProfilePath, s.targetExited);
    }
    if (s.agentStacks)
        printAgentStacks(*s.agentStacks);
    if (!s.sessionProfilePath.empty())
        std::fprintf(stderr, "emberline: wrote %u flush(es) and %s\n", s.flushes - s.flushesNotSaved,
                     s.sessionProfilePath.c_str());
    else if (s.flushes > s.flushesNotSaved)
        std::fprintf(stderr, "emberline: wrote %u flush(es); the session's profile.pprof could not be written\n",
                     s.flushes - s.flushesNotSaved);
    if (s.saveErrors.empty())
        return;
    std::string what;
    if (s.flushesNotSaved > 0)
        what = std::to_string(s.flushesNotSaved) + " of " + std::to_string(s.flushes) + " flush(es)";
    if (s.sessionProfilePath.empty())
        what += what.empty() ? "the session's profile.pprof" : " and the session's profile.pprof";
    std::fprintf(stderr, "emberline: could not save %s:\n", what.c_str());
    for (const std::string &e : s.saveErrors)
        std::fprintf(stderr, "emberline:   %s\n", e.c_str());
}

void printFlush(const engine::Flush &flush)
{
    const auto samples = static_cast<unsigned long long>(flush.profile->sampleCount());
    if (!flush.saveError.empty())
        std::fprintf(stderr, "emberline: flush %u: %llu samples NOT saved: %s\n", flush.sequence, samples,
                     flush.saveError.c_str());
    else if (!flush.path.empty())
        std::fprintf(stderr, "emberline: flush %u: %llu samples -> %s\n", flush.sequence, samples, flush.path.c_str());
    if (!flush.sessionProfileError.empty())
        std::fprintf(stderr, "emberline: the session's profile will be missing: %s\n",
                     flush.sessionProfileError.c_str());
}

} // namespace

Verb recordVerb()
{
    return {QStringLiteral("record"), QStringLiteral("record [options] (--pid PID | -- COMMAND [ARGS...])"),
            configureRecordParser, runRecord};
}

void configureRecordParser(QCommandLineParser &parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Profile a program without the GUI: launch it (-- COMMAND ARGS) or attach to it\n"
                       "(--pid PID). Writes flush-NNNN.pprof every flush period and profile.pprof (the\n"
                       "whole session), and prints a summary. Exits with the launched program's status."));
    parser.addHelpOption();
    parser.addOptions({
        {QStringLiteral("pid"), QStringLiteral("Attach to a running process."), QStringLiteral("PID")},
        {QStringLiteral("frequency"), QStringLiteral("Samples per second (default 99)."), QStringLiteral("HZ"),
         QStringLiteral("99")},
        {QStringLiteral("duration"),
         QStringLiteral("Stop after this many seconds (default: when the target exits or on Ctrl+C)."),
         QStringLiteral("SECONDS")},
        {QStringLiteral("flush-period"), QStringLiteral("Seconds between flushes, 1 to 60 (default 10)."),
         QStringLiteral("SECONDS"), QStringLiteral("10")},
        {QStringLiteral("sampler"),
         QStringLiteral("auto, perf, ptrace or inprocess (default auto: perf events where allowed; else inprocess, "
                        "its agent preloaded into a launch or loaded into a running program, and ptrace where it "
                        "cannot be loaded)."),
         QStringLiteral("NAME"), QStringLiteral("auto")},
        {QStringLiteral("output"),
         QStringLiteral("Write flush-NNNN.pprof and profile.pprof here (default ./emberline-<time>)."),
         QStringLiteral("DIR")},
        {QStringLiteral("stack-size"),
         QStringLiteral("Bytes of user stack copied per sample, 1024 to 65000. Default: learned from the stacks, "
                        "starting at 32768, shrinking to what they need and growing when one is cut short."),
         QStringLiteral("BYTES"), QStringLiteral("32768")},
        {QStringLiteral("wall-time"),
         QStringLiteral("Record wall time too: where threads wait (sleep, locks, I/O). On by default where "
                        "perf events may sample context switches.")},
        {QStringLiteral("no-wall-time"), QStringLiteral("Record CPU time only (no context-switch samples).")},
        {QStringLiteral("memory"),
         QStringLiteral("Profile memory too: allocations, the live heap and leaks, from an agent preloaded into the "
                        "launched program, or loaded into the running one (--pid: what it allocates from then on).")},
        {QStringLiteral("alloc-interval"),
         QStringLiteral("With --memory: mean bytes allocated between two sampled allocations (default 524288); 1 "
                        "records every allocation (exact, slower)."),
         QStringLiteral("BYTES"), QStringLiteral("524288")},
        {QStringLiteral("python-allocators"),
         QStringLiteral("With --memory, for a launched CPython: count every object at CPython's own allocators "
                        "(PyMem_SetAllocator) rather than at malloc, where its small objects' arenas count as one "
                        "allocation each.")},
        {QStringLiteral("python-interpreter-frames"),
         QStringLiteral(
             "For a CPython program: keep the interpreter's own frames (its eval loop under the Python frames "
             "each call of it ran, and the functions that pass calls on), for those debugging CPython; marked, so "
             "that the window hides them again unless View > Python Interpreter Frames is on.")},
        {QStringLiteral("agent-stacks"),
         QStringLiteral("How the in-process agent takes stacks (memory, --sampler inprocess): walk (default: in the "
                        "program, with unwind tables Emberline builds, copying where a walk cannot go) or copy "
                        "(every stack copied and unwound by Emberline; slower)."),
         QStringLiteral("MODE"), QStringLiteral("walk")},
        {QStringLiteral("walk-check"),
         QStringLiteral("Every Nth walked stack of a thread is copied too and unwound by Emberline, to check the "
                        "walk (default 1000; 1 checks every stack; 0 none)."),
         QStringLiteral("N"), QStringLiteral("1000")},
    });
    parser.addOptions(UploadOptions().all());
    // For benchmarks and bug reports, not for everyday use: everything the sampler delivers (registers, stack
    // copies, maps, thread names) is also written to FILE, which tests/bench/bench_replay replays later through
    // the unwinder and recorder without the program.
    QCommandLineOption sampleLog(QStringLiteral("sample-log"),
                                 QStringLiteral("Also write every record the sampler delivers to FILE."),
                                 QStringLiteral("FILE"));
    sampleLog.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(sampleLog);
}

int runRecord(const QStringList &args)
{
    // Everything after "--" is the command, untouched by option parsing.
    const qsizetype dashes = args.indexOf(QStringLiteral("--"));
    const QStringList own = dashes < 0 ? args : args.mid(0, dashes);
    const QStringList command = dashes < 0 ? QStringList{} : args.mid(dashes + 1);

    QCommandLineParser parser;
    configureRecordParser(parser);
    if (!parser.parse(own)) {
        std::fprintf(stderr, "emberline record: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("help-all"))) {
        std::fputs(qPrintable(helpText(parser, {recordVerb().usage})), stdout);
        return 0;
    }
    const QString pid = QStringLiteral("pid");
    const QString frequency = QStringLiteral("frequency");
    const QString duration = QStringLiteral("duration");
    const QString flushPeriod = QStringLiteral("flush-period");
    const QString stackSize = QStringLiteral("stack-size");
    const QString output = QStringLiteral("output");
    auto number = [&](const QString &option, double &out) {
        bool ok = false;
        out = parser.value(option).toDouble(&ok);
        if (!ok)
            std::fprintf(stderr, "emberline record: --%s needs a number, got '%s'\n", qPrintable(option),
                         qPrintable(parser.value(option)));
        return ok;
    };

    engine::SessionConfig config;
    for (const QString &c : command)
        config.command.push_back(c.toStdString());
    double value = 0;
    if (parser.isSet(pid)) {
        if (!number(pid, value))
            return 2;
        config.pid = static_cast<int>(value);
        // A shell (or sudo, time) that waits for the command it runs does no work of its own: said before the attach.
        if (const std::string hint = engine::waitingParentHint(config.pid); !hint.empty())
            std::fprintf(stderr, "emberline: note: %s\n", hint.c_str());
    }
    if (!number(frequency, value))
        return 2;
    config.frequency = static_cast<int>(value);
    if (parser.isSet(duration)) {
        if (!number(duration, value))
            return 2;
        config.durationNs = static_cast<int64_t>(value * 1e9);
    }
    if (!number(flushPeriod, value))
        return 2;
    config.flushPeriodNs = static_cast<int64_t>(value * 1e9);
    if (!number(stackSize, value))
        return 2;
    config.stackBytes = static_cast<uint32_t>(value);
    config.learnStackCopy = !parser.isSet(stackSize);
    config.sampler = parser.value(QStringLiteral("sampler")).toStdString();
    if (parser.isSet(QStringLiteral("wall-time")) && parser.isSet(QStringLiteral("no-wall-time"))) {
        std::fprintf(stderr, "emberline record: --wall-time and --no-wall-time contradict each other\n");
        return 2;
    }
    config.wallTime = !parser.isSet(QStringLiteral("no-wall-time"));
    config.memory = parser.isSet(QStringLiteral("memory"));
    if (parser.isSet(QStringLiteral("alloc-interval")) && !config.memory) {
        std::fprintf(stderr, "emberline record: --alloc-interval needs --memory\n");
        return 2;
    }
    if (!number(QStringLiteral("alloc-interval"), value) || value < 1) {
        std::fprintf(stderr, "emberline record: --alloc-interval must be a number of bytes, at least 1\n");
        return 2;
    }
    config.allocInterval = static_cast<uint64_t>(value);
    config.pythonAllocators = parser.isSet(QStringLiteral("python-allocators"));
    config.pythonInterpreterFrames = parser.isSet(QStringLiteral("python-interpreter-frames"));
    if (config.pythonAllocators && !config.memory) {
        std::fprintf(stderr, "emberline record: --python-allocators needs --memory\n");
        return 2;
    }
    const QString stacks = parser.value(QStringLiteral("agent-stacks"));
    if (stacks != QStringLiteral("walk") && stacks != QStringLiteral("copy")) {
        std::fprintf(stderr, "emberline record: --agent-stacks is walk or copy\n");
        return 2;
    }
    config.agentWalks = stacks == QStringLiteral("walk");
    if (!number(QStringLiteral("walk-check"), value) || value < 0 || value > 1e9) {
        std::fprintf(stderr, "emberline record: --walk-check must be a number, 0 or more\n");
        return 2;
    }
    config.walkCheckEvery = static_cast<uint32_t>(value);
    config.outputDirectory =
        parser.isSet(output)
            ? parser.value(output).toStdString()
            : QDir::current()
                  .filePath(QStringLiteral("emberline-%1")
                                .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))))
                  .toStdString();
    if (auto st = engine::validateConfig(config); !st) {
        std::fprintf(stderr, "emberline record: %s\n", st.error().message.c_str());
        return 2;
    }

    // The options are looked up by name: these are equal to the ones configureRecordParser() added.
    const UploadOptions uploadOptions;
    auto upload = RecordUpload::create(parser, uploadOptions);
    if (!upload) {
        std::fprintf(stderr, "emberline record: upload: %s\n", upload.error().message.c_str());
        return 2;
    }

    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);

    engine::SamplerFactory factory;
    if (const QString log = parser.value(QStringLiteral("sample-log")); !log.isEmpty()) {
        factory = [path = log.toStdString()](const engine::SessionConfig &c, int child, std::string &choice) {
            using Opened = engine::Result<std::unique_ptr<engine::Sampler>>;
            auto inner = engine::openSystemSampler(c, child, choice);
            if (!inner)
                return inner;
            auto writer = engine::SampleLogWriter::create(path);
            if (!writer)
                return Opened(writer.error());
            return Opened(
                std::make_unique<engine::CapturingSampler>(std::move(inner).value(), std::move(writer).value()));
        };
    }
    engine::RecordSession session(config, factory);
    engine::RecordSession::Callbacks callbacks;
    // The session's flush consumers, fed on the exporter thread: the uploader first (it never waits on the network),
    // then the line printed per flush.
    callbacks.consumers = std::make_shared<engine::FlushConsumers>();
    if (upload.value())
        callbacks.consumers->add(upload.value()->uploader());
    callbacks.consumers->add([](const std::shared_ptr<const engine::Flush> &flush) { printFlush(*flush); });
    auto result = session.run(g_control, callbacks);
    if (upload.value())
        upload.value()->finish();
    if (!result) {
        std::fprintf(stderr, "emberline record: %s\n", result.error().message.c_str());
        return 1;
    }
    printSummary(result.value());
    if (result->launched)
        return result->exitStatus;
    return 0;
}

} // namespace emberline::app
