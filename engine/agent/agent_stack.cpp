// The stack copies of the agent's records: a thread's stack bounds, learned once, and a copy of its live part that
// never reads past the stack's end.
//
// Thread: every thread of the program, each on its own stack; the handler's copy is async-signal-safe.

#include "engine/agent/agent_stack.h"
#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_writer.h"

#include <emmintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

namespace emberline::agent {

// The bounds of this thread's stack (ThreadState::stackLow, stackHigh), learned at its first sample
// (pthread_getattr_np, whose own allocations pass through the hooks as the agent's own work).
void learnStackBounds()
{
    t_state.stackAsked = true;
    pthread_attr_t attr;
    // What it allocates (the maps file it reads, the attribute's CPU set) it frees again by the time
    // pthread_attr_destroy returns: all of it is the agent's own.
    const InternalWork work;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *low = nullptr;
        size_t size = 0;
        if (pthread_attr_getstack(&attr, &low, &size) == 0 && low != nullptr) {
            t_state.stackLow = reinterpret_cast<uint64_t>(low);
            t_state.stackHigh = t_state.stackLow + size;
        }
        pthread_attr_destroy(&attr);
    }
}

// Copies up to `want` bytes of the stack from `sp`, never past its end: a plain copy within the thread's known
// stack, else process_vm_readv, which stops at the end of the mapping instead of faulting. Returns the bytes
// copied.
uint32_t copyStack(uint64_t sp, uint8_t *out, uint32_t want)
{
    if (!t_state.stackAsked)
        learnStackBounds();
    return copyStackInHandler(sp, out, want);
}

void learnThreadStack()
{
    if (!t_state.stackAsked)
        learnStackBounds();
}

uint64_t liveStackBytes(uint64_t sp)
{
    return sp >= t_state.stackLow && sp < t_state.stackHigh ? t_state.stackHigh - sp : 0;
}

namespace {

// Raw bytes, never through the C library's memcpy: a stack is read whole, dead locals too, and a sanitizer's memcpy
// (a test's) would take those for a fault.
inline void copyBytes(uint8_t *out, const uint8_t *in, size_t n)
{
    asm volatile("rep movsb" : "+D"(out), "+S"(in), "+c"(n) : : "memory");
}

// Copies `n` bytes of the stack into the ring with non-temporal stores, whole lines at a time: the copy (up to 32 KiB)
// neither takes the ring's lines from the session's cache, which cleared them when it read the lap before (a
// transfer between cores for every line), nor pushes the program's own working set out of this core's caches for
// lines it will not read again. The fence orders them before the record is published.
void streamCopy(uint8_t *out, const uint8_t *in, size_t n)
{
    size_t head = (16 - (reinterpret_cast<uintptr_t>(out) & 15)) & 15;
    if (head > n)
        head = n;
    copyBytes(out, in, head);
    out += head;
    in += head;
    n -= head;
    for (; n >= 64; n -= 64, out += 64, in += 64) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + 32));
        const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + 48));
        _mm_stream_si128(reinterpret_cast<__m128i *>(out), a);
        _mm_stream_si128(reinterpret_cast<__m128i *>(out + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i *>(out + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i *>(out + 48), d);
    }
    copyBytes(out, in, n);
    _mm_sfence();
}

} // namespace

uint32_t copyStackInHandler(uint64_t sp, uint8_t *out, uint32_t want)
{
    if (sp >= t_state.stackLow && sp < t_state.stackHigh) {
        const uint64_t room = t_state.stackHigh - sp;
        const uint32_t n = room < want ? uint32_t(room) : want;
        streamCopy(out, reinterpret_cast<const uint8_t *>(sp), n); // NOLINT(performance-no-int-to-ptr)
        return n;
    }
    struct iovec local = {out, want};
    // The stack is read at its address in this very process. NOLINTNEXTLINE(performance-no-int-to-ptr)
    struct iovec remote = {reinterpret_cast<void *>(sp), want};
    const ssize_t n = syscall(SYS_process_vm_readv, getpid(), &local, 1ul, &remote, 1ul, 0ul);
    if (n >= 0)
        return uint32_t(n);
    // A copy that crosses the end of the stack fails whole: retry up to the end of sp's page, then page by page.
    uint32_t copied = 0;
    const uint64_t pageEnd = (sp | 4095) + 1;
    uint64_t chunk = pageEnd - sp;
    while (copied < want) {
        const uint32_t len = uint32_t(chunk < want - copied ? chunk : want - copied);
        struct iovec l = {out + copied, len};
        struct iovec r = {reinterpret_cast<void *>(sp + copied), len}; // NOLINT(performance-no-int-to-ptr)
        if (syscall(SYS_process_vm_readv, getpid(), &l, 1ul, &r, 1ul, 0ul) != ssize_t(len))
            break;
        copied += len;
        chunk = 4096;
    }
    if (copied == 0)
        g_ring->problems.fetch_or(ProblemStackCopy, std::memory_order_relaxed);
    return copied;
}

// The callee-saved registers, the stack pointer and an instruction pointer of this function's caller frame:
// where the session's unwinder starts (the agent's own frames are dropped by the session).
__attribute__((noinline)) void captureRegisters(uint64_t *regs)
{
    uint64_t bx, bp, r12, r13, r14, r15;
    asm volatile("mov %%rbx, %0\n\tmov %%rbp, %1\n\tmov %%r12, %2\n\tmov %%r13, %3\n\tmov %%r14, %4\n\tmov %%r15, %5"
                 : "=m"(bx), "=m"(bp), "=m"(r12), "=m"(r13), "=m"(r14), "=m"(r15));
    // This function's return address and the stack pointer at its call site: the caller's state.
    regs[RegIP] = reinterpret_cast<uint64_t>(__builtin_return_address(0));
    regs[RegSP] = reinterpret_cast<uint64_t>(__builtin_frame_address(0)) + 16;
    regs[RegBX] = bx;
    regs[RegBP] = *static_cast<uint64_t *>(__builtin_frame_address(0)); // the caller's frame pointer, saved
    regs[RegR12] = r12;
    regs[RegR13] = r13;
    regs[RegR14] = r14;
    regs[RegR15] = r15;
    (void)bp;
}

} // namespace emberline::agent
