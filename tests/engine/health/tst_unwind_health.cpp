// The unwind and symbol health model: from the pipeline's per-module counters to rows that name the cause and
// the fix, worst first, and to the lines of `emberline record`'s summary.
#include "engine/health/unwind_health.h"

#include <QTest>

#include <algorithm>

using namespace emberline::engine;

namespace {

// A context that says only whether DEBUGINFOD_URLS is set.
UnwindHealthContext withDebuginfod(bool configured)
{
    UnwindHealthContext context;
    context.debuginfodConfigured = configured;
    return context;
}

void addModule(UnwindCounters &c, uint32_t id, std::string path, bool anonymous = false, bool missing = false)
{
    if (c.modules.size() <= id)
        c.modules.resize(id + 1);
    if (c.byModule.size() <= id)
        c.byModule.resize(id + 1);
    c.modules[id].path = std::move(path);
    c.modules[id].anonymous = anonymous;
    c.modules[id].fileMissing = missing;
    c.modules[id].hasUnwindTable = !anonymous && !missing;
}

void addIncomplete(UnwindCounters &c, uint32_t id, UnwindCause cause, uint64_t n, uint64_t needed = 0)
{
    ModuleUnwindCounters &m = c.byModule[id];
    m.causes[size_t(cause)] += n;
    if (cause != UnwindCause::FramePointers) {
        m.incomplete += n;
        c.incomplete += n;
    }
    m.neededStackBytes = std::max(m.neededStackBytes, needed);
}

const ModuleHealth *row(const UnwindHealth &h, const std::string &path)
{
    for (const ModuleHealth &m : h.modules) {
        if (m.path == path)
            return &m;
    }
    return nullptr;
}

} // namespace

class TestUnwindHealth : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a stack cut by a small copy is not told apart from others, or the fix does not give the
    // size that would have held the stack.
    void stackCopyTooSmallSuggestsSize()
    {
        UnwindCounters c;
        c.samples = 100;
        c.stackBytes = 4096;
        addModule(c, 3, "/usr/bin/deep");
        c.byModule[3].samples = 100;
        addIncomplete(c, 3, UnwindCause::StackCopyTooSmall, 90, 41000);
        addIncomplete(c, 3, UnwindCause::Other, 2);
        const UnwindHealth h = buildUnwindHealth(c, {}, {}, {});
        const ModuleHealth *m = row(h, "/usr/bin/deep");
        QVERIFY(m);
        QCOMPARE(m->cause, UnwindCause::StackCopyTooSmall);
        QCOMPARE(m->causeText, std::string("stack copy too small"));
        QCOMPARE(m->suggestedStackBytes, uint32_t(45056)); // 41000 rounded up to 4 KiB
        QVERIFY2(m->fix.find("--stack-size 45056") != std::string::npos, m->fix.c_str());
        QCOMPARE(m->incompleteShare, 1.0);
        // Deeper than perf can copy: the fix says so instead of a size that cannot be asked for.
        c.byModule[3].neededStackBytes = 200000;
        c.stackBytes = kMaxStackCopyBytes;
        const UnwindHealth deep = buildUnwindHealth(c, {}, {}, {});
        QVERIFY2(row(deep, "/usr/bin/deep")->fix.find("largest copy") != std::string::npos,
                 row(deep, "/usr/bin/deep")->fix.c_str());
    }

    // Each cause with its own fix; the worst module (most incomplete stacks) first; modules never sampled left out.
    void causesAndFixes()
    {
        UnwindCounters c;
        c.samples = 1000;
        c.stackBytes = 32768;
        addModule(c, 0, "");
        addModule(c, 3, "/usr/lib/libnoinfo.so");
        addModule(c, 4, "/usr/lib/libgone.so", false, true);
        addModule(c, 5, "[anonymous]", true);
        addModule(c, 6, "/usr/bin/fp");
        addModule(c, 7, "/usr/lib/libunused.so");
        addModule(c, 8, "/usr/lib/libstripped.so");
        for (uint32_t id : {0u, 3u, 4u, 5u, 6u, 8u})
            c.byModule[id].samples = 50;
        addIncomplete(c, 3, UnwindCause::NoUnwindInfo, 40);
        addIncomplete(c, 4, UnwindCause::FileMissing, 30);
        addIncomplete(c, 5, UnwindCause::JitOrAnonymous, 20);
        addIncomplete(c, 0, UnwindCause::Other, 10);
        addIncomplete(c, 6, UnwindCause::FramePointers, 50);
        std::vector<ModuleSymbols> symbols(9);
        symbols[3] = {SymbolStatus::FullDwarf, SymbolSource::BuildId};
        symbols[6] = {SymbolStatus::FullDwarf, SymbolSource::Debuglink};
        symbols[8] = {SymbolStatus::SymbolTable, SymbolSource::InFile};
        const UnwindHealth h = buildUnwindHealth(c, symbols, {"perf map /tmp/perf-1.map: 3 malformed line(s) skipped"},
                                                 withDebuginfod(false));
        QCOMPARE(h.modules.front().path, std::string("/usr/lib/libnoinfo.so"));
        QVERIFY(!row(h, "/usr/lib/libunused.so"));
        QCOMPARE(row(h, "/usr/lib/libnoinfo.so")->causeText, std::string("no unwind info"));
        QVERIFY(row(h, "/usr/lib/libnoinfo.so")->fix.find("-fno-omit-frame-pointer") != std::string::npos);
        QCOMPARE(row(h, "/usr/lib/libnoinfo.so")->symbolText, std::string("full DWARF, found by build id"));
        QCOMPARE(row(h, "/usr/lib/libgone.so")->causeText, std::string("file missing or replaced"));
        QCOMPARE(row(h, "[anonymous]")->causeText, std::string("JIT or anonymous code"));
        QVERIFY(row(h, "[anonymous]")->fix.find("perf-PID.map") != std::string::npos);
        // An address outside every mapping: the walk went astray, or the process's map was never read.
        QCOMPARE(row(h, "[unknown]")->cause, UnwindCause::Other);
        QVERIFY(row(h, "[unknown]")->fix.find("outside every mapping") != std::string::npos);
        QVERIFY(row(h, "[unknown]")->fix.find("perf-PID.map") == std::string::npos);
        QCOMPARE(row(h, "/usr/bin/fp")->causeText, std::string("frame pointers used"));
        QCOMPARE(row(h, "/usr/bin/fp")->incomplete, uint64_t(0));
        QCOMPARE(row(h, "/usr/bin/fp")->symbolText, std::string("full DWARF, found by debuglink"));
        // Names from the symbol table only: the -dbgsym package, and debuginfod while it is not configured.
        const ModuleHealth *stripped = row(h, "/usr/lib/libstripped.so");
        QCOMPARE(stripped->symbolText, std::string("symbol table only, in the file"));
        QVERIFY2(stripped->fix.find("-dbgsym") != std::string::npos, stripped->fix.c_str());
        QVERIFY2(stripped->fix.find("DEBUGINFOD_URLS") != std::string::npos, stripped->fix.c_str());
        QVERIFY(row(buildUnwindHealth(c, symbols, {}, withDebuginfod(true)), "/usr/lib/libstripped.so")
                    ->fix.find("DEBUGINFOD_URLS") == std::string::npos);
        QCOMPARE(std::abs(row(h, "/usr/lib/libnoinfo.so")->incompleteShare - 0.4) < 1e-9, true);
        QCOMPARE(h.faults.size(), size_t(1));
    }

    // A library loaded by several processes has a module id per load address, but it is one file to fix: one row,
    // with the counts of all of them.
    void oneRowPerFile()
    {
        UnwindCounters c;
        c.samples = 30;
        c.stackBytes = 8192;
        for (uint32_t id : {3u, 4u, 5u}) {
            addModule(c, id, "/usr/lib/x86_64-linux-gnu/libc.so.6");
            c.modules[id].buildId = "aa";
            c.byModule[id].samples = 10;
            addIncomplete(c, id, UnwindCause::StackCopyTooSmall, 2, 10000 + id);
        }
        addModule(c, 6, "/usr/lib/x86_64-linux-gnu/libc.so.6");
        c.modules[6].buildId = "bb"; // another build of it: another row
        c.byModule[6].samples = 1;
        const UnwindHealth h = buildUnwindHealth(c, {}, {}, {});
        QCOMPARE(h.modules.size(), size_t(2));
        QCOMPARE(h.modules[0].samples, uint64_t(30));
        QCOMPARE(h.modules[0].incomplete, uint64_t(6));
        QCOMPARE(h.modules[0].suggestedStackBytes, uint32_t(12288)); // from the largest need of the three
        QCOMPARE(h.modules[1].buildId, std::string("bb"));
    }

    // The record summary's lines: the totals, a line per module to act on, then the faults.
    // If this fails, a module's debuginfod download (in progress, failed, not on the server, done) does not reach
    // the Symbols column and the summary, or the fix does not change while a download runs.
    void debuginfodDownloads()
    {
        UnwindCounters c;
        c.samples = 40;
        addModule(c, 1, "/usr/bin/busy");
        addModule(c, 2, "/usr/lib/libdown.so");
        addModule(c, 3, "/usr/lib/libnone.so");
        addModule(c, 4, "/usr/lib/libgot.so");
        for (uint32_t id = 1; id <= 4; ++id)
            c.byModule[id].samples = 10;
        std::vector<ModuleSymbols> symbols(5, ModuleSymbols{SymbolStatus::SymbolTable, SymbolSource::InFile});
        symbols[4] = {SymbolStatus::FullDwarf, SymbolSource::Debuginfod};
        std::vector<DebuginfodStatus> downloads(5);
        downloads[1].state = DebuginfodState::Downloading;
        downloads[1].bytes = 1'500'000;
        downloads[1].totalBytes = 4'200'000;
        downloads[2].state = DebuginfodState::Failed;
        downloads[2].error = "the server is down or unreachable (Connection refused)";
        downloads[3].state = DebuginfodState::NotFound;
        downloads[4].state = DebuginfodState::Found;
        const UnwindHealth h = buildUnwindHealth(c, symbols, {}, withDebuginfod(true), downloads);

        const ModuleHealth *busy = row(h, "/usr/bin/busy");
        QVERIFY(busy);
        QCOMPARE(busy->symbolText,
                 std::string("symbol table only, in the file; debuginfod: downloading 1.5 MB of 4.2 MB"));
        QCOMPARE(busy->fix, std::string("wait: debuginfod is downloading busy's debug file; later flushes use it"));
        const ModuleHealth *down = row(h, "/usr/lib/libdown.so");
        QVERIFY(down);
        QCOMPARE(down->symbolText, std::string("symbol table only, in the file; debuginfod: failed: the server is down "
                                               "or unreachable (Connection refused)"));
        QCOMPARE(down->fix, std::string("install the -dbgsym package that holds libdown.so's debug file"));
        QCOMPARE(row(h, "/usr/lib/libnone.so")->symbolText,
                 std::string("symbol table only, in the file; debuginfod: not on the server"));
        const ModuleHealth *got = row(h, "/usr/lib/libgot.so");
        QCOMPARE(got->symbolText, std::string("full DWARF, found by debuginfod"));
        QVERIFY(got->fix.empty());

        // The summary names every module debuginfod was asked about, the one it served too.
        const std::vector<std::string> lines = describeUnwindHealth(h);
        const auto mentions = [&](const std::string &text) {
            return std::any_of(lines.begin(), lines.end(),
                               [&](const std::string &line) { return line.find(text) != std::string::npos; });
        };
        QVERIFY(mentions("libgot.so: 10 stacks; symbols: full DWARF, found by debuginfod"));
        QVERIFY(mentions("busy: 10 stacks; symbols: symbol table only, in the file; debuginfod: downloading"));
    }

    void summaryLines()
    {
        UnwindCounters c;
        c.samples = 10;
        c.stackBytes = 8192;
        addModule(c, 3, "/opt/app/bin/server");
        c.byModule[3].samples = 10;
        addIncomplete(c, 3, UnwindCause::StackCopyTooSmall, 5, 20000);
        const UnwindHealth h = buildUnwindHealth(c, {}, {"kernel frames stay unnamed: kptr_restrict"}, {});
        const std::vector<std::string> lines = describeUnwindHealth(h);
        QCOMPARE(lines.size(), size_t(3));
        QVERIFY2(lines[0].find("5 of 10 stacks incomplete (50.00%)") != std::string::npos, lines[0].c_str());
        QVERIFY2(lines[1].find("server: 10 stacks, 100% of the incomplete stacks end here; cause: stack copy too "
                               "small") != std::string::npos,
                 lines[1].c_str());
        QVERIFY2(lines[1].find("--stack-size 20480") != std::string::npos, lines[1].c_str());
        QVERIFY2(lines[2].find("problem: kernel frames stay unnamed") != std::string::npos, lines[2].c_str());
    }

    // Samples taken in the kernel have rows of their own: named from /proc/kallsyms, or not and why, with the
    // fix; and a [kernel] row when the kernel's call stacks were not recorded. If this fails, the health view is
    // silent about the share of a profile that kernel time often is, or about why its frames have no names.
    void kernelRows()
    {
        UnwindCounters c;
        c.samples = 100;
        c.kernelSamples = 30;
        addModule(c, 3, "/usr/bin/dd");
        c.byModule[3].samples = 100;
        UnwindHealthContext named;
        named.kernelSymbolsRead = true;
        const UnwindHealth h = buildUnwindHealth(c, {}, {}, named);
        const ModuleHealth *kernel = row(h, "[kernel.kallsyms]");
        QVERIFY(kernel);
        QCOMPARE(kernel->samples, uint64_t(30));
        QCOMPARE(kernel->symbols.status, SymbolStatus::SymbolTable);
        QCOMPARE(kernel->symbolText, std::string("symbol table, /proc/kallsyms"));
        QVERIFY(kernel->fix.empty());
        QVERIFY(!row(h, "[kernel]"));
        QCOMPARE(h.modules.front().path, std::string("/usr/bin/dd")); // more stacks, first

        UnwindHealthContext hidden;
        hidden.kernelSymbolsProblem = "kernel frames stay unnamed: /proc/kallsyms shows every address as 0";
        const UnwindHealth unread = buildUnwindHealth(c, {}, {}, hidden);
        kernel = row(unread, "[kernel.kallsyms]");
        QVERIFY(kernel);
        QCOMPARE(kernel->symbols.status, SymbolStatus::None);
        QVERIFY2(kernel->symbolText.find("every address as 0") != std::string::npos, kernel->symbolText.c_str());
        QVERIFY2(kernel->fix.find("kptr_restrict") != std::string::npos, kernel->fix.c_str());
        const std::vector<std::string> lines = describeUnwindHealth(unread);
        QVERIFY(std::any_of(lines.begin(), lines.end(), [](const std::string &l) {
            return l.find("[kernel.kallsyms]: 30 stacks; symbols: none") != std::string::npos;
        }));

        c.kernelSamples = 0;
        c.kernelUnnamedSamples = 12;
        UnwindHealthContext noChains;
        noChains.kernelFramesProblem = "kernel call stacks need perf_event_paranoid <= 1";
        const UnwindHealth single = buildUnwindHealth(c, {}, {}, noChains);
        QVERIFY(!row(single, "[kernel.kallsyms]"));
        kernel = row(single, "[kernel]");
        QVERIFY(kernel);
        QCOMPARE(kernel->samples, uint64_t(12));
        QVERIFY2(kernel->symbolText.find("perf_event_paranoid <= 1") != std::string::npos, kernel->symbolText.c_str());
        QVERIFY2(kernel->fix.find("perf_event_paranoid") != std::string::npos, kernel->fix.c_str());
    }
};

QTEST_GUILESS_MAIN(TestUnwindHealth)
#include "tst_unwind_health.moc"
