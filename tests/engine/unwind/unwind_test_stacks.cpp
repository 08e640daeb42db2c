#include "tests/engine/unwind/unwind_test_stacks.h"

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace emberline::test {
namespace {

thread_local const StackProbe::AtPoint *t_atPoint = nullptr;

int compareInts(const void *a, const void *b)
{
    if (t_atPoint) {
        const StackProbe::AtPoint *atPoint = t_atPoint;
        t_atPoint = nullptr; // once per sort
        unw_context_t context;
        unw_getcontext(&context);
        (*atPoint)(context, threadStackBounds());
    }
    const int x = *static_cast<const int *>(a);
    const int y = *static_cast<const int *>(b);
    return (x > y) - (x < y);
}

// A recursion of ours (compiled without frame pointers, as the tests are), then qsort at its bottom.
__attribute__((noinline)) int descend(int depth, const StackProbe::AtPoint &atPoint)
{
    if (depth <= 0) {
        int values[] = {5, 3, 9, 1, 7};
        t_atPoint = &atPoint;
        std::qsort(values, 5, sizeof(int), compareInts);
        t_atPoint = nullptr;
        return values[0];
    }
    const int below = descend(depth - 1, atPoint);
    asm volatile("" ::: "memory"); // keeps the call from becoming a jump
    return below + depth;
}

// The signal sampler's state: written before the timer starts, read by the handler.
StackProbe *g_probe = nullptr;
std::vector<SignalSample> *g_samples = nullptr;
std::atomic<int> g_taken{0};
agent::StackBounds g_bounds;

void onProfSignal(int, siginfo_t *, void *uc)
{
    const int i = g_taken.load(std::memory_order_relaxed);
    if (i >= int(g_samples->size()))
        return;
    SignalSample &sample = (*g_samples)[size_t(i)];
    auto *context = static_cast<ucontext_t *>(uc);
    sample.walk = g_probe->walkFrom(*context, g_bounds, sample.walked.data(), &sample.outOfBoundsReads);
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, context, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip = 0;
            unw_get_reg(&cursor, UNW_REG_IP, &ip);
            sample.libunwind[sample.libunwindFrames++] = ip;
        } while (sample.libunwindFrames < StackProbe::kMaxFrames && unw_step(&cursor) > 0);
    }
    g_taken.store(i + 1, std::memory_order_relaxed);
}

// The sampled loop's work: small sorts (qsort keeps arrays under 1 KiB on its stack: no allocation under the
// handler), under a recursion of ours.
__attribute__((noinline)) int busyDescend(int depth)
{
    if (depth <= 0) {
        int values[200];
        int sum = 0;
        for (int round = 0; round < 50; ++round) {
            for (int i = 0; i < 200; ++i)
                values[i] = (i * 7919 + round * 104729) % 1000;
            std::qsort(values, 200, sizeof(int), compareInts);
            sum += values[round % 200];
        }
        return sum;
    }
    const int below = busyDescend(depth - 1);
    asm volatile("" ::: "memory");
    return below + depth;
}

} // namespace

std::string loadedModulePath(const char *name)
{
    struct Search {
        const char *name;
        std::string found;
    } search{name, {}};
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
            auto *s = static_cast<Search *>(data);
            const size_t length = info->dlpi_name ? std::strlen(info->dlpi_name) : 0;
            const size_t wanted = std::strlen(s->name);
            if (length >= wanted && std::strcmp(info->dlpi_name + length - wanted, s->name) == 0 &&
                (length == wanted || info->dlpi_name[length - wanted - 1] == '/')) {
                s->found = info->dlpi_name;
                return 1;
            }
            return 0;
        },
        &search);
    return search.found;
}

agent::StackBounds threadStackBounds()
{
    agent::StackBounds bounds;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return bounds;
    void *address = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &address, &size) == 0) {
        bounds.low = reinterpret_cast<uint64_t>(address);
        bounds.high = bounds.low + size;
    }
    pthread_attr_destroy(&attr);
    return bounds;
}

StackProbe::StackProbe(engine::UnwindTableCache &cache) : m_cache(cache)
{
    char exe[4096] = {};
    const ssize_t length = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    struct Context {
        std::vector<Module> *modules;
        std::string exe;
    } context{&m_modules, length > 0 ? std::string(exe, size_t(length)) : std::string()};
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
            auto *c = static_cast<Context *>(data);
            std::string path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : c->exe;
            if (path.empty() || path[0] != '/')
                return 0; // the vdso
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr) &ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
                    const uint64_t low = info->dlpi_addr + ph.p_vaddr;
                    c->modules->push_back(Module{low, low + ph.p_memsz, info->dlpi_addr, path, false, nullptr});
                }
            }
            return 0;
        },
        &context);
    std::sort(m_modules.begin(), m_modules.end(), [](const Module &a, const Module &b) { return a.low < b.low; });
}

bool StackProbe::find(uint64_t pc, agent::UnwindTable &table, uint64_t &bias)
{
    // A binary search over the segments, as the agent's own module index will search.
    auto after = std::upper_bound(m_modules.begin(), m_modules.end(), pc,
                                  [](uint64_t address, const Module &m) { return address < m.low; });
    if (after == m_modules.begin() || pc >= std::prev(after)->high)
        return false;
    Module &module = *std::prev(after);
    if (!module.tried && !m_frozen) {
        module.tried = true;
        if (auto built = m_cache.get(module.path))
            module.table = built.value();
    }
    if (!module.table)
        return false;
    table = module.table->view();
    bias = module.bias;
    return true;
}

void StackProbe::underQsort(int depth, const AtPoint &atPoint)
{
    descend(depth, atPoint);
}

agent::UnwindWalk StackProbe::walkFrom(const unw_context_t &context, const agent::StackBounds &stack, uint64_t *pcs,
                                       int *outOfBounds)
{
    const greg_t *gregs = context.uc_mcontext.gregs;
    const agent::UnwindRegs regs{uint64_t(gregs[REG_RIP]), uint64_t(gregs[REG_RSP]), uint64_t(gregs[REG_RBP])};
    auto read = [&](uint64_t address, uint64_t &value) {
        if (!stack.holds(address, 8)) {
            if (outOfBounds)
                ++*outOfBounds;
            return false;
        }
        return agent::OwnStackReader{}(address, value);
    };
    auto find = [this](uint64_t pc, agent::UnwindTable &table, uint64_t &bias) { return this->find(pc, table, bias); };
    return agent::unwindStack(find, stack, regs, pcs, kMaxFrames, read);
}

size_t StackProbe::libunwindFrom(unw_context_t &context, uint64_t *pcs)
{
    unw_cursor_t cursor;
    if (unw_init_local(&cursor, &context) != 0)
        return 0;
    size_t frames = 0;
    do {
        unw_word_t ip = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        pcs[frames++] = ip;
    } while (frames < kMaxFrames && unw_step(&cursor) > 0);
    return frames;
}

StackComparison StackProbe::compareFrom(unw_context_t &context, const agent::StackBounds &stack, std::string name)
{
    StackComparison result;
    result.name = std::move(name);
    uint64_t pcs[kMaxFrames];
    result.walk = walkFrom(context, stack, pcs, &result.outOfBoundsReads);
    result.walked.assign(pcs, pcs + result.walk.frames);
    const size_t frames = libunwindFrom(context, pcs);
    result.libunwind.assign(pcs, pcs + frames);
    return result;
}

StackComparison StackProbe::compareUnderQsort(int depth)
{
    StackComparison result;
    underQsort(depth, [&](const unw_context_t &context, const agent::StackBounds &stack) {
        unw_context_t copy = context;
        result = compareFrom(copy, stack, "qsort at depth " + std::to_string(depth));
    });
    return result;
}

StackComparison StackProbe::compareInThread(int depth)
{
    StackComparison result;
    std::thread thread([&] { result = compareUnderQsort(depth); });
    thread.join();
    result.name = "a new thread's " + result.name;
    return result;
}

StackComparison StackProbe::compareUnderCallOnce(int depth)
{
    StackComparison result;
    std::once_flag once;
    std::call_once(once, [&] { result = compareUnderQsort(depth); });
    result.name = "call_once's " + result.name;
    return result;
}

} // namespace emberline::test

namespace emberline::test {

std::vector<SignalSample> StackProbe::sampleWithSignals(int samples, int depth)
{
    compareUnderQsort(depth); // builds the tables of every module on the loop's stack
    std::vector<SignalSample> taken(size_t(std::max(samples, 0)));
    for (SignalSample &sample : taken) {
        sample.walked.resize(kMaxFrames);
        sample.libunwind.resize(kMaxFrames);
    }
    g_probe = this;
    g_samples = &taken;
    g_bounds = threadStackBounds();
    g_taken.store(0);
    m_frozen = true;

    struct sigaction action {};
    struct sigaction previous {};
    action.sa_sigaction = onProfSignal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGPROF, &action, &previous);
    sigevent event{};
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SIGPROF;
    event._sigev_un._tid = gettid();
    timer_t timer{};
    const bool armed = timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) == 0;
    if (armed) {
        const itimerspec every{{0, 500000}, {0, 500000}};
        timer_settime(timer, 0, &every, nullptr);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        int sink = 0;
        while (g_taken.load() < samples && std::chrono::steady_clock::now() < deadline)
            sink += busyDescend(depth);
        asm volatile("" ::"r"(sink));
        timer_delete(timer);
    }
    sigaction(SIGPROF, &previous, nullptr);
    m_frozen = false;
    taken.resize(size_t(g_taken.load()));
    g_samples = nullptr;
    return taken;
}

} // namespace emberline::test
