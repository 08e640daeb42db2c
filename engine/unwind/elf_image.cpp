#include "engine/unwind/elf_image.h"

#include "engine/common/strings.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace emberline::engine {
namespace {

constexpr uint8_t kDwEhPeOmit = 0xff;
constexpr uint8_t kDwEhPeUdata4 = 0x03;
constexpr uint8_t kDwEhPeSdata4 = 0x0b;
constexpr uint8_t kDwEhPeDatarel = 0x30;

} // namespace

Result<std::shared_ptr<const ElfImage>> ElfImage::open(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(Error::Code::Io, path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
        ::close(fd);
        return makeError(Error::Code::Format, path + ": not an ELF file");
    }
    void *data = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (data == MAP_FAILED)
        return makeError(Error::Code::Io, path + ": mmap failed: " + std::strerror(errno));
    std::shared_ptr<ElfImage> image(new ElfImage);
    image->m_path = path;
    image->m_data = static_cast<const uint8_t *>(data);
    image->m_size = static_cast<size_t>(st.st_size);
    image->m_mapped = true;
    image->m_device = static_cast<uint64_t>(st.st_dev);
    image->m_inode = static_cast<uint64_t>(st.st_ino);
    if (auto status = image->parse(); !status)
        return status.error();
    return std::shared_ptr<const ElfImage>(std::move(image));
}

Result<std::shared_ptr<const ElfImage>> ElfImage::fromMemory(std::string name, const void *data, size_t size)
{
    std::shared_ptr<ElfImage> image(new ElfImage);
    image->m_path = std::move(name);
    image->m_owned.assign(static_cast<const char *>(data), size);
    image->m_data = reinterpret_cast<const uint8_t *>(image->m_owned.data());
    image->m_size = size;
    if (auto status = image->parse(); !status)
        return status.error();
    return std::shared_ptr<const ElfImage>(std::move(image));
}

ElfImage::~ElfImage()
{
    if (m_mapped && m_data)
        ::munmap(const_cast<uint8_t *>(m_data), m_size);
}

Status ElfImage::parse()
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory(reinterpret_cast<char *>(const_cast<uint8_t *>(m_data)), m_size);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        if (elf)
            elf_end(elf);
        return makeError(Error::Code::Format, m_path + ": not an ELF file");
    }
    GElf_Ehdr ehdr;
    if (!gelf_getehdr(elf, &ehdr) || ehdr.e_ident[EI_CLASS] != ELFCLASS64) {
        elf_end(elf);
        return makeError(Error::Code::Unsupported, m_path + ": not a 64-bit ELF file");
    }
    m_dynamic = ehdr.e_type == ET_DYN;
    size_t phnum = 0;
    elf_getphdrnum(elf, &phnum);
    for (size_t i = 0; i < phnum; ++i) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, static_cast<int>(i), &ph))
            continue;
        if (ph.p_type == PT_LOAD) {
            m_segments.push_back(Segment{ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, (ph.p_flags & PF_X) != 0});
        } else if (ph.p_type == PT_GNU_EH_FRAME) {
            m_ehFrameHdr = ph.p_vaddr;
        } else if (ph.p_type == PT_NOTE && m_buildId.empty()) {
            Elf_Data *notes = elf_getdata_rawchunk(elf, static_cast<int64_t>(ph.p_offset), ph.p_filesz, ELF_T_NHDR);
            GElf_Nhdr nhdr;
            size_t offset = 0, nameOff = 0, descOff = 0;
            while (notes && (offset = gelf_getnote(notes, offset, &nhdr, &nameOff, &descOff)) > 0) {
                if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
                    std::memcmp(static_cast<const char *>(notes->d_buf) + nameOff, "GNU", 4) == 0) {
                    m_buildId = hexBytes(static_cast<const uint8_t *>(notes->d_buf) + descOff, nhdr.n_descsz);
                    break;
                }
            }
        }
    }
    elf_end(elf);

    // .eh_frame_hdr: version 1, then encodings of eh_frame_ptr, fde_count and the table; the table must be
    // datarel|sdata4 for the binary search libunwind performs.
    uint8_t hdr[4];
    if (m_ehFrameHdr && readVaddr(m_ehFrameHdr, hdr, 4) && hdr[0] == 1 && hdr[2] == kDwEhPeUdata4 &&
        hdr[3] == (kDwEhPeDatarel | kDwEhPeSdata4) && hdr[1] != kDwEhPeOmit) {
        uint32_t count = 0;
        // eh_frame_ptr is 4 bytes in every encoding toolchains emit (pcrel|sdata4).
        if (readVaddr(m_ehFrameHdr + 8, &count, 4)) {
            m_fdeCount = count;
            m_fdeTable = m_ehFrameHdr + 12;
        }
    }
    if (!m_fdeCount)
        m_ehFrameHdr = 0;
    for (const Segment &s : m_segments) {
        if (m_fdeCount && m_fdeTable >= s.vaddr && m_fdeTable + m_fdeCount * 8 <= s.vaddr + s.filesz) {
            const uint64_t off = s.offset + (m_fdeTable - s.vaddr);
            if (off + m_fdeCount * 8 <= m_size)
                m_fdeTableBytes = m_data + off;
            break; // the segment readVaddr() would read the table from
        }
    }
    return Ok{};
}

bool ElfImage::readVaddr(uint64_t vaddr, void *out, size_t size) const
{
    // Written so that no sum wraps around: an address just below a segment (a bias applied to an address of
    // another image) must not pass for one inside it.
    for (const Segment &s : m_segments) {
        if (vaddr >= s.vaddr && size <= s.filesz && vaddr - s.vaddr <= s.filesz - size) {
            const uint64_t off = s.offset + (vaddr - s.vaddr);
            if (off > m_size || size > m_size - off)
                return false;
            std::memcpy(out, m_data + off, size);
            return true;
        }
    }
    return false;
}

bool ElfImage::offsetToVaddr(uint64_t offset, uint64_t &vaddr) const
{
    for (const Segment &s : m_segments) {
        if (offset >= s.offset && offset < s.offset + s.filesz) {
            vaddr = s.vaddr + (offset - s.offset);
            return true;
        }
    }
    return false;
}

std::string readElfBuildIdOf(int fd)
{
    static const bool initialised = elf_version(EV_CURRENT) != EV_NONE;
    (void)initialised;
    std::string buildId;
    if (Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
        const void *bits = nullptr;
        const ssize_t length = dwelf_elf_gnu_build_id(elf, &bits);
        if (length > 0)
            buildId = hexBytes(static_cast<const unsigned char *>(bits), static_cast<size_t>(length));
        elf_end(elf);
    }
    return buildId;
}

} // namespace emberline::engine
