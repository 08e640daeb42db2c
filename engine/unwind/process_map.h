#pragma once

#include "engine/common/result.h"
#include "engine/unwind/address_index.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/elf_image.h"
#include "engine/unwind/module_ids.h"

#include <atomic>
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
    uint32_t id = 0;                       // ModuleIds' id: the same for the same file loaded at the same place
    uint64_t inode = 0;                    // as the kernel reported it (/proc/PID/maps), 0 when not known
    // The file at `path` is not the one the process mapped: deleted, replaced on disk, or unreadable.
    bool fileMissing = false;
};

// The executable memory map of one target process, kept current from /proc/PID/maps and PERF_RECORD_MMAP2.
// Answers "which module holds this address" for unwinding and recording, and reads the file-backed bytes at
// a runtime address (unwind tables, text) without touching the target.
//
// Both questions are asked on every frame, so both are answered from sorted arrays (AddressIndex) rebuilt after the
// map changed: the modules by address, and every loadable segment of every mapped image at its load bias (unwind
// tables live in read-only segments that have no executable mapping of their own).
//
// Thread: the session thread.
class ProcessMap {
public:
    ProcessMap(ElfCache *cache, ModuleIds *ids) : m_cache(cache), m_ids(ids) {}
    // Not copied: the index points into this map's own modules.
    ProcessMap(const ProcessMap &) = delete;
    ProcessMap &operator=(const ProcessMap &) = delete;

    // Reads /proc/PID/maps. Mappings already known with the same file and place keep their id (ModuleIds).
    Status loadFromProc(int pid);
    // `inode`: the mapped file's inode when the source tells it (0: unknown), to notice a file replaced on disk.
    void addMapping(uint64_t start, uint64_t length, uint64_t pgoff, const std::string &path, bool executable,
                    uint64_t inode = 0);
    void clear()
    {
        if (!m_modules.empty())
            changed();
        m_modules.clear();
        m_mainStackStart = m_mainStackEnd = 0;
        m_mainStackRead = false;
    }
    // Reads the [stack] line of /proc/PID/maps once (a map built from records or a parent's copy lacks it).
    void readMainStack(int pid);

    const MappedModule *find(uint64_t address) const;
    // Reads target memory that is backed by a mapped file image; false for anything else.
    bool readImage(uint64_t address, void *out, size_t size) const;
    const std::map<uint64_t, MappedModule> &modules() const { return m_modules; }
    // Changes whenever a module comes or goes (not for mappings of data, which unwinding does not read). Unique
    // among all maps of the process once a module was added: a map and its generation name one set of modules.
    uint64_t generation() const { return m_generation; }
    // The main thread's stack ([stack] in /proc/PID/maps), [start, end); 0, 0 when not known.
    uint64_t mainStackEnd() const { return m_mainStackEnd; }
    uint64_t mainStackStart() const { return m_mainStackStart; }

private:
    // File bytes that back a runtime address range: a segment of a mapped image at its module's bias.
    struct ImageBytes {
        const uint8_t *data = nullptr; // the bytes at the range's start
        uint64_t available = 0;        // bytes readable from there (a truncated file holds fewer than the range)
    };
    void changed()
    {
        static std::atomic<uint64_t> s_generations{0};
        m_generation = ++s_generations;
        m_indexed = false;
    }
    // Rebuilds the sorted arrays after a change; the first lookup after it pays.
    void index() const;
    // The walk over every image that readImage() makes when two images claim the same addresses.
    bool readImageByWalk(uint64_t address, void *out, size_t size) const;

    ElfCache *m_cache;
    ModuleIds *m_ids;
    std::map<uint64_t, MappedModule> m_modules; // by start address
    uint64_t m_generation = 0;
    mutable AddressIndex<const MappedModule *> m_byAddress;
    mutable AddressIndex<ImageBytes> m_imageBytes;
    mutable bool m_indexed = false;
    uint64_t m_mainStackStart = 0;
    uint64_t m_mainStackEnd = 0;
    bool m_mainStackRead = false;
};

} // namespace emberline::engine
