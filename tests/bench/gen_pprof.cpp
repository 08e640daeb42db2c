// Generates a large, valid pprof file shaped like a Go CPU profile, for the open/flame-graph benchmarks:
//   emberline_gen_pprof --output FILE [--samples N] [--depth D] [--functions F] [--label-fraction P]
//                       [--hot-path P] [--seed S]
// Stacks come from random walks over a random call graph whose fan-out is skewed (a few callees take most
// calls, and the upper part of a stack follows a hot path with probability --hot-path), so stacks share long
// prefixes as real ones do; stack depth is spread around --depth. Each function has
// a source file and line; some locations carry an inlined frame; a fraction of samples carry `thread id` and
// `thread name` labels. Sample types are samples/count and cpu/nanoseconds (period 10 ms), like Go's.
#include "engine/model/profile.h"
#include "engine/pprof/pprof_writer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace emberline::engine;

namespace {

struct Options {
    std::string output;
    size_t samples = 1000000;
    int depth = 32;
    uint32_t functions = 5000;
    double labelFraction = 0.3;
    double hotPath = 0.97; // probability of following the hot callee in the upper part of a stack
    uint64_t seed = 1;
};

bool parse(int argc, char **argv, Options &o)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto need = [&]() {
            if (!v) {
                std::fprintf(stderr, "emberline_gen_pprof: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            ++i;
            return std::string(v);
        };
        if (a == "--output" || a == "-o")
            o.output = need();
        else if (a == "--samples")
            o.samples = std::stoull(need());
        else if (a == "--depth")
            o.depth = std::stoi(need());
        else if (a == "--functions")
            o.functions = static_cast<uint32_t>(std::stoul(need()));
        else if (a == "--label-fraction")
            o.labelFraction = std::stod(need());
        else if (a == "--hot-path")
            o.hotPath = std::stod(need());
        else if (a == "--seed")
            o.seed = std::stoull(need());
        else {
            std::fprintf(stderr, "emberline_gen_pprof: unknown argument %s\n", a.c_str());
            return false;
        }
    }
    if (o.output.empty() || o.depth < 1 || o.functions < 16) {
        std::fprintf(stderr, "usage: emberline_gen_pprof --output FILE [--samples N] [--depth D] "
                             "[--functions F>=16] [--label-fraction P] [--hot-path P] [--seed S]\n");
        return false;
    }
    return true;
}

// A call graph over location indices: each location has a few callees, the first ones much more likely.
struct CallGraph {
    std::vector<std::vector<uint32_t>> callees;
};

} // namespace

int main(int argc, char **argv)
{
    Options o;
    if (!parse(argc, argv, o))
        return 2;
    const auto started = std::chrono::steady_clock::now();
    std::mt19937_64 rng(o.seed);
    auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    auto below = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };

    Profile p;
    p.sampleTypes().push_back({p.intern("samples"), p.intern("count")});
    p.sampleTypes().push_back({p.intern("cpu"), p.intern("nanoseconds")});
    p.periodType = {p.intern("cpu"), p.intern("nanoseconds")};
    p.period = 10000000;
    p.timeNanos = 1795330132507000480;
    p.durationNanos = 60ll * 1000000000;

    const char *exeNames[] = {"/usr/local/bin/benchapp", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                              "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"};
    for (uint32_t m = 0; m < 3; ++m) {
        Mapping map;
        map.id = m + 1;
        map.start = 0x400000ull + m * 0x10000000ull;
        map.limit = map.start + 0x8000000ull;
        map.filename = p.intern(exeNames[m]);
        map.buildId = p.intern("b" + std::to_string(m) + "5e1f00dbeefcafe0123456789abcdef01234");
        map.hasFunctions = map.hasFilenames = map.hasLineNumbers = map.hasInlineFrames = true;
        p.mappings().push_back(map);
    }

    // Functions: package.Type.method names in package files, like Go's.
    const uint32_t packages = std::max<uint32_t>(8, o.functions / 40);
    for (uint32_t f = 0; f < o.functions; ++f) {
        const uint32_t pkg = f % packages;
        const std::string pkgName = "example.com/svc/pkg" + std::to_string(pkg);
        const std::string name = pkgName + ".(*Type" + std::to_string(f % 97) + ").Method" + std::to_string(f);
        const std::string file = "/src/svc/pkg" + std::to_string(pkg) + "/file" + std::to_string(f % 13) + ".go";
        p.functions().push_back(
            Function{f + 1, p.intern(name), p.intern(name), p.intern(file), static_cast<int64_t>(10 + below(2000))});
    }
    // Locations: two call sites per function on average; one in eight also carries an inlined callee.
    const uint32_t locations = o.functions * 2;
    for (uint32_t l = 0; l < locations; ++l) {
        Location loc;
        loc.id = l + 1;
        loc.mappingIndex = static_cast<uint32_t>(l % 10 == 0 ? 1 + below(2) : 0);
        loc.address = p.mappings()[loc.mappingIndex].start + 0x1000 + l * 0x40ull;
        const uint32_t fn = l % o.functions;
        if (l % 8 == 3) {
            const auto inlined = static_cast<uint32_t>(below(o.functions));
            loc.lines.push_back(Line{inlined, static_cast<int64_t>(20 + below(500)), 0});
        }
        loc.lines.push_back(Line{fn, static_cast<int64_t>(p.functions()[fn].startLine + 1 + below(200)), 0});
        p.locations().push_back(std::move(loc));
    }
    // Call graph with skewed fan-out: 1 to 12 callees, chosen later by a cubed uniform (the first dominate).
    CallGraph graph;
    graph.callees.resize(locations);
    for (auto &c : graph.callees) {
        const auto n = 1 + static_cast<uint32_t>(std::pow(uniform(0, 1), 2) * 12);
        for (uint32_t k = 0; k < n; ++k)
            c.push_back(static_cast<uint32_t>(below(locations)));
    }
    const uint32_t roots = 8;

    p.reserveSamples(o.samples);
    std::vector<uint32_t> stack;
    std::vector<Label> labels;
    const StringId tidKey = p.intern("thread id");
    const StringId nameKey = p.intern("thread name");
    std::vector<StringId> threadNames;
    for (int t = 0; t < 16; ++t)
        threadNames.push_back(p.intern(t == 0 ? "main" : "worker-" + std::to_string(t)));
    std::normal_distribution<double> depthDist(o.depth, o.depth / 4.0);
    for (size_t s = 0; s < o.samples; ++s) {
        const int depth = std::clamp(static_cast<int>(std::lround(depthDist(rng))), 1, 4 * o.depth);
        stack.clear();
        auto loc = static_cast<uint32_t>(std::pow(uniform(0, 1), 3) * roots);
        stack.push_back(loc);
        for (int d = 1; d < depth; ++d) {
            // Programs are a few hot paths near the root (main loop, dispatch) that fan out near the leaves
            // (handlers, libraries): the first callee is taken almost always in the upper three quarters of the
            // stack, and the skewed choice below.
            const auto &c = graph.callees[loc];
            const bool hot = d < depth * 3 / 4 && uniform(0, 1) < o.hotPath;
            loc = hot ? c[0] : c[static_cast<size_t>(std::pow(uniform(0, 1), 2) * c.size())];
            stack.push_back(loc);
        }
        std::reverse(stack.begin(), stack.end()); // leaf first
        const int64_t count = 1 + (below(10) == 0);
        const int64_t values[2] = {count, count * p.period};
        labels.clear();
        if (uniform(0, 1) < o.labelFraction) {
            const auto t = static_cast<uint32_t>(std::pow(uniform(0, 1), 2) * threadNames.size());
            labels.push_back(Label{tidKey, 0, 1000 + t, 0});
            labels.push_back(Label{nameKey, threadNames[t], 0, 0});
        }
        p.addSample(stack, values, labels);
    }
    const Status st = writePprofFile(p, o.output);
    if (!st.ok()) {
        std::fprintf(stderr, "emberline_gen_pprof: %s\n", st.error().message.c_str());
        return 1;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "wrote %s: %zu samples, %zu unique stacks, %u functions, %u locations in %.1f s\n",
                 o.output.c_str(), p.sampleCount(), p.stacks().size(), o.functions, locations, secs);
    return 0;
}
