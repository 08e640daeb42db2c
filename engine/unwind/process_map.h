#pragma once

#include "engine/common/result.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/elf_image.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace emberline::engine {

// One executable mapping of a process, and the ELF image behind it.
struct MappedModule {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t pgoff = 0;
    std::string path;
    std::shared_ptr<const ElfImage> image; // null for anonymous or unreadable memory
    int64_t bias = 0;                      // runtime address = ELF virtual address + bias
    uint32_t id = 0;                       // stable id within the session, for the recorder's interning
};

// The executable memory map of one target process, kept current from /proc/PID/maps and PERF_RECORD_MMAP2.
// Answers "which module holds this address" for unwinding and recording, and reads the file-backed bytes at
// a runtime address (unwind tables, text) without touching the target.
//
// Thread: the session thread.
class ProcessMap {
public:
    ProcessMap(ElfCache *cache, uint32_t *nextModuleId) : m_cache(cache), m_nextModuleId(nextModuleId) {}

    Status loadFromProc(int pid);
    void addMapping(uint64_t start, uint64_t length, uint64_t pgoff, const std::string &path, bool executable);
    void clear() { m_modules.clear(); }

    const MappedModule *find(uint64_t address) const;
    // Reads target memory that is backed by a mapped file image; false for anything else.
    bool readImage(uint64_t address, void *out, size_t size) const;
    const std::map<uint64_t, MappedModule> &modules() const { return m_modules; }
    uint64_t generation() const { return m_generation; }

private:
    ElfCache *m_cache;
    uint32_t *m_nextModuleId;
    std::map<uint64_t, MappedModule> m_modules; // by start address
    uint64_t m_generation = 0;
};

} // namespace emberline::engine
