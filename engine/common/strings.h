#pragma once

#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <string>

namespace emberline::engine {

// The last component of a path ("/usr/lib/libc.so.6" -> "libc.so.6").
inline std::string baseName(const std::string &path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// An address or offset as people write it: "0x7f3a".
inline std::string hexAddress(uint64_t value)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
    return buf;
}

// Bytes as lowercase hex digits, two per byte (a GNU build id as tools print it).
inline std::string hexBytes(const unsigned char *bytes, size_t length)
{
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(length * 2);
    for (size_t i = 0; i < length; ++i) {
        hex.push_back(digits[bytes[i] >> 4]);
        hex.push_back(digits[bytes[i] & 0xf]);
    }
    return hex;
}

// A hex string with its letters in lowercase (build ids compare so).
inline std::string lowercaseHex(std::string text)
{
    for (char &c : text) {
        if (c >= 'A' && c <= 'F')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return text;
}

} // namespace emberline::engine
