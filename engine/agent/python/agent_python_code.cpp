// What names a code object, for the session (agent_python.h's pythonCodeTag and pythonCodeFacts): read in place, as
// the walk reads frames (agent_python_read.h).
//
// Thread: any; touches nothing shared. No allocation, no lock, no system call.

#include "engine/agent/python/agent_python.h"
#include "engine/agent/python/agent_python_read.h"

namespace emberline::agent {
namespace {

using engine::kPyAbsent;
using engine::PythonLayout;
using namespace python_read;

// Longer strings or line tables than these are not a real code object's.
constexpr uint64_t kMaxStringChars = 1u << 20;
constexpr uint64_t kMaxTableBytes = 1u << 24;

} // namespace

uint32_t pythonCodeTag(const PythonTarget &target, uint64_t code)
{
    const PythonLayout &l = target.layout;
    if (!readableCode(target, code))
        return 0;
    const uint32_t nameField = l.codeQualname != kPyAbsent ? l.codeQualname : l.codeName;
    const uint64_t parts[5] = {
        code,
        nameField != kPyAbsent ? loadPointer(code, nameField) : 0,
        l.codeFilename != kPyAbsent ? loadPointer(code, l.codeFilename) : 0,
        l.codeLineTable != kPyAbsent ? loadPointer(code, l.codeLineTable) : 0,
        l.codeFirstLineno != kPyAbsent ? uint64_t(uint32_t(load<int32_t>(code + l.codeFirstLineno))) : 0,
    };
    // Each part multiplied by an odd constant of its own (independent multiplies: every sample's every frame takes a
    // tag), then one xorshift-multiply finish (MurmurHash3's 64-bit finalizer's constants) over their sum.
    constexpr uint64_t kOdd[5] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                                  0xd6e8feb86659fd93ull, 0xff51afd7ed558ccdull};
    uint64_t h = 0;
    for (int i = 0; i < 5; ++i)
        h += (parts[i] ^ uint64_t(i)) * kOdd[i];
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    const uint32_t tag = static_cast<uint32_t>(h ^ (h >> 32));
    return tag ? tag : 1;
}

namespace {

// Where a string's characters are and how many bytes they take; 0 bytes for a string that is not compact or that
// cannot be read.
struct StringData {
    uint64_t data = 0;
    uint64_t bytes = 0;
    uint8_t kind = 1;
};

StringData stringData(const PythonLayout &l, uint64_t unicode)
{
    StringData s;
    if (!plausible(unicode) || l.unicodeState == kPyAbsent || l.unicodeLength == kPyAbsent)
        return s;
    const uint32_t state = load<uint32_t>(unicode + l.unicodeState);
    const int64_t length = load<int64_t>(unicode + l.unicodeLength);
    if (!(state & l.unicodeCompactBit) || length < 0 || uint64_t(length) > kMaxStringChars)
        return s;
    if (state & l.unicodeAsciiBit) {
        if (l.unicodeAsciiData == kPyAbsent)
            return s;
        s.data = unicode + l.unicodeAsciiData;
        s.bytes = uint64_t(length);
        return s;
    }
    const uint32_t kind = (state >> l.unicodeKindShift) & 7;
    if (l.unicodeCompactData == kPyAbsent || (kind != 1 && kind != 2 && kind != 4))
        return s;
    s.data = unicode + l.unicodeCompactData;
    s.bytes = uint64_t(length) * kind;
    s.kind = static_cast<uint8_t>(kind);
    return s;
}

// Copies what fits of `bytes` bytes at `from` to `to`, whole characters of `unit` bytes; returns the bytes copied.
// Once a part was cut, the parts after it are left empty.
uint64_t copyCut(uint8_t *to, uint64_t room, uint64_t from, uint64_t bytes, uint64_t unit, uint8_t &cut)
{
    if (cut)
        return 0;
    uint64_t n = bytes;
    if (n > room) {
        n = room - room % unit;
        cut = 1;
    }
    const auto *src = reinterpret_cast<const uint8_t *>(from); // NOLINT(performance-no-int-to-ptr): as load()
    for (uint64_t i = 0; i < n; ++i)
        to[i] = src[i];
    return n;
}

} // namespace

size_t pythonCodeFacts(const PythonTarget &target, uint64_t code, void *out, size_t room)
{
    const PythonLayout &l = target.layout;
    if (room < sizeof(PythonCodeFacts) || !readableCode(target, code))
        return 0;
    const uint32_t nameField = l.codeQualname != kPyAbsent ? l.codeQualname : l.codeName;
    const StringData name = nameField != kPyAbsent ? stringData(l, loadPointer(code, nameField)) : StringData{};
    const StringData file =
        l.codeFilename != kPyAbsent ? stringData(l, loadPointer(code, l.codeFilename)) : StringData{};
    uint64_t table = 0;
    uint64_t tableBytes = 0;
    if (l.codeLineTable != kPyAbsent && l.bytesSize != kPyAbsent && l.bytesData != kPyAbsent) {
        const uint64_t bytes = loadPointer(code, l.codeLineTable);
        const int64_t size = plausible(bytes) ? load<int64_t>(bytes + l.bytesSize) : -1;
        if (size >= 0 && uint64_t(size) <= kMaxTableBytes) {
            table = bytes + l.bytesData;
            tableBytes = uint64_t(size);
        }
    }

    PythonCodeFacts facts{};
    facts.code = code;
    facts.tag = pythonCodeTag(target, code);
    facts.firstLine = l.codeFirstLineno != kPyAbsent ? load<int32_t>(code + l.codeFirstLineno) : 0;
    facts.nameKind = name.kind;
    facts.fileKind = file.kind;
    auto *bytes = static_cast<uint8_t *>(out);
    uint64_t at = sizeof facts;
    facts.nameBytes =
        static_cast<uint32_t>(copyCut(bytes + at, room - at, name.data, name.bytes, name.kind, facts.cut));
    at += facts.nameBytes;
    facts.fileBytes =
        static_cast<uint32_t>(copyCut(bytes + at, room - at, file.data, file.bytes, file.kind, facts.cut));
    at += facts.fileBytes;
    facts.lineTableBytes = static_cast<uint32_t>(copyCut(bytes + at, room - at, table, tableBytes, 1, facts.cut));
    at += facts.lineTableBytes;
    __builtin_memcpy(out, &facts, sizeof facts);
    return at;
}

} // namespace emberline::agent
