#pragma once

#include <cstddef>

namespace emberline::engine {

// Gives the allocator's free pages back to the system when the process has grown by more than a slack since
// the last time it did, rather than after every unit of work.
//
// A live session frees the previous snapshot's tables and the flush itself after every flush, spread over the
// allocator's per-thread arenas; without a trim the resident size keeps the high-water mark of every arena. But a
// trim after every flush makes the next flush touch fresh pages for everything it allocates, and a page fault
// is dear (in a virtual machine more so): the differential tree of a live comparison cost eight times as much
// on a trimmed heap. With a slack, the work of one flush reuses the pages the previous one freed, and the
// resident size stays within the slack of what the session holds.
//
// Thread: one owner.
class HeapTrimmer {
public:
    static constexpr size_t kDefaultSlackBytes = size_t(32) << 20;

    explicit HeapTrimmer(size_t slackBytes = kDefaultSlackBytes) : m_slack(slackBytes) {}

    // After a unit of work: trims when the resident size is more than the slack above what it was after the
    // last trim (or the first call). Returns whether it trimmed.
    bool afterWork();

    // The process's resident size in bytes (/proc/self/statm), 0 when it cannot be read.
    static size_t residentBytes();

private:
    size_t m_slack;
    size_t m_baseline = 0; // the resident size after the last trim; 0 before the first call
};

} // namespace emberline::engine
