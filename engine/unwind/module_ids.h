#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace emberline::engine {

// What makes two mappings the same module: the file (device and inode as the kernel reports them, or the
// ELF image's own when the kernel's are not known, plus the build id and the path) and where it is loaded
// (start address and file offset). A mapping read again from /proc/PID/maps, or inherited by a forked
// child, has the same identity and therefore the same id; a file replaced on disk (a new inode or build id)
// or loaded elsewhere gets a new one.
struct ModuleIdentity {
    std::string path;
    std::string buildId;
    uint64_t device = 0;
    uint64_t inode = 0;
    uint64_t start = 0;
    uint64_t pgoff = 0;

    friend bool operator<(const ModuleIdentity &a, const ModuleIdentity &b)
    {
        return std::tie(a.start, a.pgoff, a.inode, a.device, a.path, a.buildId) <
               std::tie(b.start, b.pgoff, b.inode, b.device, b.path, b.buildId);
    }
};

// Hands out one id per module identity for the whole session, from `firstId` on, densely, so that ids can
// index per-module counters. Asked only when a mapping is added (never per sample); the table grows with the
// distinct modules the session sees, not with the number of /proc reloads or forks.
//
// Thread: the session thread.
class ModuleIds {
public:
    explicit ModuleIds(uint32_t firstId) : m_next(firstId) {}

    uint32_t idFor(const ModuleIdentity &identity);
    size_t size() const { return m_ids.size(); }
    uint32_t nextId() const { return m_next; }

private:
    std::map<ModuleIdentity, uint32_t> m_ids;
    uint32_t m_next;
};

} // namespace emberline::engine
