#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

struct DecodedInstruction {
    uint64_t address = 0;
    std::vector<uint8_t> bytes;
    std::string text; // mnemonic and operands, Intel syntax on x86
};

// Machine code to instructions with capstone, for the ELF machines Emberline records (x86-64, i386, AArch64, ARM).
// Bytes capstone cannot decode become one-byte "(bad)" instructions, as objdump shows them, and decoding goes on
// after them: a listing never stops short of the function's end.
//
// Thread: any; each call has its own capstone handle.
Result<std::vector<DecodedInstruction>> decodeInstructions(int elfMachine, bool is64Bit, std::span<const uint8_t> code,
                                                           uint64_t address);

} // namespace emberline::engine
