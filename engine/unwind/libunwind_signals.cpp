#include "engine/unwind/libunwind_signals.h"

#include <link.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

// Sanitizer runtimes define sigprocmask themselves (their interceptor): there, libunwind keeps its system calls.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if !defined(__has_feature)
#define EMBERLINE_INTERPOSE_SIGPROCMASK 1
#elif !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer) && !__has_feature(memory_sanitizer)
#define EMBERLINE_INTERPOSE_SIGPROCMASK 1
#endif
#endif

namespace emberline::engine {
namespace {

// The executable segments of the libunwind libraries loaded in the process (libunwind-x86_64 for remote unwinding,
// libunwind for local): at most a few ranges, written once before they are published.
constexpr int kMaxRanges = 8;
struct LibunwindCode {
    uintptr_t start = 0;
    uintptr_t end = 0;
};
LibunwindCode g_ranges[kMaxRanges];
std::atomic<int> g_rangeCount{0};
std::atomic<unsigned long long> g_skipped{0};

bool fromLibunwind(uintptr_t caller)
{
    const int n = g_rangeCount.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
        if (caller >= g_ranges[i].start && caller < g_ranges[i].end)
            return true;
    }
    return false;
}

int collectLibunwindCode(dl_phdr_info *info, size_t, void *data)
{
    int &count = *static_cast<int *>(data);
    const char *name = info->dlpi_name;
    const char *slash = name ? std::strrchr(name, '/') : nullptr;
    const char *base = slash ? slash + 1 : name;
    if (!base || std::strncmp(base, "libunwind", 9) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && count < kMaxRanges; ++i) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
            g_ranges[count].start = info->dlpi_addr + ph.p_vaddr;
            g_ranges[count].end = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
            ++count;
        }
    }
    return 0;
}

} // namespace

void skipLibunwindSignalMasks()
{
#ifdef EMBERLINE_INTERPOSE_SIGPROCMASK
    static std::once_flag once;
    std::call_once(once, [] {
        int count = 0;
        dl_iterate_phdr(collectLibunwindCode, &count);
        g_rangeCount.store(count, std::memory_order_release);
    });
#endif
}

unsigned long long libunwindSignalMasksSkipped()
{
    return g_skipped.load(std::memory_order_relaxed);
}

bool libunwindSignalMasksCanBeSkipped()
{
#ifdef EMBERLINE_INTERPOSE_SIGPROCMASK
    return true;
#else
    return false;
#endif
}

} // namespace emberline::engine

#ifdef EMBERLINE_INTERPOSE_SIGPROCMASK
// The process's sigprocmask: glibc's own (pthread_sigmask, with sigprocmask's errno convention) for every caller
// but libunwind, whose calls only bracket its internal locks (see libunwind_signals.h). libunwind saves the mask it
// is given back and restores it with a second call that is skipped too, so the mask it saves is never applied.
// NOLINTNEXTLINE(readability-inconsistent-declaration-parameter-name): glibc's declaration names them differently
extern "C" int sigprocmask(int how, const sigset_t *set, sigset_t *oldset) noexcept
{
    const auto caller = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
    if (emberline::engine::fromLibunwind(caller)) {
        if (oldset)
            sigemptyset(oldset);
        // Counted for tests only: a plain load and store, not a locked increment (a lost count does not matter).
        auto &skipped = emberline::engine::g_skipped;
        skipped.store(skipped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return 0;
    }
    const int error = pthread_sigmask(how, set, oldset);
    if (error == 0)
        return 0;
    errno = error;
    return -1;
}
#endif
