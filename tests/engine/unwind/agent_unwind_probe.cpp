// The table walk as the agent will compile it (the agent's flags: no exceptions, no RTTI, no sanitizers), in an
// object of its own: the check beside it (check_no_imports.cmake) requires that the object calls nothing outside
// itself, so that the walk is safe in a signal handler by construction, not by care.
#include "engine/agent/agent_unwind.h"

namespace {

struct OneModule {
    emberline::agent::UnwindTable table;
    uint64_t low = 0;
    uint64_t high = 0;
    uint64_t bias = 0;
};

} // namespace

extern "C" uint32_t emberlineAgentUnwindProbe(const emberline::agent::UnwindTable *table, uint64_t low, uint64_t high,
                                              uint64_t bias, const emberline::agent::StackBounds *stack,
                                              const emberline::agent::UnwindRegs *regs, uint64_t *pcs,
                                              uint32_t maxFrames)
{
    const OneModule module{*table, low, high, bias};
    auto find = [&](uint64_t pc, emberline::agent::UnwindTable &found, uint64_t &foundBias) {
        if (pc < module.low || pc >= module.high)
            return false;
        found = module.table;
        foundBias = module.bias;
        return true;
    };
    return emberline::agent::unwindStack(find, *stack, *regs, pcs, maxFrames, emberline::agent::OwnStackReader{})
        .frames;
}
