#pragma once

#include <cstdint>
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

} // namespace emberline::engine
