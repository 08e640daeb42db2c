#pragma once

// The memory maps of a recorded session's processes, kept from its records as the sampling pipeline keeps them
// (mmap records add modules, a forked child starts with its parent's map, an exec clears it), so that a test or a
// benchmark can unwind the samples of a sample log long after the program exited, with any unwinder it likes.

#include "engine/sampler/sample_sink.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/process_map.h"
#include "engine/unwind/unwinder.h"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace emberline::test {

class ReplayMaps final : public engine::SampleSink {
public:
    // Called for each sample that carries registers and a stack copy, with its process's map as of the sample.
    std::function<void(const engine::RawSample &, const engine::ProcessMap &)> onStack;

    void onSample(const engine::RawSample &sample) override
    {
        if (onStack && sample.regs.size() == engine::RegCount && !sample.stack.empty())
            onStack(sample, map(sample.pid));
    }
    void onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable, uint64_t inode,
                std::string_view path) override
    {
        map(pid).addMapping(start, length, pgoff, std::string(path), executable, inode);
    }
    void onComm(uint32_t pid, uint32_t tid, std::string_view, bool exec) override
    {
        if (exec && pid == tid)
            map(pid).clear();
    }
    void onFork(uint32_t pid, uint32_t ppid, uint32_t tid) override
    {
        if (pid != tid || pid == ppid)
            return;
        auto &slot = m_maps[pid];
        slot = std::make_unique<engine::ProcessMap>(&m_elfs, &m_ids);
        if (auto parent = m_maps.find(ppid); parent != m_maps.end())
            for (const auto &[start, m] : parent->second->modules())
                slot->addMapping(m.start, m.end - m.start, m.pgoff, m.path, true, m.inode);
    }
    void onExit(uint32_t, uint32_t) override {}
    void onLost(uint64_t) override {}

    engine::ProcessMap &map(uint32_t pid)
    {
        auto &slot = m_maps[pid];
        if (!slot)
            slot = std::make_unique<engine::ProcessMap>(&m_elfs, &m_ids);
        return *slot;
    }

private:
    engine::ElfCache m_elfs;
    engine::ModuleIds m_ids{1};
    std::map<uint32_t, std::unique_ptr<engine::ProcessMap>> m_maps;
};

} // namespace emberline::test
