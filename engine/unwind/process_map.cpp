#include "engine/unwind/process_map.h"

#include <elf.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace emberline::engine {

Status ProcessMap::loadFromProc(int pid)
{
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    if (!maps)
        return makeError(Error::Code::Io, "cannot read /proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        unsigned long long start = 0, end = 0, offset = 0, inode = 0;
        char perms[8] = {};
        int pathStart = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %llu %n", &start, &end, perms, &offset, &inode,
                        &pathStart) < 5)
            continue;
        std::string path = pathStart > 0 && pathStart <= static_cast<int>(line.size()) ? line.substr(pathStart) : "";
        if (path == "[stack]") {
            m_mainStackStart = start;
            m_mainStackEnd = end;
            m_mainStackRead = true;
        }
        addMapping(start, end - start, offset, path, perms[2] == 'x', inode);
    }
    return Ok{};
}

void ProcessMap::readMainStack(int pid)
{
    if (m_mainStackRead || m_mainStackEnd != 0)
        return;
    m_mainStackRead = true;
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        unsigned long long start = 0, end = 0;
        if (line.ends_with(" [stack]") && std::sscanf(line.c_str(), "%llx-%llx", &start, &end) == 2) {
            m_mainStackStart = start;
            m_mainStackEnd = end;
            return;
        }
    }
}

void ProcessMap::addMapping(uint64_t start, uint64_t length, uint64_t pgoff, const std::string &path, bool executable,
                            uint64_t inode)
{
    const uint64_t end = start + length;
    // A new mapping replaces whatever it overlaps (mmap semantics).
    auto it = m_modules.upper_bound(start);
    if (it != m_modules.begin() && std::prev(it)->second.end > start)
        --it;
    bool erased = false;
    while (it != m_modules.end() && it->first < end) {
        it = m_modules.erase(it);
        erased = true;
    }
    if (erased || executable)
        changed();
    if (!executable)
        return;
    MappedModule m;
    m.start = start;
    m.end = end;
    m.pgoff = pgoff;
    m.path = path;
    m.inode = inode;
    if (path == "[vdso]") {
        m.image = m_cache->vdso();
    } else if (!path.empty() && path[0] == '/' && !path.starts_with("//")) { // perf's "//anon": a JIT's memory
        // " (deleted)": the file the process runs was removed or replaced on disk since it was mapped.
        if (path.find(" (deleted)") == std::string::npos)
            m.image = m_cache->get(path, inode);
        m.fileMissing = !m.image && !path.starts_with("/memfd:") && !path.starts_with("/dev/");
    }
    if (m.image) {
        // The segment this mapping loads: the one whose file pages hold `pgoff`. A linker that packs segments
        // without page alignment in the file (lld) puts the end of the read-only segment and the start of the
        // code in one file page, so two segments hold it; this mapping is executable, and so is the segment it
        // loads.
        const ElfImage::Segment *loaded = nullptr;
        for (const ElfImage::Segment &s : m.image->segments()) {
            const uint64_t segPage = s.offset & ~uint64_t(0xfff);
            if (pgoff >= segPage && pgoff < s.offset + s.filesz && (!loaded || (s.executable && !loaded->executable)))
                loaded = &s;
        }
        if (loaded)
            m.bias = static_cast<int64_t>(start + loaded->offset - loaded->vaddr - pgoff);
    }
    ModuleIdentity identity;
    identity.path = path;
    identity.start = start;
    identity.pgoff = pgoff;
    if (m.image) {
        // The image's own identity, not the source's: an MMAP2 record and a /proc reload name the same file.
        identity.buildId = m.image->buildId();
        identity.device = m.image->device();
        identity.inode = m.image->inode();
    }
    m.id = m_ids->idFor(identity);
    m_modules.emplace(start, std::move(m));
}

void ProcessMap::index() const
{
    m_byAddress.clear();
    m_imageBytes.clear();
    const ElfImage *lastImage = nullptr;
    int64_t lastBias = 0;
    for (const auto &[start, m] : m_modules) {
        m_byAddress.add(m.start, m.end, &m);
        // An image mapped twice at the same bias (its text split in two mappings) backs the same addresses once.
        if (!m.image || (m.image.get() == lastImage && m.bias == lastBias))
            continue;
        lastImage = m.image.get();
        lastBias = m.bias;
        for (const ElfImage::Segment &s : m.image->segments()) {
            const uint64_t runtime = s.vaddr + static_cast<uint64_t>(m.bias);
            m_imageBytes.add(runtime, runtime + s.filesz,
                             ImageBytes{m.image->segmentData(s), m.image->segmentAvailable(s)});
        }
    }
    m_byAddress.build(); // modules never overlap: a new mapping replaces what it covers
    m_imageBytes.build();
    m_indexed = true;
}

const MappedModule *ProcessMap::find(uint64_t address) const
{
    if (!m_indexed)
        index();
    const auto *range = m_byAddress.find(address);
    return range ? range->value : nullptr;
}

bool ProcessMap::readImage(uint64_t address, void *out, size_t size) const
{
    // Unwind tables usually live in a read-only segment that has no executable mapping of its own, so every
    // segment of every image at its load bias is looked at, not only the module that contains the address.
    if (!m_indexed)
        index();
    if (m_imageBytes.overlaps())
        return readImageByWalk(address, out, size);
    const auto *range = m_imageBytes.find(address, size);
    if (!range)
        return false;
    const uint64_t offset = address - range->start;
    if (!range->value.data || offset + size > range->value.available)
        return false;
    std::memcpy(out, range->value.data + offset, size);
    return true;
}

// Two images claim the same addresses (a stale mapping, or a file loaded twice): the first image, in the order of
// the modules, whose bytes hold the read answers, as it did before the index existed.
bool ProcessMap::readImageByWalk(uint64_t address, void *out, size_t size) const
{
    if (const MappedModule *m = find(address);
        m && m->image && m->image->readVaddr(address - static_cast<uint64_t>(m->bias), out, size))
        return true;
    const ElfImage *last = nullptr;
    for (const auto &[start, m] : m_modules) {
        if (!m.image || m.image.get() == last)
            continue;
        last = m.image.get();
        if (m.image->readVaddr(address - static_cast<uint64_t>(m.bias), out, size))
            return true;
    }
    return false;
}

} // namespace emberline::engine
