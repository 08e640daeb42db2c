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
    std::shared_ptr<const ElfImage> vdso();
    size_t size() const;

private:
    mutable std::mutex m_mutex;
    std::map<std::string, std::shared_ptr<const ElfImage>> m_images;
    std::shared_ptr<const ElfImage> m_vdso;
    bool m_vdsoTried = false;
};

} // namespace emberline::engine
