#pragma once

// What the agent's in-process tests share (tst_agent_core, tst_agent_heap): a sink that keeps every memory record the
// session's reader hands it, the reader on a thread of its own, the agent's options for a test's folder, and a
// block's heap bytes and free as the hooks count and make them.
#include "engine/agent/agent_core.h"
#include "engine/agent/agent_heap.h"
#include "engine/memory/ring_reader.h"

#include <QTemporaryDir>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include <malloc.h>
#include <unistd.h>

namespace agent_core_test {

using namespace emberline;
using namespace emberline::engine;

class RecordingSink : public MemoryRecordSink {
public:
    void onAllocation(const AgentAllocation &a) override
    {
        order.push_back(a.address);
        heapBytes[a.address] = a.heapBytes;
        lastThreadAllocations = a.threadAllocations;
        if (!live.emplace(a.address, a.size).second)
            ++doubleAllocations;
        ++allocations;
        ++allocationsOf[a.pid];
    }
    void onFree(uint64_t, uint32_t, uint32_t, uint64_t, uint64_t address) override
    {
        if (live.erase(address) == 0)
            ++unknownFrees;
        ++frees;
    }
    void onImageStart(uint64_t, uint32_t pid, uint32_t parentPid) override { parents[pid] = parentPid; }

    std::vector<uint64_t> order;
    std::map<uint64_t, uint64_t> heapBytes;
    std::map<uint64_t, uint64_t> live;
    std::map<uint32_t, uint32_t> parents;
    std::map<uint32_t, uint64_t> allocationsOf;
    uint64_t allocations = 0, frees = 0, unknownFrees = 0, doubleAllocations = 0, lastThreadAllocations = 0;
};

// The session's reader on a thread of its own while the test's thread writes (exact mode waits for it).
class ReaderThread {
public:
    ReaderThread(RingReader &rings, RecordingSink &sink)
        : m_thread([this, &rings, &sink] {
              while (!m_stop.load())
                  if (rings.poll({.memory = &sink}) == 0)
                      usleep(200);
              rings.poll({.memory = &sink});
          })
    {
    }
    ~ReaderThread() { stop(); }
    void stop()
    {
        m_stop.store(true);
        if (m_thread.joinable())
            m_thread.join();
    }

private:
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

inline agent::AgentOptions options(const QTemporaryDir &dir, uint64_t interval, uint64_t ringBytes)
{
    static QByteArray path;
    path = dir.path().toUtf8();
    agent::AgentOptions o;
    o.directory = path.constData();
    o.allocInterval = interval;
    o.ringBytes = ringBytes;
    return o;
}

// A block's heap bytes as the agent counts them: the C library's chunk size (its usable size and the 8-byte header),
// or another allocator's malloc_usable_size; nothing where the allocator's own is not found beside its malloc (a
// sanitizer's malloc, linked into the test program itself).
inline uint64_t chunkBytes(void *p)
{
    if (!agent::heapSizesKnown())
        return 0;
    return malloc_usable_size(p) + (agent::g_chunkSizes ? 8 : 0);
}

// The agent as an attach loads it into a running program, for as long as this lives.
struct Attached {
    Attached() { emberline::agent::g_attachedNs = 1; }
    ~Attached() { emberline::agent::g_attachedNs = 0; }
    Attached(const Attached &) = delete;
    Attached &operator=(const Attached &) = delete;
};

// A free as the hook makes it: the agent told first, then the C library's (but for a block of the agent's own).
inline void releaseBlock(void *p)
{
    if (emberline::agent::freeing(p))
        ::free(p);
}

} // namespace agent_core_test
