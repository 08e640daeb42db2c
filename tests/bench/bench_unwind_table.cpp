// The compact unwind tables' costs (numbers printed, never asserted):
//   bench_unwind_table [WALKS]   (default 20000 walks of each stack)
// - the build, per module (libpython, libstdc++, the C library, the C++ compiler cc1plus): the time of the first
//   build (file pages cold or warm as the machine has them) and the best of three, the peak memory it took (the
//   growth of the process's peak RSS, measured in a forked child whose peak is reset first), the table's own bytes,
//   its rows by kind and the share of the code they cover;
// - the walk, on this process's stacks under qsort (shallow and deep): the table walk's time per frame beside
//   libunwind's (unw_init_local, then unw_step to the end) from the same registers, and whether they agreed.
#include "tests/engine/unwind/unwind_test_stacks.h"

#include "engine/unwind/elf_cache.h"
#include "engine/unwind/unwind_table_builder.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace emberline;
using namespace emberline::engine;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A /proc/self/status field in KiB.
long statusKib(const char *field)
{
    FILE *f = std::fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long value = -1;
    const size_t length = std::strlen(field);
    while (std::fgets(line, sizeof(line), f)) {
        if (std::strncmp(line, field, length) == 0 && line[length] == ':') {
            value = std::strtol(line + length + 1, nullptr, 10);
            break;
        }
    }
    std::fclose(f);
    return value;
}

std::string newestMatch(const std::string &folder, const std::string &prefix, const std::string &suffix)
{
    std::string found;
    std::error_code error;
    for (const auto &entry : std::filesystem::directory_iterator(folder, error)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(prefix) && name.ends_with(suffix) && entry.path().string() > found)
            found = entry.path().string();
    }
    return found;
}

std::string findCc1plus()
{
    std::string found;
    std::error_code error;
    for (const auto &entry : std::filesystem::directory_iterator("/usr/lib/gcc/x86_64-linux-gnu", error)) {
        const auto candidate = entry.path() / "cc1plus";
        if (std::filesystem::exists(candidate, error) && candidate.string() > found)
            found = candidate.string();
    }
    return found;
}

// One module's build, in a child so that its peak memory is its own.
void benchBuild(const char *label, const std::string &path)
{
    if (path.empty()) {
        std::printf("%-12s not installed\n", label);
        return;
    }
    std::fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
        if (FILE *f = std::fopen("/proc/self/clear_refs", "w")) { // resets VmHWM to the current RSS
            std::fputs("5", f);
            std::fclose(f);
        }
        const long rssBefore = statusKib("VmRSS");
        auto start = Clock::now();
        auto first = buildUnwindTable(path);
        const double firstMs = msSince(start);
        const long peak = statusKib("VmHWM");
        if (!first.ok()) {
            std::printf("%-12s %s\n", label, first.error().message.c_str());
            std::fflush(stdout);
            _exit(1);
        }
        double bestMs = firstMs;
        for (int i = 0; i < 3; ++i) {
            start = Clock::now();
            auto again = buildUnwindTable(path);
            bestMs = std::min(bestMs, msSince(start));
        }
        const ModuleUnwindTable &t = *first.value();
        const UnwindTableStats &s = t.stats;
        std::printf("%-12s %8.1f ms first, %8.1f ms best; peak +%6ld KiB; %7zu rows = %7.1f KiB (%zu B/row); %6u FDEs, "
                    "%7u libdw rows; %.2f%% of %lu code bytes covered\n",
                    label, firstMs, bestMs, peak - rssBefore, t.rows.size(),
                    double(t.rows.size() * sizeof(agent::UnwindRow)) / 1024.0, sizeof(agent::UnwindRow), s.fdes,
                    s.dwarfRows, 100.0 * s.coveredShare(), static_cast<unsigned long>(s.executableBytes));
        static const char *const names[] = {"rsp", "rbp",    "end",      "expression", "signal",
                                            "plt", "no-fde", "register", "other"};
        std::printf("%-12s rows by kind:", "");
        for (int k = 0; k < agent::kUnwindKindCount; ++k)
            std::printf(" %s %u (%lu B)", names[k], s.rows[k], static_cast<unsigned long>(s.bytes[k]));
        std::printf("; FDEs unread %u, overlaps %u\n", s.unreadFdes, s.overlaps);
        std::fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
}

// Both walks of one live stack, timed from the same captured registers.
void benchWalk(test::StackProbe &probe, int depth, int walks)
{
    probe.underQsort(depth, [&](const unw_context_t &context, const agent::StackBounds &stack) {
        unw_context_t copy = context;
        uint64_t ours[test::StackProbe::kMaxFrames];
        uint64_t theirs[test::StackProbe::kMaxFrames];
        const agent::UnwindWalk walk = probe.walkFrom(copy, stack, ours); // builds the tables it needs
        const size_t frames = test::StackProbe::libunwindFrom(copy, theirs);
        const bool agree = walk.frames == frames && std::equal(ours, ours + frames, theirs);

        auto start = Clock::now();
        uint64_t sink = 0;
        for (int i = 0; i < walks; ++i)
            sink += probe.walkFrom(copy, stack, ours).frames;
        const double tableNs = msSince(start) * 1e6 / double(sink);
        start = Clock::now();
        sink = 0;
        for (int i = 0; i < walks; ++i) {
            unw_context_t fresh = context;
            sink += test::StackProbe::libunwindFrom(fresh, theirs);
        }
        const double libunwindNs = msSince(start) * 1e6 / double(sink);
        std::printf("qsort at depth %2d: %3u frames (%s, the walk %s); per frame: table walk %6.1f ns, libunwind "
                    "unw_step %6.1f ns (%.1fx)\n",
                    depth, walk.frames, agree ? "agree with libunwind" : "DIFFER from libunwind",
                    walk.last.status == agent::UnwindStatus::End ? "whole" : "stopped on a fallback", tableNs,
                    libunwindNs, libunwindNs / tableNs);
    });
}

} // namespace

int main(int argc, char **argv)
{
    const int walks = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20000;
    std::printf("The table build, per module (rows of %zu bytes):\n", sizeof(agent::UnwindRow));
    benchBuild("libpython", newestMatch("/usr/lib/x86_64-linux-gnu", "libpython3.", ".so.1.0"));
    benchBuild("libstdc++", test::loadedModulePath("libstdc++.so.6"));
    benchBuild("libc", test::loadedModulePath("libc.so.6"));
    benchBuild("cc1plus", findCc1plus());

    std::printf("\nThe walk, %d times per stack (libunwind's default caching, local address space):\n", walks);
    ElfCache elfs;
    UnwindTableCache cache(elfs);
    test::StackProbe probe(cache);
    for (int depth : {1, 8, 32, 128})
        benchWalk(probe, depth, walks);
    return 0;
}
