#include "engine/model/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace emberline::engine {
namespace {

std::string scaled(double v, const char *suffix)
{
    char buf[48];
    const double a = std::fabs(v);
    if (a >= 100)
        std::snprintf(buf, sizeof buf, "%.0f %s", v, suffix);
    else if (a >= 10)
        std::snprintf(buf, sizeof buf, "%.1f %s", v, suffix);
    else
        std::snprintf(buf, sizeof buf, "%.2f %s", v, suffix);
    return buf;
}

} // namespace

std::string formatValue(int64_t value, std::string_view unit)
{
    const double v = static_cast<double>(value);
    const double a = std::fabs(v);
    if (unit == "nanoseconds" || unit == "ns") {
        if (a >= 1e9)
            return scaled(v / 1e9, "s");
        if (a >= 1e6)
            return scaled(v / 1e6, "ms");
        if (a >= 1e3)
            return scaled(v / 1e3, "µs");
        return std::to_string(value) + " ns";
    }
    if (unit == "microseconds")
        return formatValue(value * 1000, "nanoseconds");
    if (unit == "milliseconds")
        return formatValue(value * 1000000, "nanoseconds");
    if (unit == "bytes") {
        if (a >= 1024.0 * 1024 * 1024)
            return scaled(v / (1024.0 * 1024 * 1024), "GiB");
        if (a >= 1024.0 * 1024)
            return scaled(v / (1024.0 * 1024), "MiB");
        if (a >= 1024.0)
            return scaled(v / 1024.0, "KiB");
        return std::to_string(value) + " B";
    }
    return std::to_string(value);
}

std::string formatPercent(int64_t part, int64_t total)
{
    if (total == 0)
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * static_cast<double>(part) / static_cast<double>(total));
    return buf;
}

std::string formatChange(int64_t change, std::string_view unit)
{
    return change > 0 ? "+" + formatValue(change, unit) : formatValue(change, unit);
}

std::string formatChangePercent(int64_t base, int64_t next)
{
    // Unchanged is "0.0%" whether both are 0 or equal, never "+0.0%" beside "0%".
    if (next == base)
        return "0.0%";
    if (base == 0)
        return "new";
    char buf[32];
    const double pct = 100.0 * static_cast<double>(next - base) / std::fabs(static_cast<double>(base));
    std::snprintf(buf, sizeof buf, "%+.1f%%", pct);
    return buf;
}

std::string formatRatio(double ratio)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, ratio >= 10 ? "%.0f×" : "%.2g×", ratio);
    return buf;
}

} // namespace emberline::engine
