#pragma once

#include <cstdint>
#include <optional>

namespace emberline::engine {

// How much of each thread's user stack a sample copies, learned from the stacks the unwinder walks.
//
// Every byte copied costs the target: the kernel copies it in the sampling interrupt, on the target's CPU, and
// the ring buffer reserves the whole asked size per sample. Most programs' stacks need a few KiB, while a
// fixed copy must be sized for the deepest one. So the copy starts at `startBytes`, shrinks once the stacks
// seen for a while need much less (to what the deepest of them read, with half again as headroom), and grows
// as soon as a stack is cut short by the copy, up to `maxBytes`.
//
// Pure bookkeeping: the session feeds it every unwound sample and applies what decide() returns to the sampler.
//
// Thread: the session thread.
class StackCopyPolicy {
public:
    struct Limits {
        uint32_t minBytes = 8192;
        uint32_t startBytes = 32768;
        uint32_t maxBytes = 65528; // perf's limit (under 64 KiB, a multiple of 8)
    };
    // How long a copy size is kept, and how many samples it must have seen, before it may shrink.
    static constexpr int64_t kSettleNs = 250'000'000;
    static constexpr uint64_t kSettleSamples = 150;
    // Stacks cut short at the current size that make it grow (one could be a walk gone astray).
    static constexpr uint64_t kCutShortToGrow = 2;

    explicit StackCopyPolicy(Limits limits);

    // One unwound sample that had a copied stack: `copyBytes` asked for it, `usedBytes` its walk read, and, for
    // one the copy cut short, `neededBytes` (a lower bound of the copy its whole stack needs; 0 if unknown).
    void observe(uint32_t copyBytes, uint64_t usedBytes, bool cutShort, uint64_t neededBytes);
    // The copy to ask for from now on when it should change, else nothing. `nowNs` on any monotonic clock.
    std::optional<uint32_t> decide(int64_t nowNs);
    // The caller could not apply the size decide() returned: the previous one stays, for the whole session.
    void rejected();

    uint32_t current() const { return m_current; }
    // The most stack any sample was seen to use or need.
    uint64_t deepest() const { return m_deepest; }
    uint32_t changes() const { return m_changes; }

private:
    uint32_t clampToLimits(uint64_t bytes) const;

    Limits m_limits;
    uint32_t m_current;
    uint32_t m_previous;
    uint64_t m_deepest = 0;
    uint64_t m_cutShort = 0;        // samples cut short at the current size since it was set
    uint64_t m_samples = 0;         // samples observed at the current size
    std::optional<int64_t> m_since; // when the current size was set (the first decide() sets it)
    uint32_t m_changes = 0;
    bool m_frozen = false;
};

} // namespace emberline::engine
