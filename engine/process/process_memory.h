#pragma once

#include <cstdint>
#include <vector>

namespace emberline::engine {

// The resident memory (RSS) of one process, from /proc/PID/statm (resident pages times the page size); -1 when the
// process is gone.
int64_t residentBytes(int pid);

// `rootPid` and every process descending from it (by each /proc/N/stat's parent), root first; empty when the root is
// gone. Reads the stat file of every process of the system.
std::vector<int> processTree(int rootPid);

// The resident memory of a profiled program and the processes it started, as a memory session's chart shows it
// beside the live heap. Reading it costs a statm file per process; the tree is found again (a read of every
// process's stat) only every `rescanEvery` reads, so that a read every quarter second stays cheap.
//
// Thread: one owner at a time; it reads /proc, so never the GUI thread.
class ProcessTreeMemory {
public:
    explicit ProcessTreeMemory(int rootPid, int rescanEvery = 8);
    int rootPid() const { return m_root; }
    // The tree's resident bytes now (processes that ended since the last scan count 0); -1 once the root is gone.
    int64_t residentBytes();

private:
    int m_root = 0;
    int m_rescanEvery = 8;
    int m_reads = 0;
    std::vector<int> m_tree;
};

} // namespace emberline::engine
