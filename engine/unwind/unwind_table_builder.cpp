#include "engine/unwind/unwind_table_builder.h"
#include "engine/unwind/unwind_table_store.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace emberline::engine {
namespace {

using agent::UnwindKind;
using agent::UnwindRow;

constexpr int kRegRbp = 6;
constexpr int kRegRsp = 7;
constexpr uint64_t kMaxFdeRange = uint64_t(1) << 28;   // a function over 256 MiB is a corrupt FDE
constexpr uint64_t kMaxPltBytes = uint64_t(1) << 20;   // a PLT's entries are expanded into rows up to this size
constexpr int64_t kMaxRbpSlotBytes = int64_t(128) * 8; // what UnwindRow::rbpSlot holds

// How a register's rule reads, as dwarf_frame_register gives it.
bool isCfaPlus(const Dwarf_Op *ops, size_t nops, int64_t offset, bool value)
{
    const size_t base = offset != 0 ? 2 : 1;
    if (nops != base + (value ? 1 : 0) || ops[0].atom != DW_OP_call_frame_cfa)
        return false;
    if (offset != 0 && (ops[1].atom != DW_OP_plus_uconst || static_cast<int64_t>(ops[1].number) != offset))
        return false;
    return !value || ops[base].atom == DW_OP_stack_value;
}

// Why a register's rule is not one the table holds: an expression (libdw hands those out from the CFI itself,
// not from the caller's ops array), another register, or something else (an offset we do not take).
UnwindKind uncoveredRule(const Dwarf_Op *ops, size_t nops, const Dwarf_Op *opsMem)
{
    if (nops > 0 && ops != opsMem)
        return UnwindKind::Expression;
    if (nops == 1 && (ops[0].atom == DW_OP_regx || (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)))
        return UnwindKind::Register;
    return UnwindKind::Other;
}

// The CFA expression the linker writes for a lazy-binding .plt's 16-byte entries: RSP + base, plus 8 once the
// entry's push has run, from entry offset `split` on (DW_OP_breg7 base; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and;
// DW_OP_litN; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus). It depends on RIP only through RIP & 15, which a load
// bias (page-aligned) keeps, so two rows per entry say exactly what it says. The split; 0 for any other expression.
uint8_t pltRule(const Dwarf_Op *ops, size_t nops, int64_t &base)
{
    static constexpr uint8_t kShape[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, DW_OP_lit0,
                                         DW_OP_ge,    DW_OP_lit3,   DW_OP_shl,   DW_OP_plus};
    if (nops != std::size(kShape) || ops[1].number != 0 || ops[4].atom <= DW_OP_lit0 || ops[4].atom > DW_OP_lit15)
        return 0;
    for (size_t i = 0; i < nops; ++i) {
        if (i != 4 && ops[i].atom != kShape[i])
            return 0;
    }
    base = static_cast<int64_t>(ops[0].number);
    return static_cast<uint8_t>(ops[4].atom - DW_OP_lit0);
}

// One libdw row as a compact rule, or the reason it cannot be one.
UnwindSpan translate(Dwarf_Frame *frame)
{
    UnwindSpan span;
    Dwarf_Addr start = 0;
    Dwarf_Addr end = 0;
    bool signal = false;
    const int ra = dwarf_frame_info(frame, &start, &end, &signal);
    span.start = start;
    span.end = end;
    span.kind = UnwindKind::Other;
    if (ra < 0)
        return span;
    if (signal) {
        span.kind = UnwindKind::Signal;
        return span;
    }
    Dwarf_Op *ops = nullptr;
    size_t nops = 0;
    if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0)
        return span;
    uint64_t cfaRegister = kRegRsp;
    int64_t cfaOffset = 0;
    if (nops == 1 && ops[0].atom == DW_OP_bregx) {
        cfaRegister = ops[0].number;
        cfaOffset = static_cast<int64_t>(ops[0].number2);
    } else if ((span.pltSplit = pltRule(ops, nops, cfaOffset)) == 0 || cfaOffset > UINT16_MAX - 8) {
        span.kind = UnwindKind::Expression;
        return span;
    }
    if (cfaRegister != kRegRsp && cfaRegister != kRegRbp) {
        span.kind = UnwindKind::Register;
        return span;
    }
    if (cfaOffset < 8 || cfaOffset > UINT16_MAX)
        return span;

    Dwarf_Op mem[3];
    if (dwarf_frame_register(frame, ra, mem, &ops, &nops) != 0)
        return span;
    if (nops == 0 && ops != nullptr) { // undefined: the outermost frame
        span.kind = UnwindKind::End;
        return span;
    }
    if (!isCfaPlus(ops, nops, -8, false)) {
        span.kind = uncoveredRule(ops, nops, mem);
        return span;
    }
    // The caller's RSP is the CFA (the ABI's rule, which no compiler overrides).
    if (dwarf_frame_register(frame, kRegRsp, mem, &ops, &nops) != 0)
        return span;
    if (!isCfaPlus(ops, nops, 0, true)) {
        span.kind = uncoveredRule(ops, nops, mem);
        return span;
    }
    if (dwarf_frame_register(frame, kRegRbp, mem, &ops, &nops) != 0)
        return span;
    if (nops == 0 && ops != nullptr)
        return span;    // RBP undefined in the caller: a CFA from RBP above it would read garbage
    int8_t rbpSlot = 0; // no ops: the same value, RBP is the caller's still
    if (nops != 0) {
        if (nops != 2 || ops != mem || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst) {
            span.kind = uncoveredRule(ops, nops, mem);
            return span;
        }
        const auto offset = static_cast<int64_t>(ops[1].number);
        if (offset >= 0 || offset < -kMaxRbpSlotBytes || offset % 8 != 0)
            return span;
        rbpSlot = static_cast<int8_t>(offset / 8);
    }
    span.kind = cfaRegister == kRegRsp ? UnwindKind::CfaRsp : UnwindKind::CfaRbp;
    span.cfaOffset = static_cast<uint16_t>(cfaOffset);
    span.rbpSlot = rbpSlot;
    return span;
}

// The bytes of an encoded pointer (DW_EH_PE_* low nibble); 0 for a variable-length or unknown format.
size_t encodedSize(uint8_t encoding)
{
    switch (encoding & 0x0f) {
    case DW_EH_PE_absptr:
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
        return 8;
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4:
        return 4;
    case DW_EH_PE_udata2:
    case DW_EH_PE_sdata2:
        return 2;
    default:
        return 0;
    }
}

// The FDE pointer encoding a CIE's augmentation names ('R'); absptr when it names none. libdw decodes the
// augmentation data's length but leaves its fields to the caller; false when the augmentation is not understood.
bool fdeEncoding(const Dwarf_CIE &cie, uint8_t &encoding)
{
    encoding = DW_EH_PE_absptr;
    const char *aug = cie.augmentation;
    if (!aug || aug[0] == '\0')
        return true;
    if (aug[0] != 'z' || !cie.augmentation_data)
        return false;
    const uint8_t *p = cie.augmentation_data;
    const uint8_t *end = p + cie.augmentation_data_size;
    for (const char *a = aug + 1; *a; ++a) {
        if (*a == 'S' || *a == 'B')
            continue;
        if (p >= end)
            return false;
        const uint8_t byte = *p++;
        if (*a == 'R') {
            encoding = byte;
            return true;
        }
        if (*a == 'P') {
            const size_t size = encodedSize(byte);
            if (size == 0 || size_t(end - p) < size)
                return false;
            p += size;
        } else if (*a != 'L') {
            return false;
        }
    }
    return true;
}

bool readEncoded(const uint8_t *p, const uint8_t *end, uint8_t encoding, uint64_t fieldAddress, bool applyRelative,
                 uint64_t &value)
{
    const size_t size = encodedSize(encoding);
    if (size == 0 || size_t(end - p) < size)
        return false;
    const bool isSigned = (encoding & 0x08) != 0;
    if (size == 8) {
        std::memcpy(&value, p, 8);
    } else if (size == 4) {
        uint32_t v = 0;
        std::memcpy(&v, p, 4);
        value = isSigned ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))) : v;
    } else {
        uint16_t v = 0;
        std::memcpy(&v, p, 2);
        value = isSigned ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(v))) : v;
    }
    if (!applyRelative)
        return true;
    switch (encoding & 0x70) {
    case DW_EH_PE_absptr:
        return true;
    case DW_EH_PE_pcrel:
        value += fieldAddress;
        return true;
    default:
        return false;
    }
}

// A PLT row as two rows per 16-byte entry: before the entry's push and after it (pltRule).
void addPltEntries(const UnwindSpan &span, std::vector<UnwindSpan> &spans, UnwindTableStats &stats)
{
    if (span.kind != UnwindKind::CfaRsp || span.end - span.start > kMaxPltBytes) {
        spans.push_back(UnwindSpan{span.start, span.end, UnwindKind::Plt, 0, 0, 0});
        return;
    }
    for (uint64_t address = span.start; address < span.end;) {
        const uint64_t entry = address & ~uint64_t(15);
        const bool pushed = address >= entry + span.pltSplit;
        const uint64_t end = std::min(span.end, pushed ? entry + 16 : entry + span.pltSplit);
        spans.push_back(UnwindSpan{address, end, UnwindKind::CfaRsp,
                                   static_cast<uint16_t>(span.cfaOffset + (pushed ? 8 : 0)), span.rbpSlot, 0});
        stats.pltBytes += end - address;
        address = end;
    }
}

// One CFI section (.eh_frame or .debug_frame) and libdw's reader of it.
struct CfiSource {
    Dwarf_CFI *cfi = nullptr;
    Elf_Data *data = nullptr;
    uint64_t address = 0; // the section's virtual address (for pc-relative pointers)
    bool ehFrame = true;
};

// Every FDE of one source: its rows as spans. `skip` holds the FDE ranges an earlier source covered (sorted).
// libdw enumerates the entries (dwarf_next_cfi) and computes every row's rules (dwarf_cfi_addrframe), but it has no
// public call that gives an FDE's address range: the builder decodes those two encoded pointers itself (the CIE's
// 'R' encoding; pc-relative or absolute), and only those.
void readSource(const CfiSource &source, const unsigned char *ident,
                const std::vector<std::pair<uint64_t, uint64_t>> &skip, std::vector<UnwindSpan> &spans,
                std::vector<std::pair<uint64_t, uint64_t>> &ranges, UnwindTableStats &stats)
{
    std::map<Dwarf_Off, int> encodings; // CIE offset -> its FDE encoding, or -1 when not understood
    const auto *begin = static_cast<const uint8_t *>(source.data->d_buf);
    const uint8_t *sectionEnd = begin + source.data->d_size;
    Dwarf_Off offset = 0;
    while (offset != Dwarf_Off(-1) && offset < source.data->d_size) {
        Dwarf_Off next = 0;
        Dwarf_CFI_Entry entry;
        const int rc = dwarf_next_cfi(ident, source.data, source.ehFrame, offset, &next, &entry);
        if (rc == 1)
            break;
        if (rc != 0) {
            ++stats.unreadFdes;
            if (next <= offset) // no way on past it
                break;
            offset = next;
            continue;
        }
        const Dwarf_Off here = offset;
        offset = next;
        if (dwarf_cfi_cie_p(&entry)) {
            uint8_t encoding = 0;
            encodings[here] = fdeEncoding(entry.cie, encoding) ? encoding : -1;
            continue;
        }
        ++stats.fdes;
        auto cie = encodings.find(entry.fde.CIE_pointer);
        if (cie == encodings.end()) {
            Dwarf_Off unused = 0;
            Dwarf_CFI_Entry cieEntry;
            uint8_t encoding = 0;
            const bool ok =
                dwarf_next_cfi(ident, source.data, source.ehFrame, entry.fde.CIE_pointer, &unused, &cieEntry) == 0 &&
                dwarf_cfi_cie_p(&cieEntry) && fdeEncoding(cieEntry.cie, encoding);
            cie = encodings.emplace(entry.fde.CIE_pointer, ok ? encoding : -1).first;
        }
        const uint8_t encoding = source.ehFrame ? uint8_t(cie->second) : uint8_t(DW_EH_PE_absptr);
        const uint8_t *p = entry.fde.start;
        uint64_t start = 0;
        uint64_t range = 0;
        if (cie->second < 0 || p < begin || p > sectionEnd ||
            !readEncoded(p, sectionEnd, encoding, source.address + uint64_t(p - begin), true, start) ||
            !readEncoded(p + encodedSize(encoding), sectionEnd, encoding, 0, false, range) || range == 0 ||
            range > kMaxFdeRange || start > UINT32_MAX - range) {
            ++stats.unreadFdes;
            continue;
        }
        const uint64_t end = start + range;
        auto after = std::upper_bound(skip.begin(), skip.end(), std::make_pair(start, UINT64_MAX));
        if ((after != skip.end() && after->first < end) || (after != skip.begin() && std::prev(after)->second > start))
            continue; // .eh_frame covers it already
        if (!source.ehFrame)
            ++stats.debugFrameFdes;
        ranges.emplace_back(start, end);
        for (uint64_t address = start; address < end;) {
            Dwarf_Frame *frame = nullptr;
            if (dwarf_cfi_addrframe(source.cfi, address, &frame) != 0) {
                spans.push_back(UnwindSpan{address, end, UnwindKind::Other, 0, 0});
                break;
            }
            UnwindSpan span = translate(frame);
            std::free(frame);
            ++stats.dwarfRows;
            span.start = address;
            span.end = span.end > address ? std::min<uint64_t>(span.end, end) : end;
            if (span.pltSplit != 0)
                addPltEntries(span, spans, stats);
            else
                spans.push_back(span);
            address = span.end;
        }
    }
}

// The sections that hold code; PLT sections are marked so that their fallbacks are counted as such.
std::vector<CodeSection> executableSections(Elf *elf)
{
    std::vector<CodeSection> sections;
    size_t stringIndex = 0;
    if (elf_getshdrstrndx(elf, &stringIndex) != 0)
        return sections;
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR) || shdr.sh_size == 0 ||
            shdr.sh_type != SHT_PROGBITS)
            continue;
        const char *name = elf_strptr(elf, stringIndex, shdr.sh_name);
        sections.push_back(
            CodeSection{shdr.sh_addr, shdr.sh_addr + shdr.sh_size, name && std::strncmp(name, ".plt", 4) == 0});
    }
    std::sort(sections.begin(), sections.end(),
              [](const CodeSection &a, const CodeSection &b) { return a.start < b.start; });
    return sections;
}

// The libelf and libdw handles of one build, released in the right order whatever way the build ends.
struct Handles {
    int fd = -1;
    Elf *elf = nullptr;
    Dwarf *dwarf = nullptr;
    Dwarf_CFI *ehCfi = nullptr;

    Handles() = default;
    Handles(const Handles &) = delete;
    Handles &operator=(const Handles &) = delete;
    ~Handles()
    {
        if (ehCfi)
            dwarf_cfi_end(ehCfi);
        if (dwarf)
            dwarf_end(dwarf);
        if (elf)
            elf_end(elf);
        if (fd >= 0)
            ::close(fd);
    }
};

Elf_Scn *sectionNamed(Elf *elf, const char *wanted, GElf_Shdr &shdr)
{
    size_t stringIndex = 0;
    if (elf_getshdrstrndx(elf, &stringIndex) != 0)
        return nullptr;
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        const char *name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, stringIndex, shdr.sh_name) : nullptr;
        if (name && std::strcmp(name, wanted) == 0 && shdr.sh_type == SHT_PROGBITS)
            return scn;
    }
    return nullptr;
}

} // namespace

Result<std::shared_ptr<const ModuleUnwindTable>> buildUnwindTable(const std::string &path, std::string buildId)
{
    Handles h;
    h.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (h.fd < 0)
        return makeError(Error::Code::Io, path + ": " + std::strerror(errno));
    elf_version(EV_CURRENT);
    h.elf = elf_begin(h.fd, ELF_C_READ_MMAP, nullptr);
    GElf_Ehdr ehdr;
    if (!h.elf || elf_kind(h.elf) != ELF_K_ELF || !gelf_getehdr(h.elf, &ehdr))
        return makeError(Error::Code::Format, path + ": not an ELF file");
    if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64)
        return makeError(Error::Code::Unsupported, path + ": not an x86-64 ELF file");
    const auto *ident = reinterpret_cast<const unsigned char *>(elf_getident(h.elf, nullptr));

    auto table = std::make_shared<ModuleUnwindTable>();
    table->path = path;
    table->buildId = std::move(buildId);
    UnwindTableStats &stats = table->stats;
    std::vector<UnwindSpan> spans;
    std::vector<std::pair<uint64_t, uint64_t>> ehRanges;
    std::vector<std::pair<uint64_t, uint64_t>> debugRanges;
    bool anySource = false;

    GElf_Shdr shdr;
    if (Elf_Scn *scn = sectionNamed(h.elf, ".eh_frame", shdr)) {
        h.ehCfi = dwarf_getcfi_elf(h.elf);
        Elf_Data *data = elf_getdata(scn, nullptr);
        if (h.ehCfi && data && data->d_buf) {
            anySource = true;
            readSource(CfiSource{h.ehCfi, data, shdr.sh_addr, true}, ident, {}, spans, ehRanges, stats);
        }
    }
    if (sectionNamed(h.elf, ".debug_frame", shdr)) {
        // libdw reads (and if need be decompresses) .debug_frame once it opened the file's DWARF.
        h.dwarf = dwarf_begin_elf(h.elf, DWARF_C_READ, nullptr);
        Dwarf_CFI *cfi = h.dwarf ? dwarf_getcfi(h.dwarf) : nullptr;
        Elf_Scn *scn = sectionNamed(h.elf, ".debug_frame", shdr);
        Elf_Data *data = scn && !(shdr.sh_flags & SHF_COMPRESSED) ? elf_getdata(scn, nullptr) : nullptr;
        if (cfi && data && data->d_buf) {
            anySource = true;
            std::sort(ehRanges.begin(), ehRanges.end());
            readSource(CfiSource{cfi, data, 0, false}, ident, ehRanges, spans, debugRanges, stats);
        }
    }
    if (!anySource)
        return makeError(Error::Code::Unsupported, path + ": no unwind information (.eh_frame, .debug_frame)");
    table->rows = layOutUnwindRows(std::move(spans), executableSections(h.elf), stats);
    return std::shared_ptr<const ModuleUnwindTable>(std::move(table));
}

std::vector<uint8_t> ModuleUnwindTable::sharedBytes() const
{
    const agent::UnwindTableHeader header{agent::kUnwindTableMagic, agent::kUnwindTableVersion,
                                          static_cast<uint32_t>(rows.size()), 0};
    std::vector<uint8_t> bytes(sizeof(header) + rows.size() * sizeof(UnwindRow));
    std::memcpy(bytes.data(), &header, sizeof(header));
    if (!rows.empty())
        std::memcpy(bytes.data() + sizeof(header), rows.data(), rows.size() * sizeof(UnwindRow));
    return bytes;
}

Result<std::shared_ptr<const ModuleUnwindTable>> UnwindTableCache::get(const std::string &path)
{
    const std::shared_ptr<const ElfImage> image = m_elfs.get(path);
    if (!image)
        return makeError(Error::Code::Format, path + ": not an ELF file");
    const std::string key = !image->buildId().empty()
                                ? image->buildId()
                                : path + ':' + std::to_string(image->device()) + ':' + std::to_string(image->inode());
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_tables.find(key); it != m_tables.end())
            return it->second;
    }
    Result<std::shared_ptr<const ModuleUnwindTable>> built = makeError(Error::Code::Format, path + ": no unwind table");
    if (auto stored = loadStoredUnwindTable(m_storeDirectory, image->buildId(), path)) {
        built = std::move(stored);
    } else {
        built = buildUnwindTable(path, image->buildId());
        if (built.ok() && !image->buildId().empty())
            (void)storeUnwindTable(m_storeDirectory, *built.value());
    }
    std::lock_guard lock(m_mutex);
    return m_tables.emplace(key, std::move(built)).first->second; // a table another worker built meanwhile wins
}

size_t UnwindTableCache::size() const
{
    std::lock_guard lock(m_mutex);
    return m_tables.size();
}

} // namespace emberline::engine
