// libFuzzer target for the pprof reader: any byte string must give a Profile or an Error naming the input, never
// a crash, a hang or unbounded memory. Profiles that are accepted are also pushed through what the GUI does with
// them (frame table, call tree, function table per sample type) and through a write/read round trip, which
// must succeed with the same totals: the reader must not accept what the rest of the engine cannot handle.
#include "engine/analysis/call_tree.h"
#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/pprof_writer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace emberline::engine;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "fuzz_pprof_reader: %s: %s\n", what, detail.c_str());
    std::abort();
}

void exercise(const Profile &p)
{
    const FrameTable frames(p);
    const ThreadIndex threads(p);
    (void)sampleTimestamps(p);
    for (int type = 0; type < static_cast<int>(p.sampleTypes().size()); ++type) {
        const std::vector<int64_t> perStack = valuesPerStack(p, type, {});
        const auto tree = CallTree::build(p, frames, perStack);
        const auto table = FunctionTable::build(p, frames, perStack);
        if (!tree || !table)
            fail("derived view", "build returned nothing without a cancel flag");
        (void)tree->dump(frames);
        if (!table->rows().empty())
            (void)computeCallerCallee(p, frames, perStack, table->rows().front().frame);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    PprofReadOptions options;
    options.maxDecompressedBytes = 16u << 20; // small limits: the fuzzer explores, it does not load real profiles
    options.maxStringBytes = 64u << 10;
    const std::string_view bytes(reinterpret_cast<const char *>(data), size);
    auto result = readPprofBytes(bytes, "fuzz-input", options);
    if (!result.ok()) {
        if (result.error().message.rfind("fuzz-input: ", 0) != 0)
            fail("error message does not name the input", result.error().message);
        return 0;
    }
    const Profile &p = result.value();
    exercise(p);
    const std::string written = writePprof(p, size % 2 == 0);
    auto again = readPprofBytes(written, "round-trip", PprofReadOptions{});
    if (!again.ok())
        fail("a profile the reader accepted does not read back after writing", again.error().message);
    if (again->totals() != p.totals() || again->sampleCount() != p.sampleCount())
        fail("round trip", "totals or sample count changed");
    return 0;
}
