#pragma once

#include "engine/memory/ring_reader.h"
#include "engine/sampler/sample_sink.h"
#include "engine/session/memory_session.h"

#include <cstdint>
#include <string_view>

namespace emberline::engine {

// What a sampler that reports execs itself (perf, ptrace) drains into when memory is profiled: the sampling
// pipeline, with the session's ordering of an exec in front of it. A process that takes a new program image keeps
// its old image's allocations in its ring, and they unwind only with the old map; the pipeline drops that map as it
// hears of the exec. So the barrier first has the ring reader drain that process's rings into the memory side and
// tells the memory side of the exec, then hands the exec on. The session owns this order, rather than the pipeline
// calling back into the memory side (the two would call each other); every other record passes straight through.
// (The in-process sampler learns of an exec from the rings themselves, in order, and needs no barrier.)
//
// Thread: the session thread, inside the sampler's drain.
class ExecBarrier final : public SampleSink {
public:
    // `modules`: where the old image's module records go, where the sampler reports no mappings (null: nowhere).
    ExecBarrier(SampleSink &pipeline, RingReader &rings, MemorySession &memory, ModuleRecordSink *modules = nullptr)
        : m_pipeline(pipeline), m_rings(rings), m_memory(memory), m_modules(modules)
    {
    }

    void onSample(const RawSample &sample) override { m_pipeline.onSample(sample); }
    void onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable, uint64_t inode,
                std::string_view path) override
    {
        m_pipeline.onMmap(pid, start, length, pgoff, executable, inode, path);
    }
    void onExecTime(uint32_t pid, uint64_t timeNs) override
    {
        m_execPid = pid;
        m_execNs = timeNs;
        m_pipeline.onExecTime(pid, timeNs);
    }
    void onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec) override
    {
        if (exec && pid == tid) {
            // The rings made before the exec (found now if need be), where the sampler said when it was.
            m_rings.pollProcess(RingSinks{.memory = &m_memory, .modules = m_modules}, pid,
                                m_execPid == pid ? m_execNs : 0);
            m_execPid = 0;
            m_memory.onExec(pid, name);
        }
        m_pipeline.onComm(pid, tid, name, exec);
    }
    void onFork(uint32_t pid, uint32_t ppid, uint32_t tid) override { m_pipeline.onFork(pid, ppid, tid); }
    void onExit(uint32_t pid, uint32_t tid) override { m_pipeline.onExit(pid, tid); }
    void onLost(uint64_t count) override { m_pipeline.onLost(count); }
    void onSwitch(uint32_t pid, uint32_t tid, uint64_t timeNs, bool out, bool preempted) override
    {
        m_pipeline.onSwitch(pid, tid, timeNs, out, preempted);
    }

private:
    SampleSink &m_pipeline;
    RingReader &m_rings;
    MemorySession &m_memory;
    ModuleRecordSink *m_modules;
    uint32_t m_execPid = 0; // the exec the sampler last timed (onExecTime), until its onComm
    uint64_t m_execNs = 0;
};

} // namespace emberline::engine
