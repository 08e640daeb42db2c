// Opens a pprof file the way the GUI does and times each phase: read (decompress, decode, intern), frame table,
// values per stack, call tree (the flame graph's data) and function table (the top table). Prints the phase
// times and the peak resident memory of the process.
//   bench_open FILE [--sample-type NAME] [--repeat N]
#include "engine/analysis/call_tree.h"
#include "engine/analysis/function_table.h"
#include "engine/common/huge_page_malloc.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

using namespace emberline::engine;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

long peakRssKb()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss; // kilobytes on Linux
}

} // namespace

int runBench(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_open FILE [--sample-type NAME] [--repeat N]\n");
        return 2;
    }
    const std::string path = argv[1];
    std::string sampleType;
    int repeat = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--sample-type") == 0)
            sampleType = argv[i + 1];
        else if (std::strcmp(argv[i], "--repeat") == 0)
            repeat = std::max(1, std::atoi(argv[i + 1]));
    }
    for (int r = 0; r < repeat; ++r) {
        const auto start = Clock::now();
        auto t = Clock::now();
        auto profile = readPprofFile(path);
        if (!profile) {
            std::fprintf(stderr, "bench_open: %s\n", profile.error().message.c_str());
            return 1;
        }
        const Profile &p = profile.value();
        const double readMs = msSince(t);
        const int type = sampleType.empty() ? p.defaultSampleTypeIndex() : p.sampleTypeIndex(sampleType);
        if (type < 0) {
            std::fprintf(stderr, "bench_open: no sample type '%s'\n", sampleType.c_str());
            return 1;
        }
        t = Clock::now();
        const FrameTable frames(p);
        const double framesMs = msSince(t);
        t = Clock::now();
        const std::vector<int64_t> perStack = valuesPerStack(p, type, {});
        const double perStackMs = msSince(t);
        t = Clock::now();
        const auto tree = CallTree::build(p, frames, perStack);
        const double treeMs = msSince(t);
        t = Clock::now();
        const auto table = FunctionTable::build(p, frames, perStack);
        const double tableMs = msSince(t);
        const double totalMs = msSince(start);
        std::printf("samples %zu  unique stacks %zu  locations %zu  frames %zu  tree nodes %zu  depth %u\n",
                    p.sampleCount(), p.stacks().size(), p.locations().size(), frames.size(), tree->size(),
                    tree->maxDepth());
        std::printf("read %.0f ms | frame table %.1f ms | values per stack %.1f ms | call tree %.0f ms | "
                    "function table %.0f ms | total %.0f ms | peak RSS %ld KB\n",
                    readMs, framesMs, perStackMs, treeMs, tableMs, totalMs, peakRssKb());
        if (table->rows().empty())
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    emberline::engine::useHugePageMalloc(argv); // as the emberline program runs
    try {
        return runBench(argc, argv);
    } catch (const std::exception &e) { // memory running out
        std::fprintf(stderr, "bench_open: %s\n", e.what());
        return 1;
    }
}
