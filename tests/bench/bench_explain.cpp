// What the window does to explain a cost, timed beside what opening the file takes, in one process:
//   open        loadProfile + analyze (read, frame table, names, values per stack, call tree, function table):
//               what the GUI does before it draws the flame graph
//   list        LineTable::build for the function with the largest total: the Source tab and `report --list`
//   focus/ignore/hide
//               deriveProfile with one transform of that name, plus analyze of the result given the open's
//               analysis (whose call tree the transform maps): what the GUI does before it redraws the flame graph
//               after a transform (patterns: the function ranked `--rank` by total, 10th by default, so that each
//               transform keeps and drops a real share)
//   disasm      disassembleFunctions for the functions matching `--disasm REGEX` (a recording's, with addresses
//               and build ids): prints each function's size in bytes and instructions
// Each figure is the median of `--repeat` runs (default 3).
//   bench_explain FILE [--disasm REGEX] [--rank N] [--repeat N] [--only focus|ignore|hide]
#include "engine/analysis/derived_profile.h"
#include "engine/analysis/line_table.h"
#include "engine/annotate/disassembly.h"
#include "engine/common/huge_page_malloc.h"
#include "engine/import/load_profile.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <regex>
#include <string>
#include <vector>

using namespace emberline::engine;
using Clock = std::chrono::steady_clock;

namespace {

double medianMs(int repeat, const std::function<bool()> &run)
{
    std::vector<double> times;
    for (int i = 0; i < repeat; ++i) {
        const auto start = Clock::now();
        if (!run())
            return -1;
        times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

std::string regexQuote(const std::string &text)
{
    std::string out;
    for (const char c : text) {
        if (std::strchr(".^$|()[]{}*+?\\", c))
            out += '\\';
        out += c;
    }
    return out;
}

long peakRssKb()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

} // namespace

int runBench(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: bench_explain FILE [--disasm REGEX] [--rank N] [--repeat N] [--only focus|ignore|hide]\n");
        return 2;
    }
    const QString path = QString::fromLocal8Bit(argv[1]);
    std::string disasm;
    size_t rank = 10;
    int repeat = 3;
    std::string only; // one transform alone (to profile it)
    for (int i = 2; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--disasm") == 0)
            disasm = argv[i + 1];
        else if (std::strcmp(argv[i], "--rank") == 0)
            rank = std::max(1, std::atoi(argv[i + 1]));
        else if (std::strcmp(argv[i], "--repeat") == 0)
            repeat = std::max(1, std::atoi(argv[i + 1]));
        else if (std::strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
    }

    std::shared_ptr<const LoadedProfile> loaded;
    std::shared_ptr<const Analysis> analysis;
    const auto analyzeLoaded = [](const std::shared_ptr<const LoadedProfile> &profile,
                                  std::shared_ptr<const Analysis> untransformed = nullptr) {
        AnalysisRequest request;
        request.loaded = profile;
        request.untransformed = std::move(untransformed);
        request.sampleType = profile->profile->defaultSampleTypeIndex();
        return analyze(request, nullptr);
    };
    QString loadError;
    const double openMs = medianMs(repeat, [&] {
        LoadOutcome outcome = loadProfile(path, {});
        if (!outcome.loaded) {
            loadError = outcome.error;
            return false;
        }
        loaded = outcome.loaded;
        analysis = analyzeLoaded(loaded);
        return analysis != nullptr;
    });
    if (openMs < 0) {
        std::fprintf(stderr, "bench_explain: %s\n", qPrintable(loadError));
        return 1;
    }
    const Profile &profile = *loaded->profile;
    std::printf("%s: %zu samples, %zu stacks, %zu frames\n", argv[1], profile.sampleCount(), profile.stacks().size(),
                loaded->frames->size());
    std::printf("%-44s %10.1f ms  (peak RSS %ld MiB)\n", "open (load + analyze)", openMs, peakRssKb() / 1024);

    // Functions by total, largest first.
    std::vector<FunctionTable::Row> byTotal = analysis->functions->rows();
    std::sort(byTotal.begin(), byTotal.end(), [](const auto &a, const auto &b) { return a.total > b.total; });
    if (byTotal.empty())
        return 1;
    const std::string hottest = loaded->frames->frame(byTotal.front().frame).name;
    const std::string ranked = loaded->frames->frame(byTotal[std::min(rank, byTotal.size()) - 1].frame).name;

    size_t listedLines = 0;
    const double listMs = medianMs(repeat, [&] {
        const auto lines =
            LineTable::build(profile, *analysis->perStack, [&](const std::string &name) { return name == hottest; });
        listedLines = lines && !lines->empty() ? lines->front().lines.size() : 0;
        return lines.has_value();
    });
    std::printf("%-44s %10.1f ms  (%s: %zu lines with a cost)  %.3f of open\n", "list the hottest function", listMs,
                hottest.c_str(), listedLines, listMs / openMs);

    const std::pair<const char *, Transform::Kind> kinds[] = {
        {"focus", Transform::Kind::Focus}, {"ignore", Transform::Kind::Ignore}, {"hide", Transform::Kind::Hide}};
    for (const auto &[label, kind] : kinds) {
        if (!only.empty() && only != label)
            continue;
        ProfileShape shape;
        shape.transforms.push_back({kind, "^" + regexQuote(ranked) + "$"});
        size_t kept = 0;
        QString why;
        std::vector<double> deriveTimes;
        const double ms = medianMs(repeat, [&] {
            const auto start = Clock::now();
            auto derived = deriveProfile(loaded, shape);
            deriveTimes.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
            if (!derived) {
                why = QString::fromStdString(derived.error().message);
                return false;
            }
            // As the window asks: with the analysis already shown, whose tree the transform maps.
            const auto result = analyzeLoaded(derived.value(), analysis);
            kept = result ? result->keptSamples : 0;
            return result != nullptr;
        });
        if (ms < 0) {
            std::fprintf(stderr, "bench_explain: %s: %s\n", label, qPrintable(why));
            return 1;
        }
        std::sort(deriveTimes.begin(), deriveTimes.end());
        std::printf("%-44s %10.1f ms  (%zu samples kept; derive %.0f ms)  %.3f of open\n",
                    (std::string(label) + " '" + ranked.substr(0, 30) + "' + analyze").c_str(), ms, kept,
                    deriveTimes[deriveTimes.size() / 2], ms / openMs);
    }

    if (!disasm.empty()) {
        DisassemblyRequest request;
        const std::regex pattern(disasm);
        request.matches = [&](const std::string &name) { return std::regex_search(name, pattern); };
        request.sampleType = analysis->sampleType;
        request.useDebuginfod = false;
        std::vector<FunctionDisassembly> functions;
        std::string why;
        const double ms = medianMs(repeat, [&] {
            auto result = disassembleFunctions(profile, *analysis->perStack, request);
            if (!result) {
                why = result.error().message;
                return false;
            }
            functions = std::move(result.value());
            return true;
        });
        if (ms < 0) {
            std::fprintf(stderr, "bench_explain: --disasm: %s\n", why.c_str());
            return 1;
        }
        size_t bytes = 0;
        size_t instructions = 0;
        for (const FunctionDisassembly &f : functions) {
            bytes += f.end - f.start;
            instructions += f.instructions.size();
            std::printf("  %s: %llu bytes, %zu instructions%s%s\n", f.name.c_str(),
                        static_cast<unsigned long long>(f.end - f.start), f.instructions.size(),
                        f.error.empty() ? "" : ", ", f.error.c_str());
        }
        std::printf("%-44s %10.1f ms  (%zu functions, %zu bytes, %zu instructions)\n", "disassemble and annotate", ms,
                    functions.size(), bytes, instructions);
    }
    return 0;
}

int main(int argc, char **argv)
{
    emberline::engine::useHugePageMalloc(argv); // as the emberline program runs
    try {
        return runBench(argc, argv);
    } catch (const std::exception &e) { // a --disasm pattern that does not compile, or memory running out
        std::fprintf(stderr, "bench_explain: %s\n", e.what());
        return 1;
    }
}
