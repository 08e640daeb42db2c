#include "engine/unwind/elf_cache.h"

#include <elf.h>
#include <sys/auxv.h>

#include <algorithm>

namespace emberline::engine {

std::shared_ptr<const ElfImage> ElfCache::get(const std::string &path)
{
    std::lock_guard lock(m_mutex);
    auto it = m_images.find(path);
    if (it != m_images.end())
        return it->second;
    std::shared_ptr<const ElfImage> image;
    if (!path.empty() && path[0] == '/') {
        if (auto opened = ElfImage::open(path))
            image = std::move(opened).value();
    }
    m_images.emplace(path, image);
    return image;
}

std::shared_ptr<const ElfImage> ElfCache::get(const std::string &path, uint64_t inode)
{
    std::shared_ptr<const ElfImage> image = get(path);
    if (inode == 0 || !image || image->inode() == inode)
        return image;
    std::shared_ptr<const ElfImage> reopened;
    if (auto opened = ElfImage::open(path))
        reopened = std::move(opened).value();
    if (reopened && reopened->inode() == image->inode()) {
        // The file did not change since it was opened: the numbers differ by the filesystem (an overlay reports
        // another inode in /proc than stat does), not by a replacement, which /proc shows as " (deleted)".
        return image;
    }
    if (!reopened || reopened->inode() != inode)
        return nullptr;
    std::lock_guard lock(m_mutex);
    m_images[path] = reopened;
    return reopened;
}

std::shared_ptr<const ElfImage> ElfCache::vdso()
{
    std::lock_guard lock(m_mutex);
    if (!m_vdsoTried) {
        m_vdsoTried = true;
        // Every process runs the kernel's one vdso; ours has the same bytes as the target's.
        // NOLINTNEXTLINE(performance-no-int-to-ptr): the auxiliary vector gives the vdso's address as a number
        if (const auto *base = reinterpret_cast<const unsigned char *>(getauxval(AT_SYSINFO_EHDR))) {
            const auto *ehdr = reinterpret_cast<const Elf64_Ehdr *>(base);
            const auto *phdrs = reinterpret_cast<const Elf64_Phdr *>(base + ehdr->e_phoff);
            uint64_t size = 0;
            for (int i = 0; i < ehdr->e_phnum; ++i) {
                if (phdrs[i].p_type == PT_LOAD)
                    size = std::max<uint64_t>(size, phdrs[i].p_offset + phdrs[i].p_filesz);
            }
            size = std::max<uint64_t>(size, ehdr->e_shoff + uint64_t(ehdr->e_shnum) * ehdr->e_shentsize);
            if (auto image = ElfImage::fromMemory("[vdso]", base, size))
                m_vdso = std::move(image).value();
        }
    }
    return m_vdso;
}

size_t ElfCache::size() const
{
    std::lock_guard lock(m_mutex);
    return m_images.size();
}

} // namespace emberline::engine
