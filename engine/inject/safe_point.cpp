#include "engine/inject/safe_point.h"

#include "engine/inject/remote_memory.h"

#include <sys/ptrace.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace emberline::engine {
namespace {

// The stack copied for the walk: from the stack pointer to the end of its mapping, at most this much.
constexpr size_t kMaxStackCopy = size_t(512) << 10;
constexpr size_t kMaxFrames = 256;

// rt_sigreturn's trampoline: mov $15, %rax; syscall.
constexpr uint8_t kSigreturn[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

// PTRACE_GET_RSEQ_CONFIGURATION (Linux 5.13) and its answer, not in Debian 12's glibc headers.
constexpr int kGetRseqConfiguration = 0x420f;
struct RseqConfiguration {
    uint64_t rseqAbiPointer;
    uint32_t rseqAbiSize;
    uint32_t signature;
    uint32_t flags;
    uint32_t pad;
};
// struct rseq_cs of the kernel's ABI.
struct RseqCriticalSection {
    uint32_t version;
    uint32_t flags;
    uint64_t startIp;
    uint64_t postCommitOffset;
    uint64_t abortIp;
};

std::string hex(uint64_t value)
{
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

} // namespace

SafePoint::SafePoint(int pid, const std::vector<TargetMapping> &maps, const std::vector<TargetModule> &modules)
    : m_pid(pid), m_maps(maps), m_unsafe(UnsafeCode::find(pid, maps, modules))
{
    // The target's files as it sees them (its mount namespace), through /proc/PID/root.
    const std::string root = "/proc/" + std::to_string(pid) + "/root";
    for (const TargetMapping &m : maps) {
        const bool file = !m.path.empty() && m.path[0] == '/';
        m_map.addMapping(m.start, m.end - m.start, m.offset, file ? root + m.path : m.path, m.executable, m.inode);
    }
}

SafePoint::~SafePoint() = default;

const TargetMapping *SafePoint::stackMapping(uint64_t sp)
{
    auto find = [&]() -> const TargetMapping * {
        for (const TargetMapping &m : m_maps)
            if (sp >= m.start && sp < m.end)
                return &m;
        return nullptr;
    };
    if (const TargetMapping *m = find())
        return m;
    // A thread started since the map was read, on a new stack.
    if (auto maps = readTargetMaps(m_pid); maps.ok())
        m_maps = std::move(maps).value();
    return find();
}

bool SafePoint::signalReturn(uint64_t address) const
{
    uint8_t code[sizeof kSigreturn];
    return m_map.readImage(address, code, sizeof code) && std::memcmp(code, kSigreturn, sizeof code) == 0;
}

bool SafePoint::inRestartableSequence(int tid, uint64_t pc) const
{
    RseqConfiguration config{};
    // NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace's addr argument is the size of the answer here
    if (::ptrace(static_cast<__ptrace_request>(kGetRseqConfiguration), tid, reinterpret_cast<void *>(sizeof config),
                 &config) <= 0 ||
        config.rseqAbiPointer == 0)
        return false;
    uint64_t criticalSection = 0;
    if (!readRemote(m_pid, tid, config.rseqAbiPointer + 8, &criticalSection, sizeof criticalSection) ||
        criticalSection == 0)
        return false;
    RseqCriticalSection cs{};
    if (!readRemote(m_pid, tid, criticalSection, &cs, sizeof cs))
        return false;
    return pc >= cs.startIp && pc - cs.startIp < cs.postCommitOffset;
}

SafePoint::Verdict SafePoint::check(int tid, const user_regs_struct &regs)
{
    Verdict v;
    const TargetMapping *stack = stackMapping(regs.rsp);
    if (!stack) {
        v.where = "a stack pointer outside any mapping (" + hex(regs.rsp) + ")";
        return v;
    }
    // The main thread's stack grows on demand; a thread's stack has the size it was made with.
    if (stack->path != "[stack]" && regs.rsp - stack->start < kStackToSpare) {
        v.where = "a stack with " + std::to_string((regs.rsp - stack->start) / 1024) + " KiB left";
        return v;
    }
    if (inRestartableSequence(tid, regs.rip)) {
        v.where = "a restartable sequence (rseq)";
        return v;
    }
    m_stack.resize(std::min<uint64_t>(stack->end - regs.rsp, kMaxStackCopy));
    if (!readRemote(m_pid, tid, regs.rsp, m_stack.data(), m_stack.size())) {
        v.where = "an unreadable stack";
        return v;
    }
    uint64_t perfRegs[RegCount] = {};
    perfRegs[RegAX] = regs.rax;
    perfRegs[RegBX] = regs.rbx;
    perfRegs[RegCX] = regs.rcx;
    perfRegs[RegDX] = regs.rdx;
    perfRegs[RegSI] = regs.rsi;
    perfRegs[RegDI] = regs.rdi;
    perfRegs[RegBP] = regs.rbp;
    perfRegs[RegSP] = regs.rsp;
    perfRegs[RegIP] = regs.rip;
    const unsigned long long high[] = {regs.r8, regs.r9, regs.r10, regs.r11, regs.r12, regs.r13, regs.r14, regs.r15};
    for (int i = 0; i < 8; ++i)
        perfRegs[RegR8 + i] = high[i];
    const UnwindInput input{perfRegs, m_stack, &m_map, m_pid};
    m_unwinder.unwind(input, m_walk, kMaxFrames);
    m_framePointerWalk.ips.clear();
    m_framePointerWalk.complete = false;
    if (!m_walk.complete)
        m_unwinder.unwindFramePointers(input, m_framePointerWalk, kMaxFrames);
    v.frames = std::max(m_walk.ips.size(), m_framePointerWalk.ips.size());
    // Every frame of either walk: a caller's pc is its return address less one, inside the call instruction.
    for (const UnwindOutput *walk : {&m_walk, &m_framePointerWalk}) {
        for (size_t i = 0; i < walk->ips.size(); ++i) {
            const uint64_t pc = walk->ips[i];
            if (const UnsafeCode::Range *r = m_unsafe.rangeOf(pc)) {
                v.where = r->name;
                return v;
            }
            if (signalReturn(i == 0 ? pc : pc + 1)) {
                v.where = "a signal handler";
                return v;
            }
        }
    }
    if (!m_walk.complete && !m_framePointerWalk.complete) {
        const uint64_t last = m_walk.ips.empty() ? regs.rip : m_walk.ips.back();
        const MappedModule *module = m_map.find(last);
        v.where = "a stack that could not be walked to its end (the walk stopped at " + hex(last) +
                  (module ? " in " + module->path.substr(module->path.rfind('/') + 1) : std::string()) + ")";
        return v;
    }
    v.safe = true;
    return v;
}

} // namespace emberline::engine
