#include "engine/annotate/disassembler.h"

#include <capstone/capstone.h>
#include <elf.h>

namespace emberline::engine {
namespace {

struct Target {
    cs_arch arch;
    cs_mode mode;
};

Result<Target> targetOf(int elfMachine, bool is64Bit)
{
    switch (elfMachine) {
    case EM_X86_64:
        return Target{CS_ARCH_X86, is64Bit ? CS_MODE_64 : CS_MODE_32};
    case EM_386:
        return Target{CS_ARCH_X86, CS_MODE_32};
    case EM_AARCH64:
        return Target{CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN};
    case EM_ARM:
        return Target{CS_ARCH_ARM, CS_MODE_ARM};
    default:
        return makeError(Error::Code::Unsupported,
                         "machine code of ELF machine " + std::to_string(elfMachine) + " cannot be disassembled");
    }
}

// Owns a capstone handle.
class Handle {
public:
    explicit Handle(Target target) { m_ok = cs_open(target.arch, target.mode, &m_handle) == CS_ERR_OK; }
    ~Handle()
    {
        if (m_ok)
            cs_close(&m_handle);
    }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    bool ok() const { return m_ok; }
    csh get() const { return m_handle; }

private:
    csh m_handle = 0;
    bool m_ok = false;
};

} // namespace

Result<std::vector<DecodedInstruction>> decodeInstructions(int elfMachine, bool is64Bit, std::span<const uint8_t> code,
                                                           uint64_t address)
{
    auto target = targetOf(elfMachine, is64Bit);
    if (!target)
        return target.error();
    Handle handle(target.value());
    if (!handle.ok())
        return makeError(Error::Code::Internal, "capstone could not open a disassembler");
    cs_insn *insn = cs_malloc(handle.get());
    if (insn == nullptr)
        return makeError(Error::Code::Internal, "capstone: out of memory");
    std::vector<DecodedInstruction> out;
    const uint8_t *bytes = code.data();
    size_t size = code.size();
    uint64_t pc = address;
    while (size > 0) {
        if (cs_disasm_iter(handle.get(), &bytes, &size, &pc, insn)) {
            DecodedInstruction decoded;
            decoded.address = insn->address;
            decoded.bytes.assign(insn->bytes, insn->bytes + insn->size);
            decoded.text = insn->op_str[0] != '\0' ? std::string(insn->mnemonic) + ' ' + insn->op_str : insn->mnemonic;
            out.push_back(std::move(decoded));
            continue;
        }
        out.push_back({pc, {*bytes}, "(bad)"});
        ++bytes;
        --size;
        ++pc;
    }
    cs_free(insn, 1);
    return out;
}

} // namespace emberline::engine
