#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

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

// Blanks as text formats mean them: spaces and tabs. These scan a byte at a time; string_view's
// find_first_of(" \t") looks each byte up in the set with a call of its own, which shows on a gigabyte of text.
inline bool isBlank(char c)
{
    return c == ' ' || c == '\t';
}

// `s` without its leading blanks.
inline std::string_view skipBlanks(std::string_view s)
{
    size_t i = 0;
    while (i < s.size() && isBlank(s[i]))
        ++i;
    return s.substr(i);
}

// `s` without its trailing blanks.
inline std::string_view trimTrailingBlanks(std::string_view s)
{
    while (!s.empty() && isBlank(s.back()))
        s.remove_suffix(1);
    return s;
}

// The index of the first blank in `s`, or s.size() when there is none.
inline size_t firstBlank(std::string_view s)
{
    size_t i = 0;
    while (i < s.size() && !isBlank(s[i]))
        ++i;
    return i;
}

} // namespace emberline::engine
