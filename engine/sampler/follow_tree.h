#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

// The processes a session follows: the launched or attached root and every descendant that a fork record
// reports, each from its fork until its exit. A sample whose process is not in the tree at its time is someone
// else's (this kernel delivers some cpu-clock samples of unrelated processes to a per-task event while a
// neighbour forks) and is dropped.
//
// Times are the records' own (CLOCK_MONOTONIC ns), so that the answer does not depend on the order in which
// the per-CPU buffers are read: a sample taken before its process's exit still counts when the exit record was
// read first, and a pid reused by a stranger after the exit does not.
//
// Thread: the thread that drains the sampler (the session thread).
class FollowTree {
public:
    explicit FollowTree(uint32_t root = 0);

    // The root is followed from the beginning of time (it was running, or about to exec, before any record).
    void setRoot(uint32_t root);
    uint32_t root() const { return m_root; }
    // A process `pid` forked by `ppid` at `timeNs`: followed when its parent is followed then. A new thread
    // (pid == ppid) changes nothing.
    void onFork(uint32_t pid, uint32_t ppid, uint64_t timeNs);
    // The last thread of `pid` left at `timeNs` (an exit record with pid == tid).
    void onExit(uint32_t pid, uint64_t timeNs);
    // Whether a record of `pid` at `timeNs` belongs to the followed tree.
    bool follows(uint32_t pid, uint64_t timeNs) const;
    // Forgets processes that exited before `timeNs`: no record older than that is still to come.
    void prune(uint64_t timeNs);
    // Processes alive or recently exited that the tree still holds.
    size_t size() const { return m_processes.size(); }
    // The processes followed now (no exit seen), in no particular order.
    std::vector<uint32_t> alive() const;

private:
    static constexpr uint64_t kAlive = UINT64_MAX;
    struct Span {
        uint64_t sinceNs = 0;
        uint64_t untilNs = kAlive;
    };
    uint32_t m_root = 0;
    std::unordered_map<uint32_t, Span> m_processes;
};

} // namespace emberline::engine
