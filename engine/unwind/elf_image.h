#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// One ELF file mapped read-only into our address space, with what unwinding needs from it: its loadable
// segments (to turn a target's runtime address back into file bytes) and the location of its
// `.eh_frame_hdr` binary-search table. Parsed once with libelf and shared by every process that maps the
// file; never re-read per sample.
//
// Thread: immutable after open(); shared between threads through shared_ptr<const ElfImage>.
class ElfImage {
public:
    struct Segment {
        uint64_t vaddr = 0;
        uint64_t memsz = 0;
        uint64_t offset = 0;
        uint64_t filesz = 0;
        bool executable = false;
    };

    static Result<std::shared_ptr<const ElfImage>> open(const std::string &path);
    // An image held in memory (the vdso); the bytes are copied.
    static Result<std::shared_ptr<const ElfImage>> fromMemory(std::string name, const void *data, size_t size);
    ~ElfImage();
    ElfImage(const ElfImage &) = delete;
    ElfImage &operator=(const ElfImage &) = delete;

    const std::string &path() const { return m_path; }
    const std::string &buildId() const { return m_buildId; }
    const std::vector<Segment> &segments() const { return m_segments; }
    bool isDynamic() const { return m_dynamic; } // ET_DYN (PIE or shared library)
    // The file's device and inode when it was opened (0 for an in-memory image): who it is on disk.
    uint64_t device() const { return m_device; }
    uint64_t inode() const { return m_inode; }

    // Unwind table: .eh_frame_hdr virtual address, its binary-search table and entry count; 0 when absent.
    uint64_t ehFrameHdrVaddr() const { return m_ehFrameHdr; }
    uint64_t fdeTableVaddr() const { return m_fdeTable; }
    uint64_t fdeCount() const { return m_fdeCount; }

    // The .eh_frame_hdr binary-search table in our memory (fdeCount() entries of two int32: the start pc and the
    // FDE, both relative to ehFrameHdrVaddr()), so that a lookup reads no target memory; null when it is absent or
    // not wholly backed by the file.
    const uint8_t *fdeTableBytes() const { return m_fdeTableBytes; }

    // Reads `size` bytes at virtual address `vaddr` from the file image; false when outside the file.
    bool readVaddr(uint64_t vaddr, void *out, size_t size) const;
    // The file bytes that back a loadable segment as readVaddr() reads them: from its file offset, at most to the
    // end of the file (a truncated file holds fewer than filesz). A read inside [vaddr, vaddr + filesz) that goes
    // past the bytes available fails.
    const uint8_t *segmentData(const Segment &s) const { return s.offset <= m_size ? m_data + s.offset : nullptr; }
    uint64_t segmentAvailable(const Segment &s) const { return s.offset <= m_size ? m_size - s.offset : 0; }
    // Virtual address of a file offset inside a loadable segment; false when not loaded.
    bool offsetToVaddr(uint64_t offset, uint64_t &vaddr) const;

private:
    ElfImage() = default;
    Status parse();

    std::string m_path;
    std::string m_buildId;
    const uint8_t *m_data = nullptr;
    size_t m_size = 0;
    bool m_mapped = false;
    std::string m_owned; // for in-memory images
    std::vector<Segment> m_segments;
    bool m_dynamic = false;
    uint64_t m_device = 0;
    uint64_t m_inode = 0;
    uint64_t m_ehFrameHdr = 0;
    uint64_t m_fdeTable = 0;
    uint64_t m_fdeCount = 0;
    const uint8_t *m_fdeTableBytes = nullptr;
};

// Lowercase hex of the GNU build id note of the ELF file open at `fd` (left open); "" if it has none or cannot be read.
std::string readElfBuildIdOf(int fd);

} // namespace emberline::engine
