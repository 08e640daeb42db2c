#pragma once

#include "engine/unwind/elf_image.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace emberline::engine {

// Opens each ELF file once and hands out the same image to every process and every sample that needs it.
//
// Thread: internally locked; used by the session thread (unwinding) and the exporter (build ids).
class ElfCache {
public:
    // nullptr when the file cannot be read as ELF (anonymous, deleted, not ELF); failures are remembered.
    std::shared_ptr<const ElfImage> get(const std::string &path);
    // The image of `path` as the file with this inode: when the cached image is of another file (the path was
    // replaced on disk since it was opened) and the file now at the path is the one asked for, that file is
    // opened and cached instead. nullptr when the file at the path is not that inode (it was replaced after the
    // process mapped it). An inode of 0 means any; a file unchanged since it was opened is taken whatever inode
    // /proc shows (overlay filesystems show another one there than stat does).
    std::shared_ptr<const ElfImage> get(const std::string &path, uint64_t inode);
    std::shared_ptr<const ElfImage> vdso();
    size_t size() const;

private:
    mutable std::mutex m_mutex;
    std::map<std::string, std::shared_ptr<const ElfImage>> m_images;
    std::shared_ptr<const ElfImage> m_vdso;
    bool m_vdsoTried = false;
};

} // namespace emberline::engine
