#pragma once

#include <algorithm>
#include <cstdint>
#include <fcntl.h>
#include <gelf.h>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

// Reads what the symbolizer tests need to know about an ELF file (or image in memory) independently of the
// symbolizer: symbol addresses from .symtab and .dynsym, the PT_LOAD layout to turn an address into a file
// offset, and the build id note. Plain libelf, so that a symbolizer bug cannot hide in the expectations.
class ElfTestImage {
public:
    struct Symbol {
        std::string name;
        uint64_t address = 0;
        uint64_t size = 0;
        bool function = false;
    };

    static std::optional<ElfTestImage> fromFile(const std::string &path)
    {
        elf_version(EV_CURRENT);
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return std::nullopt;
        Elf *elf = elf_begin(fd, ELF_C_READ, nullptr);
        std::optional<ElfTestImage> image;
        if (elf != nullptr && elf_kind(elf) == ELF_K_ELF)
            image = read(elf);
        elf_end(elf);
        ::close(fd);
        return image;
    }

    static std::optional<ElfTestImage> fromMemory(const void *data, size_t size)
    {
        elf_version(EV_CURRENT);
        std::string copy(static_cast<const char *>(data), size);
        Elf *elf = elf_memory(copy.data(), copy.size());
        std::optional<ElfTestImage> image;
        if (elf != nullptr && elf_kind(elf) == ELF_K_ELF)
            image = read(elf);
        elf_end(elf);
        return image;
    }

    std::optional<uint64_t> address(const std::string &symbolName) const
    {
        auto it = m_symbols.find(symbolName);
        return it == m_symbols.end() ? std::nullopt : std::optional<uint64_t>(it->second.address);
    }

    // The inverse of what the symbolizer does: address -> offset in the file, through PT_LOAD.
    std::optional<uint64_t> fileOffset(uint64_t address) const
    {
        for (const GElf_Phdr &segment : m_loads) {
            if (address >= segment.p_vaddr && address - segment.p_vaddr < segment.p_filesz)
                return address - segment.p_vaddr + segment.p_offset;
        }
        return std::nullopt;
    }

    std::optional<uint64_t> symbolFileOffset(const std::string &symbolName) const
    {
        const std::optional<uint64_t> symbolAddress = address(symbolName);
        return symbolAddress ? fileOffset(*symbolAddress) : std::nullopt;
    }

    // Defined functions with a size, by name (one entry per name).
    std::vector<Symbol> functions() const
    {
        std::vector<Symbol> result;
        for (const auto &[name, symbol] : m_symbols) {
            if (symbol.function && symbol.size > 0)
                result.push_back(symbol);
        }
        return result;
    }

    const std::string &buildId() const { return m_buildId; }
    uint16_t type() const { return m_type; }
    bool hasSection(const std::string &name) const
    {
        return std::find(m_sections.begin(), m_sections.end(), name) != m_sections.end();
    }

private:
    static ElfTestImage read(Elf *elf)
    {
        ElfTestImage image;
        GElf_Ehdr header;
        if (gelf_getehdr(elf, &header) != nullptr)
            image.m_type = header.e_type;
        size_t count = 0;
        elf_getphdrnum(elf, &count);
        for (size_t i = 0; i < count; ++i) {
            GElf_Phdr segment;
            if (gelf_getphdr(elf, static_cast<int>(i), &segment) != nullptr && segment.p_type == PT_LOAD)
                image.m_loads.push_back(segment);
        }
        for (Elf_Scn *section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
            GElf_Shdr sectionHeader;
            if (gelf_getshdr(section, &sectionHeader) == nullptr)
                continue;
            size_t names = 0;
            if (elf_getshdrstrndx(elf, &names) == 0) {
                if (const char *name = elf_strptr(elf, names, sectionHeader.sh_name))
                    image.m_sections.emplace_back(name);
            }
            if (sectionHeader.sh_type == SHT_SYMTAB || sectionHeader.sh_type == SHT_DYNSYM)
                image.readSymbols(elf, section, sectionHeader);
            else if (sectionHeader.sh_type == SHT_NOTE)
                image.readBuildIdNote(section);
        }
        return image;
    }

    void readSymbols(Elf *elf, Elf_Scn *section, const GElf_Shdr &sectionHeader)
    {
        Elf_Data *data = elf_getdata(section, nullptr);
        const size_t count = sectionHeader.sh_entsize != 0 ? sectionHeader.sh_size / sectionHeader.sh_entsize : 0;
        for (size_t i = 0; data != nullptr && i < count; ++i) {
            GElf_Sym symbol;
            if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr || symbol.st_shndx == SHN_UNDEF)
                continue;
            const char *name = elf_strptr(elf, sectionHeader.sh_link, symbol.st_name);
            if (name == nullptr || *name == '\0')
                continue;
            m_symbols.emplace(name,
                              Symbol{name, symbol.st_value, symbol.st_size, GELF_ST_TYPE(symbol.st_info) == STT_FUNC});
        }
    }

    void readBuildIdNote(Elf_Scn *section)
    {
        Elf_Data *data = elf_getdata(section, nullptr);
        GElf_Nhdr note;
        size_t offset = 0;
        size_t nameOffset = 0;
        size_t descriptorOffset = 0;
        while (data != nullptr && (offset = gelf_getnote(data, offset, &note, &nameOffset, &descriptorOffset)) > 0) {
            if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4) {
                static const char digits[] = "0123456789abcdef";
                const auto *bytes = static_cast<const unsigned char *>(data->d_buf) + descriptorOffset;
                m_buildId.clear();
                for (size_t i = 0; i < note.n_descsz; ++i) {
                    m_buildId.push_back(digits[bytes[i] >> 4]);
                    m_buildId.push_back(digits[bytes[i] & 0xf]);
                }
            }
        }
    }

    std::map<std::string, Symbol> m_symbols;
    std::vector<GElf_Phdr> m_loads;
    std::string m_buildId;
    std::vector<std::string> m_sections;
    uint16_t m_type = 0;
};
