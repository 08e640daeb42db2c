#include "engine/python/python_lines.h"

namespace emberline::engine {

namespace {

// A table byte read as the signed increment it stores (two's complement).
int signedByte(uint8_t b)
{
    return b < 128 ? b : b - 256;
}

} // namespace

int lineFromLnotab(int firstLine, const uint8_t *table, size_t size, int64_t offset)
{
    int line = firstLine;
    int64_t address = 0;
    for (size_t i = 0; i + 1 < size; i += 2) {
        address += table[i];
        if (address > offset)
            break;
        line += signedByte(table[i + 1]);
    }
    return line;
}

int lineFromPep626(int firstLine, const uint8_t *table, size_t size, int64_t offset)
{
    if (offset < 0)
        return firstLine;
    int line = firstLine;
    int64_t start = 0;
    for (size_t i = 0; i + 1 < size; i += 2) {
        const int64_t end = start + table[i];
        const int delta = signedByte(table[i + 1]);
        const bool noLine = delta == -128;
        if (!noLine)
            line += delta;
        if (offset < end)
            return noLine ? -1 : line;
        start = end;
    }
    return -1;
}

namespace {

// A varint of the location table at `pos`, advancing it; false when the table ends inside it.
bool readVarint(const uint8_t *table, size_t size, size_t &pos, uint32_t &value)
{
    value = 0;
    for (unsigned shift = 0; pos < size && shift < 32; shift += 6) {
        const uint8_t b = table[pos++];
        value |= static_cast<uint32_t>(b & 63) << shift;
        if (!(b & 64))
            return true;
    }
    return false;
}

bool readSignedVarint(const uint8_t *table, size_t size, size_t &pos, int &value)
{
    uint32_t raw = 0;
    if (!readVarint(table, size, pos, raw))
        return false;
    value = (raw & 1) ? -static_cast<int>(raw >> 1) : static_cast<int>(raw >> 1);
    return true;
}

} // namespace

int lineFromLocations(int firstLine, const uint8_t *table, size_t size, int64_t offset)
{
    if (offset < 0)
        return firstLine;
    const int64_t unit = offset / 2;
    int line = firstLine;
    int64_t start = 0;
    size_t pos = 0;
    while (pos < size) {
        const uint8_t head = table[pos++];
        if (!(head & 0x80))
            return -1; // not the start of an entry: the table is malformed
        const int code = (head >> 3) & 15;
        const int64_t length = (head & 7) + 1;
        bool noLine = false;
        if (code == 15) {
            noLine = true;
        } else if (code == 14 || code == 13) {
            int delta = 0;
            if (!readSignedVarint(table, size, pos, delta))
                return -1;
            line += delta;
            uint32_t skipped = 0;
            for (int i = 0; code == 14 && i < 3; ++i)
                if (!readVarint(table, size, pos, skipped))
                    return -1;
        } else if (code >= 10) {
            line += code - 10;
            pos += 2;
        } else {
            pos += 1;
        }
        if (unit < start + length)
            return noLine ? -1 : line;
        start += length;
    }
    return -1;
}

int lineForOffset(LineTableKind kind, int firstLine, const uint8_t *table, size_t size, int64_t offset)
{
    switch (kind) {
    case LineTableKind::Lnotab:
        return lineFromLnotab(firstLine, table, size, offset);
    case LineTableKind::Pep626:
        return lineFromPep626(firstLine, table, size, offset);
    case LineTableKind::Locations:
        return lineFromLocations(firstLine, table, size, offset);
    }
    return -1;
}

} // namespace emberline::engine
