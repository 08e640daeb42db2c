#pragma once

// Real stacks of the test process to walk with the compact unwind tables, beside libunwind from the same registers:
// a comparator called by the C library's qsort (code without frame pointers) under a recursion of the caller's,
// captured with unw_getcontext while the frames are live. Shared by tst_unwind_table and bench_unwind_table.

#include "engine/agent/agent_unwind.h"
#include "engine/unwind/unwind_table_builder.h"

#include <libunwind.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace emberline::test {

// The file of a loaded module whose name ends with `name` (dl_iterate_phdr); "" when none is loaded.
std::string loadedModulePath(const char *name);

// One stack, walked twice from the same registers.
struct StackComparison {
    std::string name;
    std::vector<uint64_t> walked;    // the table walk's pcs, the captured frame's first
    std::vector<uint64_t> libunwind; // libunwind's (unw_step until it stops)
    agent::UnwindWalk walk;          // how the table walk ended
    int outOfBoundsReads = 0;        // reads the walk asked for outside the stack bounds (must stay 0)
};

// One stack sampled by a CPU timer's signal, walked twice in the handler from the interrupted registers.
struct SignalSample {
    std::vector<uint64_t> walked;    // kMaxFrames long, walk.frames of them written
    std::vector<uint64_t> libunwind; // kMaxFrames long, libunwindFrames written
    uint32_t libunwindFrames = 0;
    agent::UnwindWalk walk;
    int outOfBoundsReads = 0;
};

// The process's code (every executable segment dl_iterate_phdr reports, the vdso aside) and its tables, built on
// first need through the cache; and ways to stand inside a live stack.
//
// Thread: any one thread at a time (the probes run on the caller's thread, or on a thread they start and join).
class StackProbe {
public:
    static constexpr uint32_t kMaxFrames = 256;
    using AtPoint = std::function<void(const unw_context_t &context, const agent::StackBounds &stack)>;

    explicit StackProbe(engine::UnwindTableCache &cache);

    // agent::unwindStack's lookup: the table and load bias of the module holding pc.
    bool find(uint64_t pc, agent::UnwindTable &table, uint64_t &bias);

    // Calls atPoint from inside a qsort comparator, under `depth` frames of a recursion of ours.
    void underQsort(int depth, const AtPoint &atPoint);
    StackComparison compareUnderQsort(int depth);
    StackComparison compareInThread(int depth);      // the same, in a new thread: its stack ends at clone3
    StackComparison compareUnderCallOnce(int depth); // under std::call_once (libstdc++, then pthread_once)

    // Samples a busy loop (qsort of small arrays under a recursion of ours) with a per-thread CPU timer's SIGPROF
    // every 0.5 ms of CPU, up to `samples` of them, and walks each in the handler: with the tables from the
    // interrupted registers (the interrupted frame looked up at its own pc), and with libunwind (unw_init_local2,
    // UNW_INIT_SIGNAL_FRAME). The tables the loop's stack needs are built before; in the handler the lookup builds
    // nothing (a module not yet tabled is not found).
    std::vector<SignalSample> sampleWithSignals(int samples, int depth);

    // The two walks from a captured context.
    agent::UnwindWalk walkFrom(const unw_context_t &context, const agent::StackBounds &stack, uint64_t *pcs,
                               int *outOfBounds = nullptr);
    static size_t libunwindFrom(unw_context_t &context, uint64_t *pcs);
    StackComparison compareFrom(unw_context_t &context, const agent::StackBounds &stack, std::string name);

private:
    struct Module {
        uint64_t low = 0;
        uint64_t high = 0;
        uint64_t bias = 0;
        std::string path;
        bool tried = false;
        std::shared_ptr<const engine::ModuleUnwindTable> table;
    };
    engine::UnwindTableCache &m_cache;
    bool m_frozen = false; // find() builds no table (in a signal handler)
    std::vector<Module> m_modules;
};

// The calling thread's stack, from pthread_getattr_np.
agent::StackBounds threadStackBounds();

} // namespace emberline::test
