#include "engine/sampler/host_steal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace emberline::engine {
namespace {

constexpr int64_t kSpanNs = 1'000'000'000;

} // namespace

HostSteal::HostSteal(int64_t nowNs, const char *path) : m_fd(::open(path, O_RDONLY | O_CLOEXEC)), m_text(16384)
{
    if (read(m_older, nowNs))
        m_newer = m_older;
}

HostSteal::~HostSteal()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

bool HostSteal::read(Reading &reading, int64_t nowNs)
{
    if (m_fd < 0)
        return false;
    std::vector<char> &text = m_text; // the CPUs' lines come first; what follows them is not read
    const ssize_t n = ::pread(m_fd, text.data(), text.size() - 1, 0);
    if (n <= 0)
        return false;
    reading.ns = nowNs;
    reading.stealTicks.clear();
    // Lines "cpuN user nice system idle iowait irq softirq steal ...": the total line "cpu " is skipped.
    const char *p = text.data();
    const char *end = text.data() + n;
    while (p < end && std::strncmp(p, "cpu", 3) == 0) {
        const char *lineEnd = static_cast<const char *>(std::memchr(p, '\n', size_t(end - p)));
        if (lineEnd == nullptr)
            break;
        if (p[3] >= '0' && p[3] <= '9') {
            const char *field = p + 3;
            while (field < lineEnd && *field != ' ')
                ++field;
            uint64_t steal = 0;
            for (int i = 0; i < 8 && field < lineEnd; ++i) {
                char *next = nullptr;
                steal = std::strtoull(field, &next, 10);
                if (next == field)
                    break;
                field = next;
            }
            reading.stealTicks.push_back(steal);
        }
        p = lineEnd + 1;
    }
    return !reading.stealTicks.empty();
}

double HostSteal::share(int64_t nowNs)
{
    Reading now;
    if (!read(now, nowNs) || now.stealTicks.size() != m_older.stealTicks.size() || nowNs <= m_older.ns)
        return 0.0;
    const double tickNs = 1e9 / double(::sysconf(_SC_CLK_TCK));
    uint64_t most = 0;
    for (size_t i = 0; i < now.stealTicks.size(); ++i)
        if (now.stealTicks[i] > m_older.stealTicks[i])
            most = std::max(most, now.stealTicks[i] - m_older.stealTicks[i]);
    const double share = std::min(1.0, double(most) * tickNs / double(nowNs - m_older.ns));
    if (nowNs - m_newer.ns >= kSpanNs) {
        m_older = std::move(m_newer);
        m_newer = std::move(now);
    }
    return share;
}

} // namespace emberline::engine
