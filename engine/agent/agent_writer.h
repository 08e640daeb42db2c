#pragma once

// The agent's side of its ring (agent_protocol.h): the ring of this process image, its records written through
// AgentScope (agent_thread.h: reserve, fill, publish; never left unpublished), and whether the session still reads it.
// agent_writer.cpp reserves and places records; agent_liveness.cpp asks after the session.
//
// Thread: every thread of the program, concurrently; lock-free.

#include "engine/agent/agent_protocol.h"

#include <atomic>
#include <stddef.h>
#include <stdint.h>

namespace emberline::agent {

// The most stack a record copies (under 64 KiB, as a perf sample's copy, and a multiple of 8).
inline constexpr uint32_t kMaxStackCopyBytes = 65000 & ~uint32_t(7);

extern RingHeader *g_ring; // this process image's ring; null without one
extern uint64_t g_interval;
extern uint64_t g_ringBytes;
extern char g_directory[512];
extern uint64_t g_attachedNs; // CLOCK_MONOTONIC when the agent was loaded into the running program (0: launched)
extern std::atomic<bool> g_sessionGone;
// No other process can be writing this image's ring: set once a forked child's handler is in place (a child writes
// its parent's ring, shared memory, until that handler gives it its own), cleared before every fork in the parent
// (for good: its children may write its ring for a while), set again in the child once it has its own ring. The
// ring's head moves without a lock prefix only then (agent_writer.cpp: moveHead).
extern bool g_soleWriter;
extern uint32_t g_pythonAllocators; // agent_pymem.h's PythonAllocators, as the image's ring tells it

uint64_t nowNs();
// CLOCK_MONOTONIC for the allocation and free records, read cheaply where the time-stamp counter allows it (within
// tens of nanoseconds of nowNs; async-signal-safe). recordClockStart() decides whether it may, as the agent starts.
uint64_t recordNs();
void recordClockStart();
void appendDecimal(char *&p, uint64_t v);

// Creates this process image's ring in g_directory (`parentPid` for a forked child); false when it could not (a
// marker file then says why). unmapRing() lets it go (a forked child's copy of its parent's, an ended test).
bool createRing(uint32_t parentPid);
void unmapRing();
// The ring left to anonymous pages at its address (agentRetire): g_ring stays valid for a writer still under way.
void retireRing();

// Whether the session still reads the ring (a visit in the last 100 ms, or its process still exists).
bool sessionAlive(uint64_t now);
void resetLiveness(); // a new ring: the session is asked anew

// What a record other than an allocation's or a free's keeps free after it: room for the free of every tracked
// allocation, so that a CPU sample or a thread's totals never take the place a free must find (frees are never lost).
inline uint64_t keptForFrees()
{
    return g_ring->tracked.load(std::memory_order_relaxed) * kFreeRecordBytes;
}

// Where the program called the allocator, as the hook's slow path saw it on entry: the return address into the
// program's code, the stack pointer once the call returns, and RBP at the call. The walk starts there, not in the
// agent's own frames (the session drops those anyway): three steps fewer at every sampled allocation.
struct ProgramCall {
    uint64_t returnAddress;
    uint64_t sp;
    uint64_t bp;
};

// The records. `wait`: exact mode outside a record this thread holds may wait for room (AgentScope::reserve).
// A sampled allocation (every allocation when `exact`), with the thread's totals so far (AllocRecord), tracked first
// when sampled; its stack walked from `call` where given and the walk can, else copied (and walked) from its
// caller's frame.
void writeAlloc(void *address, size_t size, bool exact, bool wait, uint64_t allocations, uint64_t bytes,
                const ProgramCall *call = nullptr);
// A free of a tracked allocation (any free when `exact`).
void writeFree(void *address, bool exact, bool wait);
// The thread's totals at its end or its process image's; never waits.
void writeTotals(uint64_t allocations, uint64_t bytes);
// A thread's CPU timer started, or could not be made; never waits.
void writeThread(uint32_t tid, bool started);
// The dynamic linker's count of loads and unloads (dl_iterate_phdr's dlpi_adds + dlpi_subs): moved since a look when a
// module came or went. Takes the linker's lock: not from a signal handler.
uint64_t linkerLoads();
// The image's modules (ModuleRecord), as the ring is made: records/agent_modules.cpp. Returns the records written.
uint32_t writeModules();
// The modules loaded since the last listing, when the dynamic linker's count of loads moved; nothing while another
// thread lists. Not from a signal handler of the agent's own.
void writeNewModules();
// Whether every module the session's index tables has its record (written now where it can be: a module the dynamic
// linker has added since); false while one has none (an allocation's stack is then copied, not walked). The common
// case, an index already looked at, is a load and a compare.
extern std::atomic<uint32_t> g_modulesListedSequence; // the index sequence whose every module was listed (0: none)
bool listModulesForIndex(uint64_t now);
inline bool modulesListedForIndex(uint64_t now)
{
    return moduleIndex(g_ring)->sequence.load(std::memory_order_acquire) ==
               g_modulesListedSequence.load(std::memory_order_relaxed) ||
           listModulesForIndex(now);
}

// Called by AgentScope::reserve once a record is held, before it is filled: null but in the agent's tests, which
// nest a record there as a signal handler would.
extern void (*g_afterReserve)(RecordHeader *record);

} // namespace emberline::agent
