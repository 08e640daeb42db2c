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

} // namespace emberline::engine
