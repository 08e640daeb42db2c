// Where a long live session's memory goes, component by component, without a sampler or a window: flushes shaped
// like many_stacks' (8 threads, 100,000 call paths of five steps, a busy leaf sampled at 64 addresses, every
// sample with its thread and timestamp labels, as the recorder writes them) are fed to
//   - the exporter's session profile (profile.pprof written a flush at a time: addresses kept, timestamps
//     dropped, only the tables kept in memory),
//   - the live profile (the views' aggregate and the timeline), with the session ids a recorder gives and without,
//   - a call-tree updater over the live profile's cpu-time per stack (one of the views' trees),
// one component per pass, measuring the heap in use (mallinfo2: arena plus mmapped blocks) and the time per flush.
//
//   bench_live_memory [FLUSHES] [SAMPLES_PER_FLUSH] [PATHS]   (defaults 900, 3700 and 100000: 30 minutes of 2 s
//                       flushes at the ~1,850 samples/s that bench_live_gui records, over many_stacks' 100,000 call
//                       paths; fewer paths make a program whose stacks repeat from flush to flush, as most do)

#include "engine/analysis/call_tree.h"
#include "engine/common/huge_page_malloc.h"
#include "engine/flush/flush.h"
#include "engine/live/live_profile.h"
#include "engine/model/frame_table.h"
#include "engine/model/merge.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_writer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <malloc.h>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace emberline::engine;

namespace {

size_t heapInUse()
{
    const struct mallinfo2 m = ::mallinfo2();
    return m.uordblks + m.hblkhd;
}

uint64_t nextRandom(uint64_t &state)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

uint32_t g_paths = 100000; // distinct call paths of five steps: many_stacks' 100,000, or fewer (third argument)

// The session ids of the stacks, dense in the order the flushes first use them, as a recorder numbers them: a
// stack is told by its leaf address (64) and its five steps (100,000). Allocated before the first pass, so that
// no pass counts it.
std::vector<uint32_t> &sessionStackIds()
{
    static std::vector<uint32_t> ids(size_t(64) * 100000, UINT32_MAX);
    return ids;
}

uint32_t sessionStackId(uint32_t leaf, uint32_t code)
{
    static uint32_t next = 0;
    uint32_t &id = sessionStackIds()[leaf * 100000 + code];
    if (id == UINT32_MAX)
        id = next++;
    return id;
}

// Flush number `sequence` (1-based), the same every pass. It carries the session ids a recorder would give:
// the locations are built in the same order in every flush, so a location's index is its session id.
std::shared_ptr<const Flush> makeFlush(uint32_t sequence, size_t samples)
{
    Profile p;
    p.sampleTypes().push_back({p.intern("samples"), p.intern("count")});
    p.sampleTypes().push_back({p.intern("cpu-time"), p.intern("nanoseconds")});
    p.periodType = {p.intern("cpu"), p.intern("nanoseconds")};
    p.period = 1'001'001;
    Mapping exe;
    exe.id = 1;
    exe.start = 0x400000;
    exe.limit = 0x500000;
    exe.filename = p.intern("/usr/bin/many_stacks");
    exe.hasFunctions = true;
    p.mappings().push_back(exe);
    const auto function = [&p](const std::string &name) {
        p.functions().push_back(
            Function{p.functions().size() + 1, p.intern(name), p.intern(name), p.intern("many_stacks.c"), 1});
        return static_cast<uint32_t>(p.functions().size() - 1);
    };
    const auto location = [&p](uint32_t fn, uint64_t address) {
        Location loc;
        loc.id = p.locations().size() + 1;
        loc.mappingIndex = 0;
        loc.address = address;
        loc.lines.push_back(Line{fn, static_cast<int64_t>(address & 0xff), 0});
        p.locations().push_back(std::move(loc));
        return static_cast<uint32_t>(p.locations().size() - 1);
    };
    const uint32_t clone = location(function("clone3"), 0x401000), start = location(function("start_thread"), 0x402000),
                   worker = location(function("worker"), 0x403000);
    const uint32_t dispatchFn = function("dispatch");
    const uint32_t dispatchToStep = location(dispatchFn, 0x404010), dispatchToBurn = location(dispatchFn, 0x404020);
    std::vector<uint32_t> steps;
    steps.reserve(10);
    for (int i = 0; i < 10; ++i)
        steps.push_back(location(function("step" + std::to_string(i)), 0x405000 + 0x100 * i));
    const uint32_t burnFn = function("burn");
    std::vector<uint32_t> burn;
    burn.reserve(64);
    for (int i = 0; i < 64; ++i)
        burn.push_back(location(burnFn, 0x406000 + 4 * i));
    const StringId tidKey = p.intern("thread id"), nameKey = p.intern("thread name"),
                   timeKey = p.intern("end_timestamp_ns");
    std::vector<StringId> names;
    names.reserve(8);
    for (int t = 0; t < 8; ++t)
        names.push_back(p.intern("stacks-" + std::to_string(t)));

    const int64_t flushStart = 1'700'000'000'000'000'000 + int64_t(sequence - 1) * 2'000'000'000;
    uint64_t rng = 0x9e3779b97f4a7c15ull * sequence;
    std::vector<uint32_t> stack;
    auto ids = std::make_shared<SessionIds>();
    for (size_t i = 0; i < samples; ++i) {
        const uint32_t thread = static_cast<uint32_t>(nextRandom(rng) % 8);
        uint32_t code = static_cast<uint32_t>(nextRandom(rng) % g_paths);
        const uint32_t leaf = static_cast<uint32_t>(nextRandom(rng) % burn.size());
        ids->sampleStacks.push_back(sessionStackId(leaf, code));
        stack.clear();
        stack.push_back(burn[leaf]);
        stack.push_back(dispatchToBurn);
        std::vector<uint32_t> digits;
        for (int level = 0; level < 5; ++level, code /= 10)
            digits.push_back(code % 10);
        for (int level = 4; level >= 0; --level) {
            stack.push_back(steps[digits[static_cast<size_t>(4 - level)]]);
            stack.push_back(dispatchToStep);
        }
        stack.insert(stack.end(), {worker, start, clone});
        const int64_t values[] = {1, 1'001'001};
        const Label labels[] = {Label{tidKey, 0, 1000 + thread, 0}, Label{nameKey, names[thread], 0, 0},
                                Label{timeKey, 0, flushStart + int64_t(i) * 2'000'000'000 / int64_t(samples), 0}};
        p.addSample(stack, values, labels);
    }
    for (uint32_t l = 0; l < p.locations().size(); ++l)
        ids->locations.push_back(l);
    p.timeNanos = flushStart;
    p.durationNanos = 2'000'000'000;
    auto flush = std::make_shared<Flush>();
    flush->sequence = sequence;
    flush->startNs = flushStart;
    flush->endNs = flushStart + 2'000'000'000;
    flush->samples = samples;
    flush->profile = std::make_shared<const Profile>(std::move(p));
    flush->sessionIds = std::move(ids);
    return flush;
}

void run(const char *name, uint32_t flushes, size_t samples,
         const std::function<std::function<size_t(const std::shared_ptr<const Flush> &)>()> &make)
{
    ::malloc_trim(0);
    const size_t before = heapInUse();
    {
        auto add = make();
        double lastMs = 0;
        double totalMs = 0;
        for (uint32_t f = 1; f <= flushes; ++f) {
            auto flush = makeFlush(f, samples);
            const auto t0 = std::chrono::steady_clock::now();
            const size_t aggregated = add(flush);
            lastMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            totalMs += lastMs;
            flush.reset();
            if (f == 30 || f == 150 || f == 450 || f == flushes || f % 300 == 0) {
                const double mib = static_cast<double>(heapInUse() - before) / (1 << 20);
                std::printf("%-22s flush %4u: %9zu aggregated samples, %8.1f MiB, %6.0f bytes each, %7.1f ms for "
                            "this flush\n",
                            name, f, aggregated, mib,
                            mib * (1 << 20) / static_cast<double>(std::max<size_t>(aggregated, 1)), lastMs);
            }
        }
        std::printf("%-22s %.1f ms per flush on average\n", name, totalMs / flushes);
    }
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    emberline::engine::useHugePageMalloc(argv); // as the emberline program runs
    const uint32_t flushes = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 900;
    const size_t samples = argc > 2 ? static_cast<size_t>(std::atoll(argv[2])) : 3700;
    if (argc > 3)
        g_paths = static_cast<uint32_t>(std::clamp(std::atoll(argv[3]), 1LL, 100000LL));
    std::printf("bench_live_memory: %u flushes of %zu samples (many_stacks' shape)\n", flushes, samples);
    sessionStackIds();

    char directory[] = "/tmp/bench_live_memory.XXXXXX";
    if (!::mkdtemp(directory))
        return 1;
    const std::string sessionPath = std::string(directory) + "/profile.pprof";
    run("session profile", flushes, samples, [&sessionPath] {
        auto writer = std::make_shared<PprofStreamWriter>(sessionPath, std::vector<std::string>{"end_timestamp_ns"});
        return [writer](const std::shared_ptr<const Flush> &f) {
            if (!writer->add(*f->profile).ok())
                std::abort();
            return writer->samplesWritten();
        };
    });
    std::remove((sessionPath + ".tmp").c_str());
    ::rmdir(directory);
    run("live profile", flushes, samples, [] {
        auto live = std::make_shared<LiveProfile>();
        auto held = std::make_shared<std::shared_ptr<const LiveSnapshot>>();
        return [live, held](const std::shared_ptr<const Flush> &f) {
            if (!live->add(f).ok())
                std::abort();
            *held =
                live->snapshot(LiveProfile::kDefaultType); // the views hold the latest snapshot, as the stage takes it
            return (*held)->profile->sampleCount();
        };
    });
    run("live profile, no ids", flushes, samples, [] {
        auto live = std::make_shared<LiveProfile>();
        auto held = std::make_shared<std::shared_ptr<const LiveSnapshot>>();
        return [live, held](const std::shared_ptr<const Flush> &f) {
            auto copy = std::make_shared<Flush>(*f); // the flush as a recorder without session ids hands it over
            copy->sessionIds.reset();
            if (!live->add(std::shared_ptr<const Flush>(std::move(copy))).ok())
                std::abort();
            *held = live->snapshot(LiveProfile::kDefaultType);
            return (*held)->profile->sampleCount();
        };
    });
    run("live profile + tree", flushes, samples, [] {
        auto live = std::make_shared<LiveProfile>();
        auto tree = std::make_shared<CallTreeUpdater>();
        auto held = std::make_shared<std::shared_ptr<const LiveSnapshot>>();
        auto frames = std::make_shared<std::shared_ptr<const FrameTable>>();
        auto shown = std::make_shared<std::shared_ptr<const CallTree>>(); // the tree the views hold until the next
        return [live, tree, held, frames, shown](const std::shared_ptr<const Flush> &f) {
            if (!live->add(f).ok())
                std::abort();
            *held = live->snapshot(LiveProfile::kDefaultType);
            const Profile &p = *(*held)->profile;
            if (!*frames) // every flush carries every location, so the first one's frames are all there are
                *frames = std::make_shared<const FrameTable>(p);
            const auto perStack = valuesPerStack(p, p.sampleTypeIndex("cpu-time"), {});
            *shown = tree->update(p, **frames, perStack);
            return p.sampleCount();
        };
    });
    return 0;
}
