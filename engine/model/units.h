#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace emberline::engine {

// Formats a sample value for people: nanoseconds as ns/µs/ms/s, bytes as B/KiB/MiB/GiB, counts with
// thousands kept plain. `unit` is the pprof unit string of the sample type.
std::string formatValue(int64_t value, std::string_view unit);
// A share of a total as "12.34%", or "-" when the total is zero.
std::string formatPercent(int64_t part, int64_t total);
// A change of value with its sign: "+1.20 ms", "-35", "0".
std::string formatChange(int64_t change, std::string_view unit);
// A change relative to the base as "+12.5%" / "-3.0%", "new" when the base is 0 and the new is not, "0.0%"
// when unchanged (both 0 or equal).
std::string formatChangePercent(int64_t base, int64_t next);
// A factor as "4.2×" (two significant decimals below 10).
std::string formatRatio(double ratio);

} // namespace emberline::engine
