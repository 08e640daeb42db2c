#pragma once

#include "engine/inject/target_modules.h"
#include "engine/inject/unsafe_code.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/process_map.h"
#include "engine/unwind/unwinder.h"

#include <sys/user.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace emberline::engine {

// Whether a stopped thread may call dlopen where it stands: no frame of its stack may be in UnsafeCode (it may hold
// a lock dlopen takes) or be a signal handler's (the interrupted code below it may hold one, and dlopen is not
// async-signal-safe), it must not be inside a restartable sequence (rseq: the kernel would abort it as we move its
// rip, and then not abort it when we put rip back), and it must have stack to spare.
//
// The stack is walked by the engine's own unwinder (DWARF CFI with libunwind, over a copy of the stack read with
// process_vm_readv and the target's files read through /proc/PID/root), to its outermost frame; a walk that cannot
// reach it proves nothing and counts as unsafe. A signal frame is known by its return address: the rt_sigreturn
// trampoline (`mov $15, %rax; syscall`, glibc's and musl's __restore_rt), as libunwind itself recognises it.
//
// Thread: the injector's; built before the thread is stopped, so that only the walk happens in the stop.
class SafePoint {
public:
    struct Verdict {
        bool safe = false;
        std::string where; // why not: "malloc in libc.so.6", "a signal handler", ...
        size_t frames = 0;
    };

    SafePoint(int pid, const std::vector<TargetMapping> &maps, const std::vector<TargetModule> &modules);
    ~SafePoint();
    SafePoint(const SafePoint &) = delete;
    SafePoint &operator=(const SafePoint &) = delete;

    // `regs`: the stopped thread's registers.
    Verdict check(int tid, const user_regs_struct &regs);
    const UnsafeCode &unsafeCode() const { return m_unsafe; }

    // Stack that must remain below the stack pointer of a thread whose stack cannot grow (dlopen and a library's
    // constructors run on it).
    static constexpr uint64_t kStackToSpare = uint64_t(64) << 10;

private:
    bool signalReturn(uint64_t address) const;
    bool inRestartableSequence(int tid, uint64_t pc) const;
    const TargetMapping *stackMapping(uint64_t sp);

    int m_pid;
    std::vector<TargetMapping> m_maps;
    UnsafeCode m_unsafe;
    ElfCache m_cache;
    ModuleIds m_ids{1};
    ProcessMap m_map{&m_cache, &m_ids};
    Unwinder m_unwinder;
    std::vector<uint8_t> m_stack;
    UnwindOutput m_walk;
    UnwindOutput m_framePointerWalk;
};

} // namespace emberline::engine
